package query

import (
	"strconv"
	"strings"
)

// Equalities returns the conditions of the form <path> = <literal or
// @parameter> (either side) among the top-level AND-ed terms of WHERE, with
// the path written from the document root as "/a/b" (JSON pointer escaping;
// array positions as numbers) mapped to the value. A caller can use them to
// narrow the documents it reads: every row of the query comes from a
// document that satisfies them all. It returns nil when there are none, and
// for queries whose first source does not bind whole documents or
// subtrees of them (FROM x IN c.arr, FROM (subquery)). Paths of JOIN aliases
// are not included. Parameters are resolved from params; an unknown one
// leaves its condition out.
func (q *Query) Equalities(params Params) map[string]any {
	if q.where == nil || len(q.from) == 0 {
		return nil
	}
	src := q.from[0]
	if src.iterate || src.sub != nil {
		return nil
	}
	prefix, ok := pathOf(src.x, nil)
	if !ok {
		return nil
	}
	var out map[string]any
	var walk func(x expr)
	walk = func(x expr) {
		switch v := x.(type) {
		case *andExpr:
			walk(v.l)
			walk(v.r)
			return
		case *binaryExpr:
			if v.op != "=" {
				return
			}
			path, val, ok := equality(v.l, v.r, prefix, params)
			if !ok {
				path, val, ok = equality(v.r, v.l, prefix, params)
			}
			if !ok {
				return
			}
			if out == nil {
				out = map[string]any{}
			}
			out[path] = val
		}
	}
	walk(q.where)
	return out
}

// equality recognizes path = value with path from the first alias.
func equality(l, r expr, prefix []string, params Params) (string, any, bool) {
	var val any
	switch v := r.(type) {
	case *litExpr:
		val = v.v
	case *paramExpr:
		p, ok := params[v.name]
		if !ok {
			return "", nil, false
		}
		val = p
	default:
		return "", nil, false
	}
	if isUndef(val) {
		return "", nil, false
	}
	steps, ok := aliasPath(l)
	if !ok {
		return "", nil, false
	}
	var b strings.Builder
	for _, s := range append(append([]string{}, prefix...), steps...) {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s))
	}
	return b.String(), val, true
}

// aliasPath returns the property steps of a path that starts at the first
// FROM alias of the query (slot 0 of its own scope).
func aliasPath(x expr) ([]string, bool) {
	switch v := x.(type) {
	case *aliasRef:
		return nil, v.depth == 0 && v.slot == 0
	case *propExpr:
		steps, ok := aliasPath(v.x)
		return append(steps, v.name), ok
	case *indexExpr:
		steps, ok := aliasPath(v.x)
		s, ok2 := stepName(v.idx)
		return append(steps, s), ok && ok2
	}
	return nil, false
}

// pathOf returns the steps of the first source's collection path from the
// document root.
func pathOf(x expr, acc []string) ([]string, bool) {
	switch v := x.(type) {
	case rootRef:
		return acc, true
	case *propExpr:
		steps, ok := pathOf(v.x, acc)
		return append(steps, v.name), ok
	case *indexExpr:
		steps, ok := pathOf(v.x, acc)
		s, ok2 := stepName(v.idx)
		return append(steps, s), ok && ok2
	}
	return nil, false
}

// stepName is the path step of a constant index: a property name or an
// array position.
func stepName(x expr) (string, bool) {
	l, ok := x.(*litExpr)
	if !ok {
		return "", false
	}
	switch v := l.v.(type) {
	case string:
		return v, true
	case float64:
		if v >= 0 && v == float64(int64(v)) {
			return strconv.FormatInt(int64(v), 10), true
		}
	}
	return "", false
}
