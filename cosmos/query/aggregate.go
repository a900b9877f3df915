package query

import (
	"math"
	"slices"
	"strconv"
)

// accumulator folds the values of one aggregate over a group.
type accumulator struct {
	kind  aggKind
	count int     // COUNT: defined values; SUM, AVG: numbers
	sum   float64 // SUM, AVG
	best  any     // MIN, MAX
	has   bool    // MIN, MAX: best is set
	bad   bool    // SUM, AVG: a non-number; MIN, MAX: an array or object
}

// add folds v in. Undefined values are skipped by every aggregate.
func (a *accumulator) add(v any) {
	if isUndef(v) || a.bad {
		return
	}
	switch a.kind {
	case aggCount:
		a.count++
	case aggCountIf:
		if v == true {
			a.count++
		}
	case aggSum, aggAvg:
		n, ok := v.(float64)
		if !ok {
			a.bad = true
			return
		}
		a.sum += n
		a.count++
	case aggMin, aggMax:
		if r := typeRank(v); r == rankArray || r == rankObject {
			a.bad = true
			return
		}
		if !a.has {
			a.best, a.has = v, true
			return
		}
		c := Compare(v, a.best)
		if a.kind == aggMin && c < 0 || a.kind == aggMax && c > 0 {
			a.best = v
		}
	}
}

// result is the aggregate's value: COUNT of nothing is 0, SUM of nothing 0,
// AVG, MIN and MAX of nothing undefined; SUM and AVG over any non-number,
// and MIN and MAX over any array or object, are undefined.
func (a *accumulator) result() any {
	if a.bad {
		return Undefined
	}
	switch a.kind {
	case aggCount, aggCountIf:
		return float64(a.count)
	case aggSum:
		return a.sum
	case aggAvg:
		if a.count == 0 {
			return Undefined
		}
		return a.sum / float64(a.count)
	}
	if !a.has {
		return Undefined
	}
	return a.best
}

// group is one GROUP BY group: its key values, a copy of its first row's
// bindings (for the non-aggregate parts of the select list) and its
// accumulators.
type group struct {
	keys []any
	vals []any
	doc  any
	accs []accumulator
}

// grouper collects rows into groups, then projects one row per group.
type grouper struct {
	q      *Query
	out    *final
	index  map[string]*group
	groups []*group
	key    []byte
	keys   []any // scratch for the current row's group key values
}

// newGrouper returns the aggregating stage. Without GROUP BY there is one
// group, present even when no row arrives.
func newGrouper(q *Query, out *final) *grouper {
	g := &grouper{q: q, out: out, index: map[string]*group{}}
	if len(q.groupBy) == 0 {
		g.groups = []*group{g.newGroup(nil, nil)}
	}
	return g
}

// newGroup makes a group with fresh accumulators; e is its first row.
func (g *grouper) newGroup(keys []any, e *env) *group {
	gr := &group{keys: keys, accs: make([]accumulator, len(g.q.aggs))}
	for i, a := range g.q.aggs {
		gr.accs[i].kind = a.kind
	}
	if e != nil {
		gr.vals = slices.Clone(e.vals)
		gr.doc = e.doc
	}
	return gr
}

func (g *grouper) row(e *env) bool {
	var gr *group
	if len(g.q.groupBy) == 0 {
		gr = g.groups[0]
		if gr.vals == nil {
			gr.vals, gr.doc = slices.Clone(e.vals), e.doc
		}
	} else {
		g.keys = g.keys[:0]
		g.key = g.key[:0]
		for _, x := range g.q.groupBy {
			v := x.eval(e)
			g.keys = append(g.keys, v)
			g.key = appendKey(g.key, v)
		}
		gr = g.index[string(g.key)]
		if gr == nil {
			gr = g.newGroup(slices.Clone(g.keys), e)
			g.index[string(g.key)] = gr
			g.groups = append(g.groups, gr)
		}
	}
	for i, a := range g.q.aggs {
		gr.accs[i].add(a.arg.eval(e))
	}
	return true
}

// finish projects the groups. With one GROUP BY expression the groups come
// out in the order of their key (undefined first), as the service returns
// them; with several, in the order their first rows were read.
func (g *grouper) finish(e *env) {
	if len(g.q.groupBy) == 1 {
		slices.SortStableFunc(g.groups, func(a, b *group) int { return Compare(a.keys[0], b.keys[0]) })
	}
	for _, gr := range g.groups {
		ge := &env{vals: gr.vals, doc: gr.doc, outer: e.outer, rs: e.rs, aggVals: make([]any, len(gr.accs))}
		if ge.vals == nil {
			ge.vals = make([]any, len(e.vals))
			for i := range ge.vals {
				ge.vals[i] = Undefined
			}
		}
		for i := range gr.accs {
			ge.aggVals[i] = gr.accs[i].result()
		}
		if !g.out.put(project(g.q, ge)) {
			return
		}
	}
}

// appendKey appends an encoding of v that is the same for values Equal
// considers equal and different otherwise: objects are encoded with their
// properties sorted by name.
func appendKey(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, 'n')
	case bool:
		if x {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case float64:
		dst = append(dst, 'd')
		return strconv.AppendUint(dst, math.Float64bits(x+0), 16) // x+0 turns -0 into 0
	case string:
		dst = append(dst, 's')
		dst = strconv.AppendInt(dst, int64(len(x)), 10)
		dst = append(dst, ':')
		return append(dst, x...)
	case []any:
		dst = append(dst, '[')
		for _, e := range x {
			dst = appendKey(dst, e)
		}
		return append(dst, ']')
	case *Object:
		dst = append(dst, '{')
		for _, i := range sortedIdx(x) {
			dst = appendKey(dst, x.Keys[i])
			dst = appendKey(dst, x.Vals[i])
		}
		return append(dst, '}')
	}
	return append(dst, 'u')
}
