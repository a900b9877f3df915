package query

import (
	"slices"
)

// rowSink takes the rows that pass WHERE, in order, and passes results on.
type rowSink interface {
	// row takes the current binding and reports whether to read on.
	row(e *env) bool
	// finish is called after the last row.
	finish(e *env)
}

// final applies DISTINCT, OFFSET, LIMIT and TOP to projected rows, in
// that order, and emits them.
type final struct {
	emit     func(any) bool
	seen     map[string]struct{} // for DISTINCT
	key      []byte
	skip     int // rows OFFSET still skips
	left     int // rows LIMIT and TOP still let through; -1 for no limit
	stopped  bool
	distinct bool
}

// newFinal returns the last stage of q's pipeline.
func newFinal(q *Query, rs *runState, emit func(any) bool) *final {
	f := &final{emit: emit, left: -1, distinct: q.distinct}
	if q.distinct {
		f.seen = map[string]struct{}{}
	}
	if q.offset != nil {
		f.skip, _ = rs.count(q.offset)
		f.left, _ = rs.count(q.limit)
	}
	if q.top != nil {
		top, _ := rs.count(q.top)
		if f.left < 0 || top < f.left {
			f.left = top
		}
	}
	if f.left == 0 {
		f.stopped = true
	}
	return f
}

// put takes one projected row and reports whether more are wanted.
func (f *final) put(v any) bool {
	if f.stopped {
		return false
	}
	if isUndef(v) {
		return true
	}
	if f.distinct {
		f.key = appendKey(f.key[:0], v)
		if _, dup := f.seen[string(f.key)]; dup {
			return true
		}
		f.seen[string(f.key)] = struct{}{}
	}
	if f.skip > 0 {
		f.skip--
		return true
	}
	if !f.emit(v) {
		f.stopped = true
		return false
	}
	if f.left > 0 {
		f.left--
		if f.left == 0 {
			f.stopped = true
			return false
		}
	}
	return true
}

// streamer projects each row as it comes.
type streamer struct {
	q   *Query
	out *final
}

func (s *streamer) row(e *env) bool { return s.out.put(project(s.q, e)) }

func (s *streamer) finish(*env) {}

// sortedRow is a projected row with its ORDER BY keys.
type sortedRow struct {
	keys []any
	v    any
}

// sorter buffers rows, then sorts them by the ORDER BY keys. The sort is
// stable: rows with equal keys keep the order they were read in.
type sorter struct {
	q    *Query
	out  *final
	rows []sortedRow
}

func (s *sorter) row(e *env) bool {
	v := project(s.q, e)
	if isUndef(v) {
		return true
	}
	keys := make([]any, len(s.q.orderBy))
	for i, o := range s.q.orderBy {
		keys[i] = o.x.eval(e)
	}
	s.rows = append(s.rows, sortedRow{keys: keys, v: v})
	return true
}

func (s *sorter) finish(*env) {
	order := s.q.orderBy
	slices.SortStableFunc(s.rows, func(a, b sortedRow) int {
		for i, o := range order {
			c := Compare(a.keys[i], b.keys[i])
			if o.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	for _, r := range s.rows {
		if !s.out.put(r.v) {
			return
		}
	}
}
