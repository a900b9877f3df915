package query

import (
	"math"
	"math/rand/v2"
	"regexp"
	"time"
)

// Params are the values of a query's parameters by name, @ included
// ("@pk"), already decoded with Decode.
type Params map[string]any

// Options are the inputs of a run besides documents and parameters.
type Options struct {
	// Now is the time GetCurrentDateTime, GetCurrentTimestamp and
	// GetCurrentTicks report (the same for every row, as the service's
	// *Static variants do).
	Now time.Time
	// Corpus yields every document of the container, for the statistics
	// of FullTextScore (BM25 weighs a document against all of them, not
	// only against those the query reads). nil: the documents of the run.
	Corpus func(yield func(doc any) bool)
	// Languages are the languages of the container's full-text paths
	// ("/text" to "en-US"), DefaultLanguage that of any other text; both
	// empty: English.
	Languages       map[string]string
	DefaultLanguage string
	// UDF returns the container's user-defined function of a name, if
	// there is one: a query that calls one it does not know fails before
	// it reads a document. A function's error stops the query with it.
	UDF func(name string) (UDF, bool)
}

// UDF is a user-defined function: called with its arguments' values (never
// Undefined), it returns a value (Undefined for none).
type UDF func(args []any) (any, error)

// runState is what every expression of one run shares.
type runState struct {
	params []any
	now    time.Time
	rng    *rand.Rand

	regexps map[string]*regexp.Regexp // RegexMatch patterns compiled so far

	top             *Query // the top-level query
	corpus          func(yield func(any) bool)
	languages       map[string]string
	defaultLanguage string
	corpusStats     map[*fullTextExpr]*corpusStats // FullTextScore statistics gathered so far

	udfs map[*udfExpr]UDF // the functions of the query's calls
	err  error            // the first error of a user-defined function
}

// Run evaluates q over the documents src yields (each a decoded root
// document, in the container's order) and calls emit with each result row,
// in result order, until emit returns false. Rows that are Undefined (SELECT
// VALUE of a missing property) are not emitted. Queries without ORDER BY,
// GROUP BY, DISTINCT-after-sort or aggregates stream: rows are emitted as
// documents are read, and reading stops when emit returns false or TOP or
// LIMIT is reached. Emitted values may share memory with the documents;
// callers must not modify them. A query with FullTextScore reads
// opts.Corpus (else src a second time) for its statistics. The only errors
// are *Error: an unknown parameter, or a TOP, OFFSET or LIMIT parameter
// that is not a non-negative integer.
func (q *Query) Run(src func(yield func(doc any) bool), params Params, opts Options, emit func(row any) bool) error {
	rs := &runState{
		params: make([]any, len(q.params)),
		now:    opts.Now.UTC(),
		rng:    rand.New(rand.NewPCG(uint64(opts.Now.UnixNano()), 0x636f736d6f73)),

		top:             q,
		corpus:          opts.Corpus,
		languages:       opts.Languages,
		defaultLanguage: opts.DefaultLanguage,
	}
	if rs.corpus == nil {
		rs.corpus = src
	}
	for i, name := range q.params {
		v, ok := params[name]
		if !ok {
			s := q.paramSpan(name)
			return errAt(codeUnresolved, s, "Identifier '%s' could not be resolved.", name)
		}
		rs.params[i] = v
	}
	if len(q.udfs) > 0 {
		rs.udfs = map[*udfExpr]UDF{}
		for _, u := range q.udfs {
			var fn UDF
			ok := false
			if opts.UDF != nil {
				fn, ok = opts.UDF(u.name)
			}
			if !ok {
				return errAt(codeUnknownFunc, u.span, "Unknown user-defined function '%s'.", u.name)
			}
			rs.udfs[u] = fn
		}
	}
	if q.rank != nil && q.rank.weightsParam != nil {
		if _, ok := q.rank.withWeights(rs.params[q.rank.weightsParam.idx]); !ok {
			return errAt(codeRankWeights, q.rank.span, "%s", msgWeights)
		}
	}
	for _, c := range q.counts {
		if _, ok := rs.count(c); !ok {
			return countError(c, rs.params[c.param.idx])
		}
	}
	rs.exec(q, nil, src, func(row any) bool {
		return rs.err == nil && emit(row)
	})
	return rs.err
}

// countError is the error for a TOP, OFFSET or LIMIT value v that is not a
// non-negative integer.
func countError(c *countSpec, v any) *Error {
	return errAt(codeSemantic, c.span, "The count value of TOP, OFFSET or LIMIT must be a non-negative integer; got %s.", AppendJSON(nil, v))
}

// paramSpan finds where parameter name first appears in the query text.
func (q *Query) paramSpan(name string) span {
	for i := 0; i+len(name) <= len(q.text); i++ {
		if q.text[i:i+len(name)] == name && (i+len(name) == len(q.text) || !isIdentPart(q.text[i+len(name)])) {
			return span{i, i + len(name)}
		}
	}
	return span{0, 0}
}

// count returns the value of a TOP, OFFSET or LIMIT clause.
func (rs *runState) count(c *countSpec) (int, bool) {
	n := c.n
	if c.param != nil {
		f, ok := rs.params[c.param.idx].(float64)
		if !ok {
			return 0, false
		}
		n = f
	}
	if n < 0 || n != math.Trunc(n) || math.IsInf(n, 0) {
		return 0, false
	}
	if n > math.MaxInt32 {
		return math.MaxInt32, true
	}
	return int(n), true
}

// oneDoc is the document source of a subquery: one pass, no document.
func oneDoc(yield func(any) bool) { yield(nil) }

// execSub runs a correlated subquery in environment e.
func (rs *runState) execSub(q *Query, e *env, emit func(any) bool) {
	rs.exec(q, e, oneDoc, emit)
}

// exec runs q with the enclosing environment outer over docs and emits its
// rows until emit returns false.
func (rs *runState) exec(q *Query, outer *env, docs func(yield func(any) bool), emit func(any) bool) {
	e := &env{vals: make([]any, q.nslots), outer: outer, rs: rs}
	for i := range e.vals {
		e.vals[i] = Undefined
	}
	out := newFinal(q, rs, emit)
	var stage rowSink
	switch {
	case q.aggregate:
		stage = newGrouper(q, out)
	case q.rank != nil:
		stage = &ranker{q: q, out: out}
	case len(q.orderBy) > 0:
		stage = &sorter{q: q, out: out}
	default:
		stage = &streamer{q: q, out: out}
	}
	onRow := func() bool {
		if q.where != nil && !truthy(q.where.eval(e)) {
			return true
		}
		return stage.row(e)
	}
	switch {
	case len(q.from) == 0:
		onRow()
	case q.from[0].sub != nil && q.container:
		// SELECT ... FROM (SELECT ... FROM c) x: the inner query reads the container.
		src := &q.from[0]
		rs.exec(src.sub, e, docs, func(row any) bool {
			return rs.bindRow(q, 0, e, row, onRow)
		})
	default:
		docs(func(doc any) bool {
			e.doc = doc
			return rs.bindFrom(q, 0, e, onRow)
		})
	}
	stage.finish(e)
}

// bindFrom binds FROM source i and the ones after it for each of its values,
// calling onRow for each complete binding. It reports whether to go on.
func (rs *runState) bindFrom(q *Query, i int, e *env, onRow func() bool) bool {
	if i == len(q.from) {
		return onRow()
	}
	src := &q.from[i]
	if src.sub != nil {
		goOn := true
		rs.exec(src.sub, e, oneDoc, func(row any) bool {
			goOn = rs.bindRow(q, i, e, row, onRow)
			return goOn
		})
		return goOn
	}
	return rs.bindRow(q, i, e, src.x.eval(e), onRow)
}

// bindRow binds the value v of FROM source i (each of its elements for
// `alias IN`) and continues with the next source.
func (rs *runState) bindRow(q *Query, i int, e *env, v any, onRow func() bool) bool {
	src := &q.from[i]
	if src.iterate {
		arr, ok := v.([]any)
		if !ok {
			return true
		}
		for _, el := range arr {
			if isUndef(el) {
				continue
			}
			e.vals[src.slot] = el
			if !rs.bindFrom(q, i+1, e, onRow) {
				return false
			}
		}
		return true
	}
	if isUndef(v) {
		return true
	}
	e.vals[src.slot] = v
	return rs.bindFrom(q, i+1, e, onRow)
}

// project computes the select list's value for the current row.
func project(q *Query, e *env) any {
	switch {
	case q.star:
		return e.vals[0]
	case q.value != nil:
		return q.value.eval(e)
	}
	o := &Object{Keys: make([]string, 0, len(q.items)), Vals: make([]any, 0, len(q.items))}
	for _, it := range q.items {
		if v := it.x.eval(e); !isUndef(v) {
			o.Set(it.name, v)
		}
	}
	return o
}
