package query

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Issue 26.1: the plan a client's pipeline follows, and rewritten queries
// that lapse parses once the client has put its resume condition in.
func TestIssue26_1_Plan(t *testing.T) {
	str := func(s string) *string { return &s }
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		q    string
		opt  PlanOptions
		want func(*QueryInfo)
	}{
		{q: "SELECT * FROM c WHERE c.i > 1", want: func(*QueryInfo) {}},
		{q: "SELECT * FROM c ORDER BY c.name", want: func(w *QueryInfo) {
			w.OrderBy, w.OrderByExpressions = []string{"Ascending"}, []string{"c.name"}
			w.RewrittenQuery = `SELECT c._rid, [{"item": c.name}] AS orderByItems, c AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.name ASC`
		}},
		{q: "SELECT TOP 2 r.id, r.n AS k FROM root r WHERE r.a = @a ORDER BY r.n DESC, r.id", want: func(w *QueryInfo) {
			w.Top = n(2)
			w.OrderBy, w.OrderByExpressions = []string{"Descending", "Ascending"}, []string{"r.n", "r.id"}
			w.RewrittenQuery = `SELECT TOP 2 r._rid, [{"item": r.n}, {"item": r.id}] AS orderByItems, {"id": r.id, "k": r.n} AS payload FROM root r WHERE (r.a = @a) AND ({documentdb-formattableorderbyquery-filter}) ORDER BY r.n DESC, r.id ASC`
		}},
		{q: "SELECT VALUE COUNT(1) FROM c", want: func(w *QueryInfo) {
			w.Aggregates, w.HasSelectValue = []string{"Count"}, true
			w.RewrittenQuery = `SELECT VALUE [{"item": COUNT(1)}] FROM c`
		}},
		{q: "SELECT VALUE MIN(c.i) FROM c", opt: PlanOptions{CompositeMinMax: true}, want: func(w *QueryInfo) {
			w.Aggregates, w.HasSelectValue = []string{"Min"}, true
			w.RewrittenQuery = `SELECT VALUE [{"item": {"min": MIN(c.i), "count": COUNT(c.i)}}] FROM c`
		}},
		{q: "SELECT VALUE MIN(c.i) FROM c", want: func(w *QueryInfo) {
			w.Aggregates, w.HasSelectValue = []string{"Min"}, true
			w.RewrittenQuery = `SELECT VALUE [{"item": MIN(c.i)}] FROM c`
		}},
		{q: "SELECT c.pk, AVG(c.i) AS mean FROM c GROUP BY c.pk", want: func(w *QueryInfo) {
			w.GroupByExpressions, w.GroupByAliases = []string{"c.pk"}, []string{"pk", "mean"}
			w.GroupByAliasToAggregateType = map[string]*string{"pk": nil, "mean": str("Average")}
			w.RewrittenQuery = `SELECT [{"item": c.pk}] AS groupByItems, {"pk": c.pk, "mean": {"item": {"sum": SUM(c.i), "count": COUNT(c.i)}}} AS payload FROM c GROUP BY c.pk`
		}},
		{q: "SELECT DISTINCT VALUE c.pk FROM c", want: func(w *QueryInfo) {
			w.DistinctType, w.HasSelectValue = "Unordered", true
		}},
		{q: "SELECT * FROM c OFFSET @o LIMIT 3", want: func(w *QueryInfo) {
			w.Offset, w.Limit = n(4), n(3)
			w.RewrittenQuery = `SELECT * FROM c OFFSET 0 LIMIT 7`
		}},
	} {
		q, err := Parse(tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		got, ok := q.Plan(Params{"@a": 1.0, "@o": 4.0}, tc.opt)
		if !ok {
			t.Errorf("%s: not planned", tc.q)
			continue
		}
		want := QueryInfo{DistinctType: "None", OrderBy: []string{}, OrderByExpressions: []string{}, GroupByExpressions: []string{},
			GroupByAliases: []string{}, Aggregates: []string{}, GroupByAliasToAggregateType: map[string]*string{}}
		tc.want(&want)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.q, d)
		}
		if got.RewrittenQuery != "" {
			if _, err := Parse(strings.ReplaceAll(got.RewrittenQuery, OrderByFilter, "true")); err != nil {
				t.Errorf("%s: rewritten query %q: %v", tc.q, got.RewrittenQuery, err)
			}
		}
	}
	for _, q := range []string{
		"SELECT COUNT(1) + 1 AS n FROM c",                                // an aggregate inside an expression
		"SELECT TOP 1 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'a')", // hybrid search
	} {
		p, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Plan(nil, PlanOptions{}); ok {
			t.Errorf("%s: planned, want left to the one range", q)
		}
	}
}
