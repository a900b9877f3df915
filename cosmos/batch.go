package cosmos

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// maxBatchOps is the service's limit on operations in one transactional
// batch.
const maxBatchOps = 100

// batchOp is one operation of a transactional batch.
type batchOp struct {
	kind    string // create, upsert, replace, delete, read, patch
	id      string
	ifMatch string
	body    *query.Object
	// pk is the partitionKey of a bulk operation (a JSON array in a
	// string), "" in a transactional batch, whose key is the header's.
	pk string
}

// batchResult is one operation's outcome.
type batchResult struct {
	read   bool // a read's body is sent even to a client that wants minimal writes
	status int
	etag   string
	body   []byte
}

// charge is the request charge of an operation (charge.go): a read's or a
// write's of its body, a delete's of an item of no size, nothing for an
// operation not run because another failed, 1 RU for a refusal.
func (r batchResult) charge() float64 {
	switch {
	case r.status == http.StatusFailedDependency:
		return 0
	case r.status >= 400:
		return 1
	case r.read:
		return readCharge(len(r.body))
	}
	return writeCharge(len(r.body))
}

// batchCharge is the request charge of a batch: its operations'.
func batchCharge(results []batchResult) float64 {
	var ru float64
	for _, r := range results {
		ru += r.charge()
	}
	return ru
}

// batchState is an item as the batch sees it so far.
type batchState struct {
	exists bool
	body   []byte
	etag   string
	rid    string
}

// batch answers a transactional batch (POST .../docs with
// x-ms-cosmos-is-batch-request): every operation on one partition key
// succeeds together, or none is applied and the answer is 207 with the
// failing operation's status and 424 for every other.
func (s *Server) batch(c *gin.Context, ct *container) {
	if strings.EqualFold(rqBatchAtomic.of(c), "false") {
		s.bulk(c, ct)
		return
	}
	pk, err := pointKey(c, ct)
	if err != nil {
		s.writeError(c, err)
		return
	}
	ops, err := readBatch(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var (
		results []batchResult
		puts    []core.Item
		writers []int
		failed  int
		removed bool
	)
	written, commit, err := s.change(ct, func(now time.Time, read reader) (removes []string, put []core.Item, err error) {
		results, puts, removes, writers, failed = s.plan(ct, pk, ops, now, read)
		removed = len(removes) > 0
		return removes, puts, nil
	})
	if i := uniqueRefused(err, puts, writers); i >= 0 {
		// The engine refused an operation's item for a unique key: the
		// batch fails on it, and nothing of it is stored.
		for j := range results {
			results[j] = batchResult{status: http.StatusFailedDependency}
		}
		results[i] = batchResult{status: http.StatusConflict}
		failed, removed, err = i, false, nil
	} else if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	// The service gives a batch's writes one LSN, the next of the
	// partition's, and answers with it. lapse's LSN is the core sequence
	// number, one per item stored (lsn.go), so a batch answers with its
	// first write's: the next of the container's, as the service's.
	var lsn uint64
	switch {
	case err != nil:
	case len(written) > 0:
		lsn = written[0].Seq
	case removed:
		lsn, err = s.bumpLSN(c.Request.Context(), ct.key)
	default:
		lsn = s.containerLSN(ct.key)
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	status := http.StatusOK
	if failed >= 0 {
		status = http.StatusMultiStatus
	}
	s.itemSession(c, ct, pk.canon(), lsn)
	setLSN(c, lsn)
	setCharge(c, batchCharge(results))
	writeJSON(c, status, batchBody(results, isMinimal(c)))
}

// uniqueRefused returns the operation whose item the engine refused with
// err for a unique key (core.EUNIQUE), by the item's key, among the items
// puts that operations writers wrote; -1 when err is no such refusal.
func uniqueRefused(err error, puts []core.Item, writers []int) int {
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.EUNIQUE {
		return -1
	}
	for j, it := range puts {
		if it.Key == ce.Key {
			return writers[j]
		}
	}
	return -1
}

// readBatch reads a batch body: an array of operations.
func readBatch(c *gin.Context) ([]batchOp, error) {
	b, err := readBody(c)
	if err != nil {
		return nil, err
	}
	v, err := query.Decode(b)
	arr, ok := v.([]any)
	if err != nil || !ok {
		return nil, errorf(http.StatusBadRequest, "The batch request body must be a JSON array of operations.")
	}
	if len(arr) == 0 {
		return nil, errorf(http.StatusBadRequest, "Batch request has no operations.")
	}
	if len(arr) > maxBatchOps {
		return nil, errorf(http.StatusBadRequest, "Batch request has more operations than what is supported.")
	}
	ops := make([]batchOp, len(arr))
	for i, x := range arr {
		o, ok := x.(*query.Object)
		if !ok {
			return nil, errorf(http.StatusBadRequest, "Batch operation %d is not an object.", i)
		}
		kind, _ := getString(o, "operationType")
		op := batchOp{kind: strings.ToLower(kind)}
		op.id, _ = getString(o, "id")
		op.ifMatch, _ = getString(o, "ifMatch")
		op.pk, _ = getString(o, "partitionKey")
		if body, ok := o.Get("resourceBody"); ok {
			if arr, isArr := body.([]any); isArr && op.kind == "patch" {
				body = patchBody(arr)
			}
			if op.body, ok = body.(*query.Object); !ok {
				return nil, errorf(http.StatusBadRequest, "The resourceBody of batch operation %d is not an object.", i)
			}
		}
		switch op.kind {
		case "create", "upsert", "replace", "patch":
			if op.body == nil {
				return nil, errorf(http.StatusBadRequest, "Batch operation %d (%s) has no resourceBody.", i, kind)
			}
			if op.id == "" && op.kind != "patch" {
				op.id, _ = getString(op.body, "id")
			}
		case "delete", "read":
		default:
			return nil, errorf(http.StatusBadRequest, "Batch operation %d has an unknown operationType '%s'.", i, kind)
		}
		ops[i] = op
	}
	return ops, nil
}

// plan works out every operation at now against the stored items, read
// through read, and the batch's own earlier operations. failed is the
// index of the first operation that failed, -1 when none did; then puts
// and removes are what to write, and writers[j] is the operation that
// wrote puts[j].
func (s *Server) plan(ct *container, pk partitionKey, ops []batchOp, now time.Time, read reader) (results []batchResult, puts []core.Item, removes []string, writers []int, failed int) {
	t := s.newTxn(ct, pk, now, read)
	results = make([]batchResult, len(ops))
	failed = -1
	for i, op := range ops {
		res, err := t.do(op)
		if err != nil {
			results[i] = batchResult{status: toAPIError(err).status}
			failed = i
			break
		}
		results[i] = res
	}
	if failed >= 0 {
		for i := range results {
			if i != failed {
				results[i] = batchResult{status: http.StatusFailedDependency}
			}
		}
		return results, nil, nil, nil, failed
	}
	return results, t.puts, t.removes, t.writers, -1
}

// planned is one operation's outcome and what it writes.
type planned struct {
	result batchResult
	put    *core.Item
	remove bool
}

// planOp works out one batch operation.
func (s *Server) planOp(ct *container, pk partitionKey, op batchOp, state func(string) *batchState, now time.Time) (planned, error) {
	switch op.kind {
	case "read", "delete", "replace", "patch":
		if op.id == "" {
			return planned{}, errorf(http.StatusBadRequest, "The batch operation has no id.")
		}
		st := state(op.id)
		if !st.exists {
			return planned{}, errItemNotFound()
		}
		if !ifMatch(op.ifMatch, st.etag) {
			return planned{}, errPrecondition()
		}
		switch op.kind {
		case "read":
			return planned{result: batchResult{read: true, status: http.StatusOK, etag: st.etag, body: st.body}}, nil
		case "delete":
			st.exists, st.body, st.etag = false, nil, ""
			return planned{result: batchResult{status: http.StatusNoContent}, remove: true}, nil
		case "replace":
			d, err := s.checkDoc(ct, op.body, pk, true)
			if err != nil {
				return planned{}, err
			}
			if d.id == op.id {
				return s.planWrite(ct, d, st, http.StatusOK, now)
			}
			// Another id renames the item, as a replace does (items.go).
			to := state(d.id)
			if to.exists {
				return planned{}, errConflict()
			}
			to.rid = st.rid
			to.exists = true
			p, err := s.planWrite(ct, d, to, http.StatusOK, now)
			if err != nil {
				return planned{}, err
			}
			st.exists, st.body, st.etag = false, nil, ""
			p.remove = true
			return p, nil
		}
		pr, err := readPatch(op.body)
		if err != nil {
			return planned{}, err
		}
		d, err := s.patched(ct, st.body, pk, pr, now)
		if err != nil {
			return planned{}, err
		}
		return s.planWrite(ct, d, st, http.StatusOK, now)
	}
	d, err := s.checkDoc(ct, op.body, pk, true)
	if err != nil {
		return planned{}, err
	}
	st := state(d.id)
	status := http.StatusCreated
	switch {
	case op.kind == "create" && st.exists:
		return planned{}, errConflict()
	case op.kind == "upsert" && st.exists:
		if !ifMatch(op.ifMatch, st.etag) {
			return planned{}, errPrecondition()
		}
		status = http.StatusOK
	}
	return s.planWrite(ct, d, st, status, now)
}

// planWrite prepares the write of d over st.
func (s *Server) planWrite(ct *container, d *doc, st *batchState, status int, now time.Time) (planned, error) {
	rid := ""
	if st.exists {
		rid = st.rid
	}
	it, etag, err := s.prepare(ct, d, rid, now)
	if err != nil {
		return planned{}, err
	}
	_, rid = splitMeta(it.Meta)
	st.exists, st.body, st.etag, st.rid = true, it.Body, etag, rid
	return planned{result: batchResult{status: status, etag: etag, body: it.Body}, put: &it}, nil
}

// batchBody writes the results as the service does; write results carry
// no body when the client asked for minimal responses.
func batchBody(results []batchResult, minimal bool) []byte {
	b := []byte{'['}
	for i, r := range results {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"statusCode":`...)
		b = strconv.AppendInt(b, int64(r.status), 10)
		b = append(b, `,"requestCharge":`...)
		b = strconv.AppendFloat(b, r.charge(), 'f', -1, 64)
		if r.etag != "" {
			b = append(b, `,"eTag":`...)
			b = append(b, jsonString(r.etag)...)
		}
		if r.body != nil && (!minimal || r.read) {
			b = append(b, `,"resourceBody":`...)
			b = append(b, r.body...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// bulk answers a non-atomic batch (x-ms-cosmos-batch-atomic: False), what
// the SDKs' bulk executors send a partition key range at a time: each
// operation carries its own partitionKey and succeeds or fails on its own.
// After a failure the rest still run, unless the client says
// x-ms-cosmos-batch-continue-on-error: False; then they are 424. The
// answer is 207 when an operation failed, else 200.
func (s *Server) bulk(c *gin.Context, ct *container) {
	ops, err := readBatch(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	stopOnError := strings.EqualFold(rqBatchContinueOnError.of(c), "false")
	results := make([]batchResult, len(ops))
	var commits []*core.Commit
	failed := false
	for i, op := range ops {
		if failed && stopOnError {
			results[i] = batchResult{status: http.StatusFailedDependency}
			continue
		}
		res, commit, err := s.bulkOp(ct, op)
		if err != nil {
			s.writeError(c, err)
			return
		}
		results[i] = res
		failed = failed || res.status >= 400
		if commit != nil {
			commits = append(commits, commit)
		}
	}
	for _, commit := range commits {
		if err := commit.Wait(c.Request.Context()); err != nil {
			s.writeError(c, err)
			return
		}
	}
	status := http.StatusOK
	if failed {
		status = http.StatusMultiStatus
	}
	s.itemHeaders(c, ct)
	setCharge(c, batchCharge(results))
	writeJSON(c, status, batchBody(results, isMinimal(c)))
}

// bulkOp runs one operation of a bulk request, as a batch of its own under
// its own partition key; its failure is its result, not an error.
func (s *Server) bulkOp(ct *container, op batchOp) (batchResult, *core.Commit, error) {
	v, err := query.Decode([]byte(fixBigEscapes(op.pk)))
	arr, ok := v.([]any)
	if err != nil || !ok {
		return batchResult{status: http.StatusBadRequest}, nil, nil
	}
	pk := partitionKey(arr)
	if ct.meta.PartitionKey == nil {
		pk = partitionKey{}
	} else if len(pk) != ct.meta.PartitionKey.paths() {
		return batchResult{status: http.StatusBadRequest}, nil, nil
	}
	var results []batchResult
	_, commit, err := s.change(ct, func(now time.Time, read reader) (removes []string, puts []core.Item, err error) {
		results, puts, removes, _, _ = s.plan(ct, pk, []batchOp{op}, now, read)
		return removes, puts, nil
	})
	if ae := (*apiError)(nil); errors.As(err, &ae) && ae.status == statusRetryWith {
		return batchResult{status: statusRetryWith}, nil, nil
	}
	if core.ErrorCode(err) == core.EUNIQUE {
		return batchResult{status: http.StatusConflict}, nil, nil
	}
	if err != nil {
		return batchResult{}, nil, err
	}
	return results[0], commit, nil
}

// bulkID is the id of the item an operation is about: its own, or its
// document's.
func bulkID(op batchOp) string {
	if op.id == "" && op.body != nil {
		id, _ := getString(op.body, "id")
		return id
	}
	return op.id
}
