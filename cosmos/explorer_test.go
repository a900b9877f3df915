package cosmos_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// rows runs a data-explorer query and returns its rows as text.
func (f *fixture) rows(name, q string, max int) ([]string, error) {
	f.tb.Helper()
	rows, err := f.s.Query(context.Background(), name, q, max)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, r := range rows {
		out = append(out, string(r))
	}
	return out, nil
}

// The data explorer's query runs across every partition with ORDER BY and
// aggregates computed in full, never sees an expired item even before the
// sweep removes it, and reports a syntax error as EINVALID with the
// service's text.
// rule: CO-6
func TestExplorerQueryAcrossPartitions_CO6(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", ptr[int32](-1))
	f.MustCreate(c, "p1", map[string]any{"id": "a", "pk": "p1", "n": 3})
	f.MustCreate(c, "p2", map[string]any{"id": "b", "pk": "p2", "n": 1})
	f.MustCreate(c, "p1", map[string]any{"id": "c", "pk": "p1", "n": 2, "ttl": 10})
	for _, tc := range []struct {
		name, q string
		max     int
		want    []string
	}{
		{"OrderBy", "SELECT c.id FROM c ORDER BY c.n", 0, []string{`{"id":"b"}`, `{"id":"c"}`, `{"id":"a"}`}},
		{"Max", "SELECT VALUE c.id FROM c ORDER BY c.n DESC", 2, []string{`"a"`, `"c"`}},
		{"Count", "SELECT VALUE COUNT(1) FROM c", 10, []string{`3`}},
		{"GroupBy", "SELECT c.pk, SUM(c.n) AS total FROM c GROUP BY c.pk", 10, []string{`{"pk":"p1","total":5}`, `{"pk":"p2","total":1}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.rows("db/c", tc.q, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("%s (-want +got):\n%s", tc.q, d)
			}
		})
	}
	whole, err := f.rows("db/c", "SELECT * FROM c WHERE c.id = 'b'", 0)
	if err != nil || len(whole) != 1 || !strings.Contains(whole[0], `"_etag"`) {
		t.Fatalf("SELECT * = %v, %v", whole, err)
	}
	// Only the clock moves: c is past its ttl, and no sweep ran.
	f.clock.Advance(10 * time.Second)
	if got, _ := f.rows("db/c", "SELECT VALUE c.id FROM c ORDER BY c.n", 0); !cmp.Equal(got, []string{`"b"`, `"a"`}) {
		t.Fatalf("after c expired: %v", got)
	}
	if got, _ := f.rows("db/c", "SELECT VALUE COUNT(1) FROM c", 0); !cmp.Equal(got, []string{`2`}) {
		t.Fatalf("count after c expired: %v", got)
	}

	_, err = f.rows("db/c", "SELECT FROM c", 0)
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorMessage(err), "Syntax error") {
		t.Fatalf("syntax error: %v (%s), want EINVALID with the service's text", err, core.ErrorCode(err))
	}
	_, err = f.rows("db/c", "SELECT VALUE ABS() FROM c", 0)
	if core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("semantic error: %v (%s), want EINVALID", err, core.ErrorCode(err))
	}
	for _, name := range []string{"db/nope", "db", "nope"} {
		if _, err := f.rows(name, "SELECT * FROM c", 0); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("query of %q: %v, want ENOTFOUND", name, err)
		}
	}
}

func TestDescribeItem(t *testing.T) {
	f := MustServer(t)
	f.e.Register(core.Cosmos, f.s.Hooks())
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", ptr[int32](-1))
	resp := f.MustCreate(c, "p1", map[string]any{"id": "a", "pk": "p1", "ttl": 60})
	items, err := f.e.Items(f.clock.Now(), core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}, 0)
	if err != nil || len(items) != 1 {
		t.Fatalf("items %v, %v", items, err)
	}
	d := f.e.Describe(core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}, &items[0])
	rid, _ := f.read(c, "p1", "a")["_rid"].(string)
	want := core.Description{Properties: []core.Setting{
		{Key: "id", Value: "a"}, {Key: "partitionKey", Value: `["p1"]`}, {Key: "_rid", Value: rid},
		{Key: "_etag", Value: string(resp.ETag)}, {Key: "_ts", Value: strconv.FormatInt(t0.Unix(), 10)}, {Key: "ttl", Value: "60"},
	}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Fatalf("description (-want +got):\n%s", diff)
	}
	db := core.EntityKey{Protocol: core.Cosmos, Name: "db"}
	if d := f.e.Describe(db, &items[0]); d.Properties != nil {
		t.Fatalf("a database's description: %+v", d)
	}
}
