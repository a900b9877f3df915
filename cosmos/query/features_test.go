package query

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFeatures(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"SELECT * FROM c WHERE c.a = 1", nil},
		{"SELECT c.id, c.a FROM c JOIN t IN c.tags", nil},
		{"SELECT TOP 5 * FROM c", []string{"Top"}},
		{"SELECT * FROM c ORDER BY c.id", []string{"OrderBy"}},
		{"SELECT * FROM c OFFSET 1 LIMIT 2", []string{"OffsetAndLimit"}},
		{"SELECT VALUE COUNT(1) FROM c", []string{"Aggregate"}},
		{"SELECT c.k, COUNT(1) AS n FROM c GROUP BY c.k", []string{"Aggregate", "GroupBy"}},
		{"SELECT DISTINCT VALUE c.k FROM c", []string{"Distinct"}},
		{"SELECT VALUE (SELECT VALUE COUNT(1) FROM t IN c.tags) FROM c", nil},
	} {
		q, err := Parse(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, q.Features()); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.q, d)
		}
	}
}
