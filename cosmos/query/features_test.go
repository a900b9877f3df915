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

func TestWholeDocumentsRowsAreTheDocuments(t *testing.T) {
	docs := []any{}
	for _, s := range []string{`{"id":"a","pk":1}`, `{"id":"b","pk":2}`, `{"id":"c","pk":1}`} {
		d, err := Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	for _, tc := range []struct {
		q           string
		whole, only bool
	}{
		{"SELECT * FROM c", true, true},
		{"SELECT * FROM root r WHERE r.pk = 1", true, true},
		{"SELECT TOP 1 * FROM c WHERE c.pk = @pk AND c.id = 'c'", true, true},
		{"SELECT * FROM c WHERE c.pk = 1 OFFSET 1 LIMIT 1", true, true},
		{"SELECT * FROM c WHERE c.pk > 1", true, false},
		{"SELECT * FROM c WHERE c.pk = 1 OR c.pk = 2", true, false},
		{"SELECT * FROM c WHERE c.pk = @missing", true, false},
		{"SELECT * FROM c ORDER BY c.id", false, true},
		{"SELECT c.id FROM c", false, true},
		{"SELECT VALUE c FROM c", false, true},
		{"SELECT * FROM c.sub", false, true},
		{"SELECT DISTINCT * FROM c", false, true},
	} {
		q, err := Parse(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		params := Params{"@pk": 1.0}
		if got := q.WholeDocuments(); got != tc.whole {
			t.Errorf("%s: WholeDocuments %v", tc.q, got)
		}
		if got := q.OnlyEqualities(params); got != tc.only {
			t.Errorf("%s: OnlyEqualities %v", tc.q, got)
		}
		if !tc.whole {
			continue
		}
		err = q.Run(func(yield func(any) bool) {
			for _, d := range docs {
				if !yield(d) {
					return
				}
			}
		}, params, Options{}, func(row any) bool {
			found := false
			for _, d := range docs {
				found = found || row == d
			}
			if !found {
				t.Errorf("%s: row %v is not one of the documents", tc.q, row)
			}
			return true
		})
		if err != nil && tc.q != "SELECT * FROM c WHERE c.pk = @missing" {
			t.Errorf("%s: %v", tc.q, err)
		}
	}
}
