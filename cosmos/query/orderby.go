package query

import "strings"

// OrderByPath is one item of an ORDER BY clause that sorts by a property of
// the documents: its path from the document root, as an indexing policy
// writes it ("/a/b"), and whether it sorts descending.
type OrderByPath struct {
	Path string
	Desc bool
}

// OrderByPaths returns the items of the query's ORDER BY, in order, each as
// the path of a property of the first FROM source; ok is false when an item
// is some other expression, or the first source does not bind whole
// documents or subtrees of them. It returns nil and true for a query
// without ORDER BY, and for ORDER BY RANK.
func (q *Query) OrderByPaths() (paths []OrderByPath, ok bool) {
	if len(q.orderBy) == 0 {
		return nil, true
	}
	if len(q.from) == 0 || q.from[0].iterate || q.from[0].sub != nil {
		return nil, false
	}
	prefix, ok := pathOf(q.from[0].x, nil)
	if !ok {
		return nil, false
	}
	for _, it := range q.orderBy {
		steps, ok := aliasPath(it.x)
		if !ok {
			return nil, false
		}
		var b strings.Builder
		for _, s := range append(append([]string{}, prefix...), steps...) {
			b.WriteByte('/')
			b.WriteString(s)
		}
		paths = append(paths, OrderByPath{Path: b.String(), Desc: it.desc})
	}
	return paths, true
}
