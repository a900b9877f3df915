package query

import (
	"strconv"
	"strings"
)

// HybridSearchQueryInfo is the plan the gateway gives a client's query
// pipeline for ORDER BY RANK (hybrid search), in place of a queryInfo:
// first the statistics query that every partition key range answers with
// its document count, and for each FullTextScore its total word count and
// the number of documents holding each term; then, with the summed
// statistics put in their placeholders, one component query per score,
// each range's rows ordered by that score; the client ranks the rows of
// every component, fuses the ranks (RRF, with componentWeights), skips
// and takes. Field names and values are the ones the JS and Python SDKs
// read.
type HybridSearchQueryInfo struct {
	GlobalStatisticsQuery             string      `json:"globalStatisticsQuery"`
	ComponentQueryInfos               []QueryInfo `json:"componentQueryInfos"`
	ComponentWithoutPayloadQueryInfos []QueryInfo `json:"componentWithoutPayloadQueryInfos"`
	ProjectionQueryInfo               *QueryInfo  `json:"projectionQueryInfo"`
	ComponentWeights                  []float64   `json:"componentWeights"`
	Skip                              *int        `json:"skip"`
	Take                              *int        `json:"take"`
	RequiresGlobalStatistics          bool        `json:"requiresGlobalStatistics"`
}

// The placeholders of a component query that the client replaces with
// the summed statistics: the document count, and for component i its
// total word count and its array of hit counts.
const (
	HybridDocumentCount = "{documentdb-formattablehybridsearchquery-totaldocumentcount}"
	hybridWordCount     = "{documentdb-formattablehybridsearchquery-totalwordcount-"
	hybridHitCounts     = "{documentdb-formattablehybridsearchquery-hitcountsarray-"
)

// The stand-ins of a score a document lacks, the worst score in either
// order: a FullTextScore is never below 0, a VectorDistance never below
// -1 unless it is a dot product, hence the largest float the gateway
// writes.
const (
	missingFullText = "-1"
	missingLowest   = "-1.79769e+308"
	missingHighest  = "1.79769e+308"
)

// componentRowsPerTake is how many rows each component query asks of a
// range for each row the query returns: the gateway's plan for TOP 10
// asks each range for the first 120 of each score.
const componentRowsPerTake = 12

// HybridOptions are what a hybrid search plan depends on besides the
// query.
type HybridOptions struct {
	// SkipOrderByRewrite is the client's HybridSearchSkipOrderByRewrite
	// feature (the JS SDK's): with several components, each component
	// query returns its rows' _rid, payload and componentScores side by
	// side, ordered by its score but without the ORDER BY rewrite, and a
	// score that ranks ascending is negated so that every one ranks
	// highest first. With one component, componentScores is left empty.
	SkipOrderByRewrite bool
}

// hybridPart is one score of ORDER BY RANK as the plan writes it.
type hybridPart struct {
	expr     string // _FullTextScore(...) or _VectorScore(...)
	fullText bool
	desc     bool
	natural  bool     // a VectorDistance in its own order: ORDER BY writes no ASC or DESC
	path     string   // FullTextScore's text
	terms    []string // FullTextScore's search strings
}

// HybridPlan returns the plan of an ORDER BY RANK query (HybridSearchQueryInfo),
// and false when q is not one or lapse does not plan it (its source is not
// the container's documents themselves, TOP or LIMIT is not a count).
func (q *Query) HybridPlan(params Params, opt HybridOptions) (info HybridSearchQueryInfo, ok bool) {
	rc := q.rank
	if rc == nil || q.aggregate || len(q.groupBy) > 0 {
		return info, false
	}
	root, ok := q.rootAlias()
	if !ok {
		return info, false
	}
	calls := []*callExpr{}
	if c, ok := rc.x.(*callExpr); ok && !strings.EqualFold(c.name, "RRF") {
		calls = append(calls, c)
	} else if ok {
		for _, a := range c.args {
			if ac, ok := a.(*callExpr); ok {
				calls = append(calls, ac)
			}
		}
	}
	if len(calls) != len(rc.parts) {
		return info, false
	}
	rparts := rc.parts
	if rc.weightsParam != nil {
		if rparts, ok = rc.withWeights(params[rc.weightsParam.name]); !ok {
			return info, false
		}
	}
	var parts []hybridPart
	for i, c := range calls {
		args := splitList(q.callArgsText(c))
		p := hybridPart{desc: rparts[i].desc}
		if isVectorScore(c.name) {
			p.expr = "_VectorScore(" + strings.Join(args, ", ") + ")"
			p.natural = p.desc == similarityFirst(c)
		} else {
			if len(args) < 2 {
				return info, false
			}
			p.fullText, p.path, p.terms = true, args[0], args[1:]
			if len(args) == 2 && strings.HasPrefix(args[1], "[") && strings.HasSuffix(args[1], "]") {
				p.terms = splitList(args[1][1 : len(args[1])-1])
			}
			p.terms = firstWords(p.terms, params)
			n := strconv.Itoa(i)
			p.expr = "_FullTextScore(" + p.path + ", [" + strings.Join(p.terms, ", ") + "], " +
				HybridDocumentCount + ", " + hybridWordCount + n + "}, " + hybridHitCounts + n + "})"
		}
		parts = append(parts, p)
	}
	count := func(c *countSpec) (*int, bool) {
		if c == nil {
			return nil, true
		}
		v, ok := (&runState{params: paramValues(q, params)}).count(c)
		return &v, ok
	}
	top, ok1 := count(q.top)
	off, ok2 := count(q.offset)
	lim, ok3 := count(q.limit)
	if !ok1 || !ok2 || !ok3 {
		return info, false
	}
	info.Take, info.Skip = top, nil
	if lim != nil {
		info.Take, info.Skip = lim, off
	}
	info.ComponentQueryInfos = []QueryInfo{}
	info.ComponentWithoutPayloadQueryInfos = []QueryInfo{}
	info.ComponentWeights = []float64{}
	if rc.weights {
		for _, p := range rparts {
			info.ComponentWeights = append(info.ComponentWeights, p.weight)
		}
	}
	source := q.text[q.at.from:q.at.fromEnd]

	// The statistics: the documents, and per FullTextScore its words and
	// the documents holding each term.
	var b strings.Builder
	b.WriteString("SELECT COUNT(1) AS documentCount, [")
	first := true
	for _, p := range parts {
		if !p.fullText {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		info.RequiresGlobalStatistics = true
		b.WriteString(`{"totalWordCount": SUM(_FullTextWordCount(` + p.path + `)), "hitCounts": [`)
		for j, t := range p.terms {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("COUNTIF(FullTextContains(" + p.path + ", " + t + "))")
		}
		b.WriteString("]}")
	}
	b.WriteString("] AS fullTextStatistics\n" + source)
	info.GlobalStatisticsQuery = b.String()

	rows := ""
	if info.Take != nil {
		n := *info.Take
		if info.Skip != nil {
			n += *info.Skip
		}
		rows = "TOP " + strconv.Itoa(n*componentRowsPerTake) + " "
	}
	// scores writes the componentScores of a row, each score with the
	// worst value in its order when the document has none.
	scores := func(b *strings.Builder, negate bool) {
		b.WriteString("[")
		for i, p := range parts {
			if i > 0 {
				b.WriteString(", ")
			}
			missing := missingHighest
			switch {
			case p.desc && p.fullText:
				missing = missingFullText
			case p.desc:
				missing = missingLowest
			}
			s := "(" + p.expr + " ?? " + missing + ")"
			if negate && !p.desc {
				s = "(-1 * " + s + ")"
			}
			b.WriteString(s)
		}
		b.WriteString("]")
	}
	skipRewrite := opt.SkipOrderByRewrite && len(parts) > 1
	for _, p := range parts {
		ci := QueryInfo{
			DistinctType: "None", OrderBy: []string{}, OrderByExpressions: []string{},
			GroupByExpressions: []string{}, GroupByAliases: []string{}, Aggregates: []string{},
			GroupByAliasToAggregateType: map[string]*string{},
		}
		// The gateway orders by the bare score, written without ASC or
		// DESC when it is a VectorDistance in its own order. lapse orders
		// an ascending score with its stand-in, for a document without the
		// score sorts first ascending, and ORDER BY RANK ranks it last.
		by, order := p.expr, " DESC"
		switch {
		case !p.desc:
			by, order = "("+p.expr+" ?? "+missingHighest+")", " ASC"
		case p.natural:
			order = ""
		}
		var b strings.Builder
		b.WriteString("SELECT " + rows + root + "._rid, ")
		if skipRewrite {
			q.writePayload(&b, root)
			b.WriteString(" AS payload, ")
			scores(&b, true)
			b.WriteString(" AS componentScores\n" + source)
			if q.where != nil {
				b.WriteString("\nWHERE " + q.textOf(q.at.where))
			}
			b.WriteString("\nORDER BY " + by + order)
			ci.RewrittenQuery = b.String()
			info.ComponentQueryInfos = append(info.ComponentQueryInfos, ci)
			continue
		}
		if info.Take != nil {
			n := *info.Take
			if info.Skip != nil {
				n += *info.Skip
			}
			n *= componentRowsPerTake
			ci.Top = &n
		}
		ci.OrderBy = []string{"Ascending"}
		if p.desc {
			ci.OrderBy = []string{"Descending"}
		}
		ci.OrderByExpressions = []string{by}
		ci.HasNonStreamingOrderBy = true
		b.WriteString(`[{"item": ` + by + `}] AS orderByItems, {"payload": `)
		q.writePayload(&b, root)
		b.WriteString(`, "componentScores": `)
		if opt.SkipOrderByRewrite {
			b.WriteString("[]")
		} else {
			scores(&b, false)
		}
		b.WriteString("} AS payload\n" + source + "\nWHERE ")
		if q.where != nil {
			b.WriteString("(" + q.textOf(q.at.where) + ") AND ")
		}
		b.WriteString("(" + OrderByFilter + ")\nORDER BY " + by + order)
		ci.RewrittenQuery = b.String()
		info.ComponentQueryInfos = append(info.ComponentQueryInfos, ci)
	}
	return info, true
}

// callArgsText is the text between the parentheses of call c.
func (q *Query) callArgsText(c *callExpr) string {
	t := q.text[c.start:c.end]
	open := strings.IndexByte(t, '(')
	if open < 0 || !strings.HasSuffix(t, ")") {
		return ""
	}
	return t[open+1 : len(t)-1]
}

// paramValues is params in the order of q's parameter slots.
func paramValues(q *Query, params Params) []any {
	out := make([]any, len(q.params))
	for i, name := range q.params {
		out[i] = params[name]
	}
	return out
}

// firstWords returns the search strings of a FullTextScore as they are
// scored: a string of several words, a literal or a parameter's value, by
// its first word (fulltext.go), so that the statistics the client gathers
// are the ones the whole query uses; other strings as they are.
func firstWords(strs []string, params Params) []string {
	out := make([]string, 0, len(strs))
	for _, s := range strs {
		text, quote := "", ""
		switch {
		case strings.HasPrefix(s, "@"):
			text, _ = params[s].(string)
			quote = `"`
		case len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0]:
			text, quote = s[1:len(s)-1], s[:1]
		}
		words := strings.Fields(text)
		if len(words) < 2 || strings.ContainsAny(text, `\"'`) {
			out = append(out, s)
			continue
		}
		out = append(out, quote+words[0]+quote)
	}
	return out
}
