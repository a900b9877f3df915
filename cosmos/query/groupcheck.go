package query

import (
	"slices"
	"strings"
)

// checkGrouped reports an error when the select list of an aggregating
// query refers to the FROM aliases other than inside an aggregate or
// through one of the GROUP BY expressions: such a value differs from row to
// row of a group, and the service rejects it.
func checkGrouped(q *Query) error {
	var exprs []expr
	if q.value != nil {
		exprs = append(exprs, q.value)
	}
	for _, it := range q.items {
		exprs = append(exprs, it.x)
	}
	for _, x := range exprs {
		if bad := ungrouped(x, q.groupBy); bad != nil {
			return errAt(codeSemantic, aliasOf(bad).span, "Property reference '%s' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause.", describe(bad))
		}
	}
	return nil
}

// ungrouped returns the first reference to an alias of the query in x that
// is neither inside an aggregate nor inside a subexpression equal to a
// GROUP BY expression, or nil.
func ungrouped(x expr, groupBy []expr) expr {
	for _, g := range groupBy {
		if sameExpr(x, g) {
			return nil
		}
	}
	var kids []expr
	switch v := x.(type) {
	case *aliasRef:
		if v.depth == 0 {
			return v
		}
	case *aggExpr, *subqueryExpr:
		return nil
	case *propExpr:
		// Report the whole path rather than its alias.
		if bad := ungrouped(v.x, groupBy); bad != nil {
			return x
		}
	case *indexExpr:
		kids = []expr{v.x, v.idx}
	case *unaryExpr:
		kids = []expr{v.x}
	case *binaryExpr:
		kids = []expr{v.l, v.r}
	case *andExpr:
		kids = []expr{v.l, v.r}
	case *orExpr:
		kids = []expr{v.l, v.r}
	case *betweenExpr:
		kids = []expr{v.x, v.lo, v.hi}
	case *inExpr:
		kids = append([]expr{v.x}, v.list...)
	case *likeExpr:
		kids = []expr{v.x, v.pattern}
	case *condExpr:
		kids = []expr{v.c, v.a, v.b}
	case *coalesceExpr:
		kids = []expr{v.a, v.b}
	case *objectExpr:
		kids = v.vals
	case *arrayExpr:
		kids = v.elems
	case *callExpr:
		kids = v.args
	case *fullTextExpr:
		kids = append([]expr{v.text}, v.search...)
	}
	for _, k := range kids {
		if bad := ungrouped(k, groupBy); bad != nil {
			return bad
		}
	}
	return nil
}

// sameExpr reports whether two bound expressions are written the same way
// (function names in any case). Subqueries never match.
func sameExpr(a, b expr) bool {
	switch x := a.(type) {
	case *litExpr:
		y, ok := b.(*litExpr)
		return ok && Equal(x.v, y.v)
	case *paramExpr:
		y, ok := b.(*paramExpr)
		return ok && x.name == y.name
	case *aliasRef:
		y, ok := b.(*aliasRef)
		return ok && x.depth == y.depth && x.slot == y.slot
	case rootRef:
		_, ok := b.(rootRef)
		return ok
	case *propExpr:
		y, ok := b.(*propExpr)
		return ok && x.name == y.name && sameExpr(x.x, y.x)
	case *indexExpr:
		y, ok := b.(*indexExpr)
		return ok && sameExpr(x.x, y.x) && sameExpr(x.idx, y.idx)
	case *unaryExpr:
		y, ok := b.(*unaryExpr)
		return ok && x.op == y.op && sameExpr(x.x, y.x)
	case *binaryExpr:
		y, ok := b.(*binaryExpr)
		return ok && x.op == y.op && sameExpr(x.l, y.l) && sameExpr(x.r, y.r)
	case *andExpr:
		y, ok := b.(*andExpr)
		return ok && sameExpr(x.l, y.l) && sameExpr(x.r, y.r)
	case *orExpr:
		y, ok := b.(*orExpr)
		return ok && sameExpr(x.l, y.l) && sameExpr(x.r, y.r)
	case *betweenExpr:
		y, ok := b.(*betweenExpr)
		return ok && x.not == y.not && sameExpr(x.x, y.x) && sameExpr(x.lo, y.lo) && sameExpr(x.hi, y.hi)
	case *inExpr:
		y, ok := b.(*inExpr)
		return ok && x.not == y.not && sameExpr(x.x, y.x) && sameList(x.list, y.list)
	case *likeExpr:
		y, ok := b.(*likeExpr)
		return ok && x.not == y.not && x.escape == y.escape && x.hasEscape == y.hasEscape && sameExpr(x.x, y.x) && sameExpr(x.pattern, y.pattern)
	case *condExpr:
		y, ok := b.(*condExpr)
		return ok && sameExpr(x.c, y.c) && sameExpr(x.a, y.a) && sameExpr(x.b, y.b)
	case *coalesceExpr:
		y, ok := b.(*coalesceExpr)
		return ok && sameExpr(x.a, y.a) && sameExpr(x.b, y.b)
	case *objectExpr:
		y, ok := b.(*objectExpr)
		return ok && slices.Equal(x.keys, y.keys) && sameList(x.vals, y.vals)
	case *arrayExpr:
		y, ok := b.(*arrayExpr)
		return ok && sameList(x.elems, y.elems)
	case *callExpr:
		y, ok := b.(*callExpr)
		return ok && strings.EqualFold(x.name, y.name) && sameList(x.args, y.args)
	case *aggExpr:
		y, ok := b.(*aggExpr)
		return ok && x.kind == y.kind && sameExpr(x.arg, y.arg)
	}
	return false
}

// sameList reports whether two expression lists are the same.
func sameList(a, b []expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameExpr(a[i], b[i]) {
			return false
		}
	}
	return true
}

// aliasOf returns the alias a reference starts from.
func aliasOf(x expr) *aliasRef {
	for {
		switch v := x.(type) {
		case *aliasRef:
			return v
		case *propExpr:
			x = v.x
		default:
			return &aliasRef{}
		}
	}
}

// describe writes a reference back as query text, for messages.
func describe(x expr) string {
	switch v := x.(type) {
	case *aliasRef:
		return v.name
	case *propExpr:
		return describe(v.x) + "." + v.name
	}
	return "?"
}
