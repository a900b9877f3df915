package cosmos

import (
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// Paging: a page holds at most x-ms-max-item-count rows (defaultPageSize
// when absent; -1 lets the service choose, up to maxPageBytes).
const (
	defaultPageSize = 100
	maxPageBytes    = 4 << 20
)

// isQuery reports whether a POST is a query: Go sends x-ms-documentdb-query,
// JS and REST x-ms-documentdb-isquery; both send application/query+json.
// The Python SDK's query-plan request has only its own header and
// application/json.
func isQuery(c *gin.Context) bool {
	return strings.EqualFold(rqQuery.of(c), "true") ||
		strings.EqualFold(rqIsQuery.of(c), "true") ||
		strings.EqualFold(rqIsQueryPlanRequest.of(c), "true") ||
		strings.HasPrefix(rqContentType.of(c), "application/query+json")
}

// queryRequest is a query body: {"query": text, "parameters": [{"name",
// "value"}]}.
type queryRequest struct {
	text   string
	params query.Params
	q      *query.Query
}

// readQuery reads and parses a query body.
func readQuery(c *gin.Context) (*queryRequest, error) {
	o, err := readObject(c)
	if err != nil {
		return nil, err
	}
	text, ok := getString(o, "query")
	if !ok {
		return nil, errorf(http.StatusBadRequest, "The query in the request body is missing or is not a string.")
	}
	qr := &queryRequest{text: text, params: query.Params{}}
	if v, ok := o.Get("parameters"); ok && v != nil {
		arr, ok := v.([]any)
		if !ok {
			return nil, errorf(http.StatusBadRequest, "The query parameters must be an array.")
		}
		for _, p := range arr {
			po, ok := p.(*query.Object)
			if !ok {
				return nil, errorf(http.StatusBadRequest, "A query parameter must be an object with a name and a value.")
			}
			name, ok := getString(po, "name")
			if !ok {
				return nil, errorf(http.StatusBadRequest, "A query parameter must be an object with a name and a value.")
			}
			val, ok := po.Get("value")
			if !ok {
				val = query.Undefined
			}
			qr.params[name] = val
		}
	}
	if rqRangeID.of(c) != "" {
		// The Python SDK sends the component queries of a hybrid search
		// plan that needs no statistics as the plan has them, with the
		// ORDER BY resume condition's placeholder still in: a client's
		// pipeline resumes from the start, so it stands for true.
		text = strings.ReplaceAll(text, query.OrderByFilter, "true")
		qr.text = text
	}
	if qr.q, err = query.Parse(text); err != nil {
		return nil, err
	}
	return qr, nil
}

// run runs the request's query over docs (encoded JSON documents, in order)
// of container ct (nil for other resources) and calls emit with each
// result row, encoded, until emit returns false.
func (s *Server) run(qr *queryRequest, ct *container, docs [][]byte, emit func(row []byte) bool) error {
	return s.runAt(qr, ct, docs, nil, emit)
}

// runAt is run that calls at(i), if set, before it reads docs[i]: a query
// that streams (no query.Features) emits the rows of a document before it
// reads the next, so at tells which document a row comes from.
func (s *Server) runAt(qr *queryRequest, ct *container, docs [][]byte, at func(i int), emit func(row []byte) bool) error {
	opts, err := s.queryOptions(ct, qr.q)
	if err != nil {
		return err
	}
	var (
		decodeErr error
		last      any // the document yielded last, and its text
		lastRaw   []byte
	)
	src := func(yield func(any) bool) {
		for i, d := range docs {
			if at != nil {
				at(i)
			}
			v, err := query.Decode(d)
			if err != nil {
				decodeErr = err
				return
			}
			last, lastRaw = v, d
			if !yield(v) {
				return
			}
		}
	}
	whole := qr.q.WholeDocuments()
	var buf []byte
	err = qr.q.Run(src, qr.params, opts, func(row any) bool {
		if whole && row == last {
			// The row is the stored document: send its stored text.
			return emit(lastRaw)
		}
		buf = query.AppendJSON(buf[:0], row)
		return emit(append([]byte(nil), buf...))
	})
	if err == nil {
		err = decodeErr
	}
	return err
}

// queryResources answers a query over a feed of resources (databases,
// containers, offers), in one page.
func (s *Server) queryResources(c *gin.Context, rid, field string, docs [][]byte) {
	qr, err := readQuery(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var rows [][]byte
	if err := s.run(qr, nil, docs, func(row []byte) bool { rows = append(rows, row); return true }); err != nil {
		s.writeError(c, err)
		return
	}
	writeFeed(c, rid, field, rows, "")
}

// pageSize reads x-ms-max-item-count: 0 for "as many as fit".
func pageSize(c *gin.Context) (int, error) {
	h := rqMaxItemCount.of(c)
	if h == "" {
		return defaultPageSize, nil
	}
	n, err := strconv.Atoi(h)
	if err != nil || n < -1 || n == 0 {
		return 0, errorf(http.StatusBadRequest, "Invalid value '%s' for header x-ms-max-item-count.", h)
	}
	if n == -1 {
		return 0, nil
	}
	return n, nil
}

// pageFull reports whether a page of n rows of bytes bytes has no room for
// a row of next bytes: size rows, or with size 0 (as many as fit)
// maxPageBytes, though never fewer than one row.
func pageFull(size, n, bytes, next int) bool {
	if size > 0 {
		return n == size
	}
	return n > 0 && bytes+next > maxPageBytes
}

// A query's continuation says where its next page starts. For a query that
// streams (no query.Features: rows come in the container's order, a
// document's rows together), it is a position: the Seq of a document and
// how many of its rows were returned, "lapse-at:SEQ.N". Rows returned
// earlier that are deleted or expire before the next page do not shift
// it, as they do not shift the service's own continuations. For the
// others, whose result is worked out whole for every page (ORDER BY,
// aggregates, ...), it is the number of its rows returned, "lapse:N".
const (
	continuationPrefix = "lapse:"
	positionPrefix     = "lapse-at:"
)

// position is where a streaming query's next page starts: at the first
// document whose Seq is seq or more, past its first rows rows if its Seq
// is seq.
type position struct {
	seq  uint64
	rows int
}

func (p position) String() string {
	return positionPrefix + itoa(p.seq) + "." + strconv.Itoa(p.rows)
}

// readContinuation reads x-ms-continuation: the rows to skip or, for a
// streaming query, the position to go on from.
func readContinuation(c *gin.Context, text string, streams bool) (skip int, at position, err error) {
	h := rqContinuation.of(c)
	bad := errorf(http.StatusBadRequest, "Invalid Continuation Token")
	switch {
	case h == "":
		return 0, position{}, nil
	case streams && strings.HasPrefix(h, positionPrefix):
		seq, rows, ok := strings.Cut(strings.TrimPrefix(h, positionPrefix), ".")
		at.seq, err = strconv.ParseUint(seq, 10, 64)
		if err == nil {
			at.rows, err = strconv.Atoi(rows)
		}
		if !ok || err != nil || at.rows < 0 {
			return 0, position{}, bad
		}
		return 0, at, nil
	case strings.HasPrefix(h, continuationPrefix):
		count, of, _ := strings.Cut(strings.TrimPrefix(h, continuationPrefix), ".")
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 {
			return 0, position{}, bad
		}
		if of != "" && of != textHash(text) {
			// A count of rows of another query: a client's pipeline that
			// resumes an ORDER BY from its own token sends the range's
			// token with the query narrowed by its resume condition, which
			// already starts where the client stopped (issue 26.1).
			return 0, position{}, nil
		}
		return n, position{}, nil
	}
	return 0, position{}, bad
}

// scope is the items a query or feed reads: one partition, a prefix of a
// hierarchical key, one item, or all.
type scope struct {
	pk      partitionKey // the partition key of group or key
	group   string       // one partition's canonical key
	prefix  string       // a prefix of hierarchical keys
	key     string       // one item's core key
	all     bool
	partial bool
	// rng, when not nil, is the range of EPKs a request addressed to one
	// partition key range reads (ranges.go); def says how to hash.
	rng  *epkRange
	def  *pkDef
	epks map[string]bool // rng.holds by group, as worked out
}

// holds reports whether the items of group are in scope: under its
// prefix, and in its range.
func (sc *scope) holds(group string) bool {
	if sc.partial && !inPrefix(group, sc.prefix) {
		return false
	}
	if sc.rng == nil {
		return true
	}
	in, ok := sc.epks[group]
	if !ok {
		in = sc.rng.holds(epkOf(sc.def, keyOfGroup(group)))
		if sc.epks == nil {
			sc.epks = map[string]bool{}
		}
		sc.epks[group] = in
	}
	return in
}

// itemScope works out which items a request reads: the partition of its
// key header, a prefix of it, or, with no header, the partition (and item)
// the query's WHERE pins down, else every partition.
func (s *Server) itemScope(c *gin.Context, ct *container, qr *queryRequest) (scope, error) {
	sc, err := s.keyScope(c, ct, qr)
	if err != nil {
		return sc, err
	}
	r, ok, err := ct.requestRange(c)
	if err != nil {
		return scope{}, err
	}
	if ok {
		sc.rng = &r
		sc.def = ct.meta.PartitionKey
	}
	return sc, nil
}

// keyScope is itemScope by the partition key alone.
func (s *Server) keyScope(c *gin.Context, ct *container, qr *queryRequest) (scope, error) {
	pk, present, err := parseKeyHeader(c.Request)
	if err != nil {
		return scope{}, err
	}
	def := ct.meta.PartitionKey
	var eq map[string]any
	if qr != nil {
		eq = qr.q.Equalities(qr.params)
	}
	id, hasID := eq["/id"].(string)
	if present && def == nil {
		pk, present = partitionKey{}, true
	}
	if !present && def != nil && eq != nil {
		pinned := make(partitionKey, 0, def.paths())
		for _, p := range def.Paths {
			// The gateway routes by a filter's key value, but not by null:
			// such a query is cross-partition (the Python SDK's tests).
			v, ok := eq[p]
			if !ok || v == nil {
				break
			}
			pinned = append(pinned, v)
		}
		if len(pinned) == def.paths() {
			pk, present = pinned, true
		}
	}
	if !present && def == nil {
		pk, present = partitionKey{}, true
	}
	switch {
	case !present:
		// A query addressed to one partition key range (a client's
		// pipeline) is not cross-partition.
		if qr != nil {
			if err := crossPartitionAllowed(c); err != nil {
				return scope{}, err
			}
		}
		return scope{all: true}, nil
	case len(pk) < def.paths():
		return scope{pk: pk, prefix: pk.prefix(), partial: true}, nil
	case len(pk) > def.paths() && def != nil:
		return scope{}, errKeyComponents()
	case hasID:
		return scope{pk: pk, group: pk.canon(), key: itemKey(pk.canon(), id)}, nil
	}
	return scope{pk: pk, group: pk.canon()}, nil
}

// crossPartitionAllowed is the gateway's refusal of a query that reads
// more than one partition key when the client did not allow that, with
// x-ms-documentdb-query-enablecrosspartition, or addressed one partition key
// range (a client's pipeline). It has no substatus: 1004 would tell the
// client to plan the query and run it itself, and this refusal is the
// client's to see (the Python SDK's own tests expect it to surface).
func crossPartitionAllowed(c *gin.Context) error {
	if strings.EqualFold(rqEnableCrossPartition.of(c), "true") ||
		rqRangeID.of(c) != "" {
		return nil
	}
	return errorf(http.StatusBadRequest, "Cross partition query is required but disabled. Please set x-ms-documentdb-query-enablecrosspartition to true, specify x-ms-documentdb-partitionkey, or revise your query to avoid this exception.")
}

// collect returns the bodies of the items in scope sc of container ct whose
// Seq is at least from, in Seq order.
func (s *Server) collect(ct *container, sc scope, from uint64) (docs [][]byte, seqs []uint64, err error) {
	now := s.now()
	add := func(it *core.Item) bool {
		if it.Seq >= from && sc.holds(it.Group) {
			docs = append(docs, it.Body)
			seqs = append(seqs, it.Seq)
		}
		return true
	}
	switch {
	case sc.key != "":
		it, ok, err := s.cfg.Engine.Get(now, ct.key, sc.key)
		if err != nil || !ok {
			return nil, nil, err
		}
		add(&it)
		return docs, seqs, nil
	case sc.partial:
		err := s.cfg.Engine.Scan(now, ct.key, from, add)
		return docs, seqs, err
	case sc.all:
		err := s.cfg.Engine.Scan(now, ct.key, from, add)
		return docs, seqs, err
	}
	err = s.cfg.Engine.ScanGroup(now, ct.key, sc.group, add)
	return docs, seqs, err
}

// queryItems answers a query of a container's items, a page at a time.
func (s *Server) queryItems(c *gin.Context, ct *container) {
	start := time.Now()
	qr, err := readQuery(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	// At debug level, each query and whom it is for: the plan request, a
	// client pipeline's partition key range, or the gateway.
	s.log.Debug("cosmos query", "path", c.Request.URL.Path, "plan", rqIsQueryPlanRequest.of(c) != "",
		"range", rqRangeID.of(c), "query", qr.text)
	if strings.EqualFold(rqIsQueryPlanRequest.of(c), "true") {
		if err := supportedFeatures(c, qr.q); err != nil {
			s.writeError(c, err)
			return
		}
		writeJSON(c, http.StatusOK, s.queryPlan(c, ct, qr))
		return
	}
	if s.refuseUnindexedOrderBy(c, ct, qr.q) {
		return
	}
	sc, err := s.itemScope(c, ct, qr)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if sc.all && len(qr.q.Features()) > 0 && rqRangeID.of(c) == "" {
		// As the gateway, before it reads a continuation (the JS SDK sends
		// its own composite token first): a cross-partition query that needs a client's
		// pipeline is refused with its plan, which the SDKs then follow
		// (issue 26.1). What lapse does not plan it runs whole for the
		// SDKs with a pipeline; azcosmos, which has none, gets the
		// refusal as from the service.
		plan, planned := s.queryPlanOf(c, ct, qr)
		if planned || gatewayOnly(c) {
			e := errorf(http.StatusBadRequest, "The provided cross partition query can not be directly served by the gateway. This is a first chance (internal) exception that all newer clients will know how to handle gracefully. This exception is traced, but unless you see it bubble up as an exception (which only happens on older SDK clients), then you can safely ignore this message.")
			e.substatus = 1004
			if planned {
				e.info = string(plan)
			}
			s.writeError(c, e)
			return
		}
	}
	size, err := pageSize(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	streams := len(qr.q.Features()) == 0
	skip, at, err := readContinuation(c, qr.text, streams)
	if err != nil {
		s.writeError(c, err)
		return
	}
	docs, seqs, err := s.collect(ct, sc, at.seq)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var rows [][]byte
	seen, bytes, more := 0, 0, false
	// cur is the position of the next row: its document's Seq and how
	// many rows of that document came before it.
	var cur position
	onDoc := func(i int) { cur = position{seq: seqs[i]} }
	take := func(row []byte) bool {
		if cur.seq == at.seq && cur.rows < at.rows {
			cur.rows++ // returned by an earlier page
			return true
		}
		seen++
		if seen <= skip {
			return true
		}
		if pageFull(size, len(rows), bytes, len(row)) {
			more = true
			return false
		}
		rows = append(rows, row)
		bytes += len(row)
		cur.rows++
		return true
	}
	if implied(ct, sc, qr) {
		// SELECT * with no condition but the partition key and id the
		// scope has already applied: the result is the documents, as
		// stored, with nothing to evaluate.
		for i, d := range docs {
			onDoc(i)
			if !take(d) {
				break
			}
		}
	} else if err := s.runAt(qr, ct, docs, onDoc, take); err != nil {
		s.writeError(c, err)
		return
	}
	// Across partitions the service does not look ahead: a full page
	// always has a continuation, so the last page may be empty (as the
	// official emulator pages 20 items 5 at a time in 5 pages).
	// A client's pipeline reads one partition key range at a time and
	// is told where the range ends.
	if sc.all && size > 0 && len(rows) == size && rqRangeID.of(c) == "" {
		more = true
	}
	continuation := ""
	switch {
	case more && streams:
		continuation = cur.String()
	case more:
		continuation = continuationPrefix + strconv.Itoa(skip+len(rows)) + "." + textHash(qr.text)
	}
	h := c.Writer.Header()
	h.Set("x-ms-documentdb-query-metrics", queryMetrics(len(docs), len(rows), bytes, time.Since(start)))
	if strings.EqualFold(rqPopulateIndexMetrics.of(c), "true") {
		h.Set("x-ms-cosmos-index-utilization", base64.StdEncoding.EncodeToString([]byte(
			`{"UtilizedSingleIndexes":[],"PotentialSingleIndexes":[],"UtilizedCompositeIndexes":[],"PotentialCompositeIndexes":[]}`)))
	}
	s.itemHeaders(c, ct)
	writeFeed(c, ct.rid(), "Documents", rows, continuation)
}

// queryPlan answers a client's query plan request as the gateway does
// (issue 26.1): what the client's pipeline merges across partition key
// ranges and the query it sends each range (query.Plan). What lapse does
// not plan gets passThroughPlan. The JS SDK asks for a plan beside every
// query and follows it when it needs one (forceQueryPlan); the Python and
// Java SDKs ask when the gateway refuses a query (substatus 1004).
func (s *Server) queryPlan(c *gin.Context, ct *container, qr *queryRequest) []byte {
	out, ok := s.queryPlanOf(c, ct, qr)
	if !ok {
		return []byte(passThroughPlan)
	}
	return out
}

// queryPlanOf is the plan of query qr, and false when lapse does not plan
// it (query.Plan).
func (s *Server) queryPlanOf(c *gin.Context, ct *container, qr *queryRequest) ([]byte, bool) {
	if hybrid, ok := qr.q.HybridPlan(qr.params, query.HybridOptions{
		SkipOrderByRewrite: hasFeature(c, "HybridSearchSkipOrderByRewrite"),
	}); ok {
		// ORDER BY RANK: the plan is hybridSearchQueryInfo, queryInfo is
		// null, and the client reads every range (its statistics are the
		// whole container's).
		out, err := json.Marshal(struct {
			Version     int                         `json:"partitionedQueryExecutionInfoVersion"`
			QueryInfo   *query.QueryInfo            `json:"queryInfo"`
			Hybrid      query.HybridSearchQueryInfo `json:"hybridSearchQueryInfo"`
			QueryRanges []queryRange                `json:"queryRanges"`
		}{2, nil, hybrid, []queryRange{s.planRange(c, ct, qr)}})
		return out, err == nil
	}
	v, _ := strconv.ParseFloat(rqQueryVersion.of(c), 64)
	info, ok := qr.q.Plan(qr.params, query.PlanOptions{CompositeMinMax: v >= 1.4})
	if !ok {
		return nil, false
	}
	out, err := json.Marshal(struct {
		Version     int             `json:"partitionedQueryExecutionInfoVersion"`
		QueryInfo   query.QueryInfo `json:"queryInfo"`
		QueryRanges []queryRange    `json:"queryRanges"`
	}{2, info, []queryRange{s.planRange(c, ct, qr)}})
	return out, err == nil
}

// planRange is the EPKs a query reads, as the gateway narrows a plan's
// queryRanges: the EPK of the partition key it names (in its header or
// by equalities on every path of the key), the EPKs under a prefix of a
// hierarchical key, else all. A client's pipeline visits only the ranges
// they overlap.
func (s *Server) planRange(c *gin.Context, ct *container, qr *queryRequest) queryRange {
	all := queryRange{Min: "", Max: epkMax, MinInclusive: true}
	def := ct.meta.PartitionKey
	if def == nil {
		return all
	}
	sc, err := s.keyScope(c, ct, qr)
	switch {
	case err != nil || sc.all:
		return all
	case sc.partial:
		e := epkOf(def, sc.pk)
		return queryRange{Min: e, Max: e + epkMax, MinInclusive: true}
	}
	e := epkOf(def, sc.pk)
	return queryRange{Min: e, Max: e, MinInclusive: true, MaxInclusive: true}
}

// supportedFeatures refuses, as the gateway does, the plan of a query that
// needs a feature the client's pipeline does not have (the Python SDK
// has no GROUP BY): the features it sent in
// x-ms-cosmos-supported-query-features, when it sent any.
func supportedFeatures(c *gin.Context, q *query.Query) error {
	h := rqSupportedQueryFeatures.of(c)
	if h == "" {
		return nil
	}
	have := map[string]bool{}
	for _, f := range strings.Split(h, ",") {
		have[strings.ToLower(strings.TrimSpace(f))] = true
	}
	var missing []string
	for _, f := range q.PlanFeatures() {
		if !have[strings.ToLower(f)] {
			missing = append(missing, "Query contained "+f+", which the calling client does not support.")
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return errorf(http.StatusBadRequest, "Query contains 1 or more unsupported features. Upgrade your SDK to a version that does support the requested features:\r\n%s", strings.Join(missing, "\r\n"))
}

// hasFeature reports whether the client named query feature f in its
// x-ms-cosmos-supported-query-features.
func hasFeature(c *gin.Context, f string) bool {
	for _, g := range strings.Split(rqSupportedQueryFeatures.of(c), ",") {
		if strings.EqualFold(strings.TrimSpace(g), f) {
			return true
		}
	}
	return false
}

// textHash names a query text in a continuation that counts its rows.
func textHash(text string) string {
	h := fnv.New32a()
	h.Write([]byte(text))
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}

// queryRange is a range of effective partition keys in a query plan.
type queryRange struct {
	Min          string `json:"min"`
	Max          string `json:"max"`
	MinInclusive bool   `json:"isMinInclusive"`
	MaxInclusive bool   `json:"isMaxInclusive"`
}

// passThroughPlan answers a client's query plan request for a query lapse
// does not plan: nothing for the client to do but read the one partition
// key range, to which lapse answers with the query's whole result
// (ORDER BY, aggregates and all, run here).
const passThroughPlan = `{"partitionedQueryExecutionInfoVersion":2,"queryInfo":{"distinctType":"None","top":null,"offset":null,"limit":null,` +
	`"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},` +
	`"rewrittenQuery":"","hasSelectValue":false,"hasNonStreamingOrderBy":false},` +
	`"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}`

// gatewayOnly reports whether a query comes from a client that leaves it
// all to the gateway: azcosmos (x-ms-documentdb-query) and not a client
// query pipeline addressing a partition key range. The service's gateway
// refuses such a client's cross-partition queries that need every
// partition's results at once (ORDER BY, aggregates, ...), and azcosmos
// surfaces the error. Clients with a pipeline of their own (the JS SDK, and
// others, with x-ms-documentdb-isquery) run those queries themselves on
// the real service; lapse runs them for them, with the same results.
func gatewayOnly(c *gin.Context) bool {
	return rqQuery.of(c) != "" && rqRangeID.of(c) == ""
}

// implied reports whether query qr, run over the items of scope sc (one
// partition or one item), keeps every one of them unchanged: SELECT * whose
// WHERE only asks for the scope's own partition key values and id.
func implied(ct *container, sc scope, qr *queryRequest) bool {
	if sc.all || sc.partial || !qr.q.WholeDocuments() || len(qr.q.Features()) > 0 || !qr.q.OnlyEqualities(qr.params) {
		return false
	}
	def := ct.meta.PartitionKey
	for path, v := range qr.q.Equalities(qr.params) {
		if path == "/id" {
			id, ok := v.(string)
			if !ok || sc.key == "" || itemKey(sc.group, id) != sc.key {
				return false
			}
			continue
		}
		i := def.index(path)
		if i < 0 || i >= len(sc.pk) || (partitionKey{v}).canon() != (partitionKey{sc.pk[i]}).canon() {
			return false
		}
	}
	return true
}

// queryMetrics writes x-ms-documentdb-query-metrics as the service does.
func queryMetrics(retrieved, output, outputBytes int, took time.Duration) string {
	ms := strconv.FormatFloat(float64(took.Microseconds())/1000, 'f', 2, 64)
	return "totalExecutionTimeInMs=" + ms + ";queryCompileTimeInMs=0.00;queryLogicalPlanBuildTimeInMs=0.00;queryPhysicalPlanBuildTimeInMs=0.00;queryOptimizationTimeInMs=0.00;" +
		"VMExecutionTimeInMs=" + ms + ";indexLookupTimeInMs=0.00;instructionCount=0;documentLoadTimeInMs=0.00;systemFunctionExecuteTimeInMs=0.00;userFunctionExecuteTimeInMs=0.00;" +
		"retrievedDocumentCount=" + strconv.Itoa(retrieved) + ";retrievedDocumentSize=0;outputDocumentCount=" + strconv.Itoa(output) +
		";outputDocumentSize=" + strconv.Itoa(outputBytes) + ";writeOutputTimeInMs=0.00;indexUtilizationRatio=1.00"
}

// itoa writes n in decimal.
func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
