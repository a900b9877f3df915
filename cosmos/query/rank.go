package query

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// ORDER BY RANK orders by a score: FullTextScore (BM25, highest first),
// VectorDistance (most similar first), or RRF of several of them
// (reciprocal rank fusion, optionally weighted). The errors and their
// codes are the service's; codeRank stands where its code is not known.
const (
	codeRankScore     = "SC2221" // ORDER BY RANK without a scoring call
	codeRankIn        = "SC2223" // FROM x IN y
	codeRankJoin      = "SC2224" // JOIN
	codeRankSubquery  = "SC2225" // a subquery in FROM
	codeRankNested    = "SC2228" // ORDER BY RANK in a subquery
	codeRankWeights   = "SC2229" // bad RRF weights
	codeScoreOutside  = "SC2240" // FullTextScore outside ORDER BY RANK
	codeRank          = "SC2221"
	rrfK              = 60 // RRF's constant: a rank r weighs 1/(60+r)
	msgScoreOutside   = "The FullTextScore function is only allowed in the ORDER BY RANK clause."
	msgRankScore      = "The ORDER BY RANK clause must be followed by a VectorDistance and/or a FullTextScore function call."
	msgScoreTermsList = "The second argument of the FullTextScore function must be a non-empty array of string literals."
)

// rankClause is ORDER BY RANK x: x as written, and the components it
// ranks by once bound.
type rankClause struct {
	x       expr
	parts   []rankPart // one for a score, several for RRF
	weights bool       // RRF was given weights
	// weightsParam is RRF's weights when a parameter gives them: parts'
	// weights and orders are then those of its value (withWeights).
	weightsParam *paramExpr
	span         // from ORDER to the end of x
}

// rankPart is one score of the ranking: its expression, whether higher
// values rank first, and its RRF weight.
type rankPart struct {
	x      expr
	desc   bool
	weight float64
}

// isRank reports whether ORDER BY is followed by the word RANK and then a
// ranking expression (not RANK as an alias: RANK.x, RANK ASC, RANK, ...).
func (p *parser) isRank() bool {
	t, next := p.peek(), p.peekAt(1)
	if t.kind != tokIdent || t.kw != kwNone || !strings.EqualFold(t.str, "RANK") {
		return false
	}
	switch {
	case next.kind == tokEOF:
		return false
	case next.kind == tokOp:
		return next.str == "("
	case next.kind == tokIdent:
		return next.kw == kwNone || next.kw == kwUdf
	}
	return false
}

// rankClause parses RANK x after ORDER BY (start is where ORDER is). A
// sort order after x is an error.
func (p *parser) rankClause(start int) (*rankClause, error) {
	p.advance()
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	rc := &rankClause{x: x, span: span{start, p.toks[p.i-1].end}}
	if p.isKw(kwAsc) || p.isKw(kwDesc) {
		t := p.advance()
		return nil, errAt(codeRank, span{start, t.end}, "Specifying a sort order (ASC or DESC) in the ORDER BY RANK clause is not allowed.")
	}
	return rc, nil
}

// bindRank checks where q's ORDER BY RANK stands and binds its scores.
func (b *binder) bindRank(q *Query, sc *scope) error {
	rc := q.rank
	switch {
	case q.sub:
		return errAt(codeRankNested, rc.span, "The ORDER BY RANK clause is not supported in subqueries.")
	case len(q.from) > 1:
		return errAt(codeRankJoin, span{q.from[0].start, q.from[len(q.from)-1].end}, "The JOIN operator is not allowed with the ORDER BY RANK clause.")
	case len(q.from) == 1 && q.from[0].iterate:
		return errAt(codeRankIn, q.from[0].span, "The FROM clause with the IN operator is not allowed with the ORDER BY RANK clause.")
	case len(q.from) == 1 && q.from[0].sub != nil:
		return errAt(codeRankSubquery, q.from[0].span, "Subqueries in the FROM clause are not allowed with the ORDER BY RANK clause.")
	case q.distinct:
		return errAt(codeRank, rc.span, "The DISTINCT keyword is not allowed with the ORDER BY RANK clause.")
	}
	c, ok := rc.x.(*callExpr)
	if !ok {
		return errAt(codeRankScore, rc.span, msgRankScore)
	}
	if !strings.EqualFold(c.name, "RRF") {
		x, err := b.bindScore(c, sc, rc)
		if err != nil {
			return err
		}
		rc.parts = []rankPart{{x: x, desc: scoreFirst(c), weight: 1}}
		return nil
	}
	args := c.args
	var weights *arrayExpr
	if n := len(args); n > 0 {
		switch w := args[n-1].(type) {
		case *arrayExpr:
			weights, args = w, args[:n-1]
		case *paramExpr:
			rc.weightsParam, rc.weights, args = w, true, args[:n-1]
		}
	}
	if len(args) < 2 {
		return errAt(codeRankScore, rc.span, msgRankScore)
	}
	for _, a := range args {
		ac, ok := a.(*callExpr)
		if !ok {
			return errAt(codeRankScore, rc.span, msgRankScore)
		}
		if strings.EqualFold(ac.name, "RRF") {
			return errAt(codeUnknownFunc, ac.span, "'%s' is not a recognized built-in function name.", ac.name)
		}
		x, err := b.bindScore(ac, sc, rc)
		if err != nil {
			return err
		}
		rc.parts = append(rc.parts, rankPart{x: x, desc: scoreFirst(ac), weight: 1})
	}
	if weights != nil {
		if len(weights.elems) != len(rc.parts) {
			return errAt(codeRankWeights, rc.span, "%s", msgWeights)
		}
		for i, el := range weights.elems {
			w, ok := numberLiteral(el)
			if !ok {
				return errAt(codeRankWeights, rc.span, "%s", msgWeights)
			}
			// A negative weight ranks its score the other way round.
			if w < 0 {
				rc.parts[i].desc = !rc.parts[i].desc
			}
			rc.parts[i].weight = math.Abs(w)
		}
		rc.weights = true
	}
	return nil
}

// weightsValue reads RRF weights given as a value: an array of one number
// per score.
func weightsValue(v any, n int) ([]float64, bool) {
	arr, ok := v.([]any)
	if !ok || len(arr) != n {
		return nil, false
	}
	out := make([]float64, n)
	for i, el := range arr {
		if out[i], ok = el.(float64); !ok {
			return nil, false
		}
	}
	return out, true
}

// withWeights returns rc's parts with the weights of its weights
// parameter, whose value is v: a negative weight ranks its score the
// other way round, by its magnitude.
func (rc *rankClause) withWeights(v any) ([]rankPart, bool) {
	if rc.weightsParam == nil {
		return rc.parts, true
	}
	ws, ok := weightsValue(v, len(rc.parts))
	if !ok {
		return nil, false
	}
	parts := slices.Clone(rc.parts)
	for i, w := range ws {
		if w < 0 {
			parts[i].desc = !parts[i].desc
		}
		parts[i].weight = math.Abs(w)
	}
	return parts, true
}

// msgWeights is the service's message for RRF weights that are not a
// literal array of one number per score.
const msgWeights = "The last parameter of the RRF function is an optional array of weights. When present, it must be a literal array of numbers, one for each of the component scores used for the RRF function. The length of this array must be the same as the number of the component scores."

// numberLiteral returns the value of a number literal, signed or not.
func numberLiteral(x expr) (float64, bool) {
	switch v := x.(type) {
	case *litExpr:
		n, ok := v.v.(float64)
		return n, ok
	case *unaryExpr:
		n, ok := numberLiteral(v.x)
		if !ok || v.op != "-" && v.op != "+" {
			return 0, false
		}
		if v.op == "-" {
			n = -n
		}
		return n, true
	}
	return 0, false
}

// bindScore binds one scoring call of ORDER BY RANK: FullTextScore or
// VectorDistance.
func (b *binder) bindScore(c *callExpr, sc *scope, rc *rankClause) (expr, error) {
	switch strings.ToUpper(c.name) {
	case "FULLTEXTSCORE", "VECTORDISTANCE":
		b.inRank = true
		x, err := b.bind(c, sc)
		b.inRank = false
		return x, err
	}
	return nil, errAt(codeRankScore, rc.span, msgRankScore)
}

// scoreFirst reports whether a score ranks its highest values first: all
// but euclidean VectorDistance, whose smallest distances are the closest.
func scoreFirst(c *callExpr) bool {
	if strings.EqualFold(c.name, "VectorDistance") {
		return similarityFirst(c)
	}
	return true
}

// rankedRow is a projected row with its scores and tie-break key.
type rankedRow struct {
	scores []any
	rid    string
	v      any
}

// ranker buffers the rows of an ORDER BY RANK query, then orders them by
// their score, or by the RRF of their scores' ranks. Rows that rank the
// same keep the order of their documents' _rid, as the service's are.
type ranker struct {
	q    *Query
	out  *final
	rows []rankedRow
}

func (r *ranker) row(e *env) bool {
	v := project(r.q, e)
	if isUndef(v) {
		return true
	}
	row := rankedRow{v: v, scores: make([]any, len(r.q.rank.parts))}
	for i, p := range r.q.rank.parts {
		row.scores[i] = p.x.eval(e)
	}
	if o, ok := e.doc.(*Object); ok {
		rid, _ := o.Get("_rid")
		row.rid, _ = rid.(string)
	}
	r.rows = append(r.rows, row)
	return true
}

func (r *ranker) finish(e *env) {
	parts := r.q.rank.parts
	if p := r.q.rank.weightsParam; p != nil {
		// Run has checked the parameter's value.
		parts, _ = r.q.rank.withWeights(e.rs.params[p.idx])
	}
	slices.SortStableFunc(r.rows, func(a, b rankedRow) int { return strings.Compare(a.rid, b.rid) })
	if len(parts) == 1 {
		slices.SortStableFunc(r.rows, func(a, b rankedRow) int {
			return byScore(a.scores[0], b.scores[0], parts[0].desc)
		})
	} else {
		fused := make([]float64, len(r.rows))
		order := make([]int, len(r.rows))
		for i, p := range parts {
			for j := range order {
				order[j] = j
			}
			slices.SortStableFunc(order, func(a, b int) int {
				return byScore(r.rows[a].scores[i], r.rows[b].scores[i], p.desc)
			})
			// Dense ranks: equal scores share a rank, the next score
			// takes the next one.
			rank := 1
			for k, j := range order {
				if k > 0 && byScore(r.rows[order[k-1]].scores[i], r.rows[j].scores[i], p.desc) != 0 {
					rank++
				}
				fused[j] += p.weight / float64(rrfK+rank)
			}
		}
		idx := make([]int, len(r.rows))
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(fused[b], fused[a]) })
		sorted := make([]rankedRow, len(r.rows))
		for k, j := range idx {
			sorted[k] = r.rows[j]
		}
		r.rows = sorted
	}
	for _, row := range r.rows {
		if !r.out.put(row.v) {
			return
		}
	}
}

// byScore orders two scores, the better first: higher ones when desc.
// A score that is not a number ranks after every number.
func byScore(a, b any, desc bool) int {
	x, okA := a.(float64)
	y, okB := b.(float64)
	switch {
	case !okA || !okB:
		return cmp.Compare(boolRank(okA), boolRank(okB))
	case desc:
		return cmp.Compare(y, x)
	}
	return cmp.Compare(x, y)
}

// boolRank is 0 for a number, 1 for anything else.
func boolRank(isNumber bool) int {
	if isNumber {
		return 0
	}
	return 1
}
