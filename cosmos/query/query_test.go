package query

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// MustParse parses a query or fails the test.
func MustParse(tb testing.TB, text string) *Query {
	tb.Helper()
	q, err := Parse(text)
	if err != nil {
		tb.Fatalf("Parse(%q): %v", text, err)
	}
	return q
}

// MustRun runs q over docs and returns its rows as JSON texts.
func MustRun(tb testing.TB, q *Query, docs []any, params Params) []string {
	tb.Helper()
	var rows []string
	err := q.Run(sliceSource(docs), params, Options{Now: corpusNow}, func(row any) bool {
		rows = append(rows, string(AppendJSON(nil, row)))
		return true
	})
	if err != nil {
		tb.Fatal(err)
	}
	return rows
}

// sliceSource yields docs in order.
func sliceSource(docs []any) func(yield func(any) bool) {
	return func(yield func(any) bool) {
		for _, d := range docs {
			if !yield(d) {
				return
			}
		}
	}
}

func TestRunStreams(t *testing.T) {
	// Queries without sorting, grouping or aggregates emit each row before
	// the next document is read, and stop reading when emit says so.
	docs := MustDocs(t, "people")
	for _, c := range []struct {
		name  string
		query string
		reads int // documents read when emit stops at the first row
	}{
		{"Filter", "SELECT VALUE c.id FROM c WHERE c.pk = 'south'", 3},
		{"Join", "SELECT VALUE t FROM c JOIN t IN c.tags", 1},
		{"Distinct", "SELECT DISTINCT VALUE c.city FROM c", 1},
		{"OffsetLimit", "SELECT VALUE c.id FROM c OFFSET 2 LIMIT 10", 3},
		{"Top", "SELECT TOP 1 VALUE c.id FROM c", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := MustParse(t, c.query)
			reads := 0
			src := func(yield func(any) bool) {
				for _, d := range docs {
					reads++
					if !yield(d) {
						return
					}
				}
			}
			err := q.Run(src, nil, Options{}, func(any) bool { return false })
			if err != nil {
				t.Fatal(err)
			}
			if reads != c.reads {
				t.Errorf("read %d documents, want %d", reads, c.reads)
			}
		})
	}
}

func TestRunTopStopsReading(t *testing.T) {
	q := MustParse(t, "SELECT TOP 2 VALUE c.id FROM c")
	reads := 0
	src := func(yield func(any) bool) {
		for i := 0; ; i++ {
			reads++
			if !yield(&Object{Keys: []string{"id"}, Vals: []any{float64(i)}}) {
				return
			}
		}
	}
	var rows []any
	if err := q.Run(src, nil, Options{}, func(v any) bool { rows = append(rows, v); return true }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{0.0, 1.0}, rows); diff != "" || reads != 2 {
		t.Errorf("reads %d, rows (-want +got):\n%s", reads, diff)
	}
}

func TestRunIsDeterministicAndConcurrent(t *testing.T) {
	// One parsed query may run many times at once; each run gives the
	// same rows (callers page by skipping rows).
	docs := MustDocs(t, "people")
	queries := []string{
		"SELECT c.id, c.age FROM c ORDER BY c.age DESC",
		"SELECT c.city, COUNT(1) AS n FROM c GROUP BY c.city",
		"SELECT DISTINCT VALUE t FROM c JOIN t IN c.tags",
		"SELECT c.id, ARRAY(SELECT VALUE k.name FROM k IN c.kids) AS kids FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = @t)",
		"SELECT VALUE RegexMatch(c.city, '^[LN]') FROM c",
	}
	params := Params{"@t": "math"}
	for _, text := range queries {
		q := MustParse(t, text)
		want := MustRun(t, q, docs, params)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if diff := cmp.Diff(want, MustRun(t, q, docs, params)); diff != "" {
					t.Errorf("%s: runs differ (-first +later):\n%s", text, diff)
				}
			})
		}
		wg.Wait()
	}
}

func TestRunDoesNotModifyDocuments(t *testing.T) {
	docs := MustDocs(t, "people")
	before := fmt.Sprint(MustRun(t, MustParse(t, "SELECT * FROM c"), docs, nil))
	for _, text := range []string{
		"SELECT c.id, c.name FROM c ORDER BY c.name.last",
		"SELECT VALUE {n: c.name, t: ARRAY_CONCAT(c.tags, ['x'])} FROM c",
		"SELECT c.city, MAX(c.name) AS m FROM c GROUP BY c.city",
		"SELECT VALUE ARRAY_SLICE(c.tags, 1) FROM c",
	} {
		MustRun(t, MustParse(t, text), docs, nil)
	}
	if after := fmt.Sprint(MustRun(t, MustParse(t, "SELECT * FROM c"), docs, nil)); after != before {
		t.Errorf("documents changed:\nbefore %s\nafter  %s", before, after)
	}
}

func TestRunNow(t *testing.T) {
	q := MustParse(t, "SELECT VALUE [GetCurrentDateTime(), GetCurrentTimestamp(), GetCurrentTicks()]")
	var got any
	now := time.Date(2001, 2, 3, 4, 5, 6, 700_000_000, time.FixedZone("X", 3600))
	if err := q.Run(sliceSource(nil), nil, Options{Now: now}, func(v any) bool { got = v; return true }); err != nil {
		t.Fatal(err)
	}
	want := []any{"2001-02-03T03:05:06.7000000Z", 981169506700.0, 9811695067000000.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	_, err := Parse("SELECT * FROMM c")
	var qe *Error
	if !errors.As(err, &qe) {
		t.Fatalf("Parse error %T is not *Error", err)
	}
	if diff := cmp.Diff(&Error{Code: "SC1001", Start: 9, End: 14, Message: "Syntax error, incorrect syntax near 'FROMM'."}, qe); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, want := qe.Error(), "SC1001 at 9-14: Syntax error, incorrect syntax near 'FROMM'."; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	err = MustParse(t, "SELECT * FROM c WHERE c.a = @a").Run(sliceSource(nil), nil, Options{}, func(any) bool { return true })
	if !errors.As(err, &qe) || qe.Code != codeUnresolved {
		t.Errorf("Run with a missing parameter: %v", err)
	}
}

func TestEqualities(t *testing.T) {
	params := Params{"@pk": "p", "@id": "x", "@n": 3.0}
	for _, c := range []struct {
		name  string
		query string
		want  map[string]any
	}{
		{"PointRead", "SELECT * FROM c WHERE c.id = @id AND c.pk = @pk", map[string]any{"/id": "x", "/pk": "p"}},
		{"LiteralOnEitherSide", "SELECT * FROM c WHERE 'x' = c.id AND c.n = 3", map[string]any{"/id": "x", "/n": 3.0}},
		{"NestedPathsAndBrackets", "SELECT * FROM r WHERE r.a.b = 1 AND r['c/d']['e~f'] = @n AND r.arr[2] = true", map[string]any{"/a/b": 1.0, "/c~1d/e~0f": 3.0, "/arr/2": true}},
		{"NestedAnds", "SELECT * FROM c WHERE (c.a = 1 AND (c.b = null AND c.c > 2))", map[string]any{"/a": 1.0, "/b": nil}},
		{"OrIsNotAnEquality", "SELECT * FROM c WHERE c.a = 1 OR c.b = 2", nil},
		{"NotEqualIsNot", "SELECT * FROM c WHERE c.a != 1", nil},
		{"PathToPath", "SELECT * FROM c WHERE c.a = c.b", nil},
		{"FunctionIsNot", "SELECT * FROM c WHERE LOWER(c.a) = 'x'", nil},
		{"UnknownParameterLeftOut", "SELECT * FROM c WHERE c.a = @nope AND c.b = 2", map[string]any{"/b": 2.0}},
		{"UndefinedLeftOut", "SELECT * FROM c WHERE c.a = undefined", nil},
		{"NoWhere", "SELECT * FROM c", nil},
		{"JoinKeepsRootConditions", "SELECT VALUE t FROM c JOIN t IN c.tags WHERE c.pk = @pk AND t = 'a'", map[string]any{"/pk": "p"}},
		{"FromSubtree", "SELECT * FROM c.address a WHERE a.city = 'Oslo'", map[string]any{"/address/city": "Oslo"}},
		{"FromIn", "SELECT * FROM t IN c.tags WHERE t.x = 1", nil},
		{"FromSubquery", "SELECT * FROM (SELECT * FROM c) s WHERE s.x = 1", nil},
		{"SubqueryInside", "SELECT * FROM c WHERE c.id = 'a' AND EXISTS(SELECT VALUE 1 FROM t IN c.tags WHERE t = 'x')", map[string]any{"/id": "a"}},
		{"ObjectValue", "SELECT * FROM c WHERE c.o = @o", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := MustParse(t, c.query).Equalities(params)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkRunPartitionFilter(b *testing.B) {
	docs := benchDocs(b, 10_000)
	q := MustParse(b, "SELECT * FROM c WHERE c.pk = @pk")
	params := Params{"@pk": "tenant-0042"}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := q.Run(sliceSource(docs), params, Options{}, func(any) bool { n++; return true }); err != nil {
			b.Fatal(err)
		}
		if n != 100 {
			b.Fatalf("%d rows, want 100", n)
		}
	}
}

func BenchmarkRunPointQuery(b *testing.B) {
	docs := benchDocs(b, 10_000)
	q := MustParse(b, "SELECT * FROM c WHERE c.id = @id AND c.pk = @pk")
	params := Params{"@id": "doc-4242", "@pk": "tenant-0042"}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := q.Run(sliceSource(docs), params, Options{}, func(any) bool { n++; return true }); err != nil {
			b.Fatal(err)
		}
		if n != 1 {
			b.Fatalf("%d rows, want 1", n)
		}
	}
}

func BenchmarkRunOrderBy(b *testing.B) {
	docs := benchDocs(b, 10_000)
	q := MustParse(b, "SELECT TOP 10 c.id, c.totals.gross FROM c ORDER BY c.totals.gross DESC")
	b.ReportAllocs()
	for b.Loop() {
		if err := q.Run(sliceSource(docs), nil, Options{}, func(any) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRunGroupBy(b *testing.B) {
	docs := benchDocs(b, 10_000)
	q := MustParse(b, "SELECT c.pk, COUNT(1) AS n, SUM(c.totals.gross) AS g FROM c GROUP BY c.pk")
	b.ReportAllocs()
	for b.Loop() {
		if err := q.Run(sliceSource(docs), nil, Options{}, func(any) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	const text = "SELECT c.id, c.name, ARRAY(SELECT VALUE t FROM t IN c.tags WHERE t != 'x') AS tags FROM c JOIN k IN c.kids WHERE c.pk = @pk AND (c.age BETWEEN 20 AND 40 OR STARTSWITH(c.name, 'A', true)) ORDER BY c.age DESC OFFSET 10 LIMIT 20"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// benchDocs decodes n variants of benchDoc spread over 100 partition keys,
// with ids doc-0 ... doc-(n-1).
func benchDocs(tb testing.TB, n int) []any {
	tb.Helper()
	base, err := Decode([]byte(benchDoc))
	if err != nil {
		tb.Fatal(err)
	}
	docs := make([]any, n)
	for i := range docs {
		o := base.(*Object)
		c := &Object{Keys: append([]string(nil), o.Keys...), Vals: append([]any(nil), o.Vals...)}
		c.Set("id", fmt.Sprintf("doc-%d", i))
		c.Set("pk", fmt.Sprintf("tenant-%04d", i%100))
		totals := &Object{Keys: []string{"gross"}, Vals: []any{float64(i % 977)}}
		c.Set("totals", totals)
		docs[i] = c
	}
	return docs
}
