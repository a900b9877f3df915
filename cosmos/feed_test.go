package cosmos_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadFeedPages(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	for i := range 7 {
		pk := "a"
		if i%2 == 1 {
			pk = "b"
		}
		f.MustCreate(c, pk, map[string]any{"id": strconv.Itoa(i), "pk": pk})
	}
	if d := cmp.Diff([]string{"0", "1", "2", "3", "4", "5", "6"}, f.readFeedPages("db", "c", "", 3)); d != "" {
		t.Fatalf("read feed by 3 (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"0", "2", "4", "6"}, f.readFeedPages("db", "c", `["a"]`, 2)); d != "" {
		t.Fatalf("partition a by 2 (-want +got):\n%s", d)
	}
	// A write during paging neither repeats nor loses what was not written.
	r := f.do("GET", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", nil, map[string]string{"x-ms-max-item-count": "4"})
	first := feedIDs(t, r.body)
	f.MustCreate(c, "a", map[string]any{"id": "7", "pk": "a"})
	r = f.do("GET", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", nil,
		map[string]string{"x-ms-max-item-count": "100", "x-ms-continuation": r.header.Get("x-ms-continuation")})
	if d := cmp.Diff([]string{"0", "1", "2", "3", "4", "5", "6", "7"}, append(first, feedIDs(t, r.body)...)); d != "" {
		t.Fatalf("paging across a write (-want +got):\n%s", d)
	}
	if r := f.do("GET", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", nil, map[string]string{"x-ms-continuation": "garbage"}); r.status != http.StatusBadRequest {
		t.Fatalf("bad continuation: %d %s", r.status, r.body)
	}
}

// changes reads the change feed after etag ("" for from the beginning),
// and returns the ids and the ETag to go on from.
func (f *fixture) changes(pk, etag string) ([]string, string, int) {
	f.tb.Helper()
	h := map[string]string{"A-IM": "Incremental feed"}
	if etag != "" {
		h["If-None-Match"] = etag
	}
	if pk != "" {
		h["x-ms-documentdb-partitionkey"] = pk
	}
	r := f.do("GET", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", nil, h)
	if r.status == http.StatusNotModified {
		return nil, r.header.Get("etag"), r.status
	}
	if r.status != http.StatusOK {
		f.tb.Fatalf("change feed: %d %s", r.status, r.body)
	}
	return feedIDs(f.tb, r.body), r.header.Get("etag"), r.status
}

// rule: CO-6
func TestChangeFeed_CO6(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", ptr[int32](-1))
	f.MustCreate(c, "a", map[string]any{"id": "1", "pk": "a"})
	f.MustCreate(c, "b", map[string]any{"id": "2", "pk": "b", "ttl": 60})
	f.MustCreate(c, "a", map[string]any{"id": "3", "pk": "a"})
	ids, etag, _ := f.changes("", "")
	if d := cmp.Diff([]string{"1", "2", "3"}, ids); d != "" {
		t.Fatalf("from the beginning (-want +got):\n%s", d)
	}
	if _, same, status := f.changes("", etag); status != http.StatusNotModified || same != etag {
		t.Fatalf("nothing new: %d, etag %q (was %q)", status, same, etag)
	}
	// "*" starts from now.
	_, now, status := f.changes("", "*")
	if status != http.StatusNotModified {
		t.Fatalf("from now: %d", status)
	}
	// A rewrite shows the item once more, in the order of the last writes.
	f.MustCreate(c, "a", map[string]any{"id": "4", "pk": "a"})
	if _, err := c.UpsertItem(t.Context(), pkOf("a"), []byte(`{"id":"1","pk":"a","v":2}`), nil); err != nil {
		t.Fatal(err)
	}
	ids, etag2, _ := f.changes("", etag)
	if d := cmp.Diff([]string{"4", "1"}, ids); d != "" {
		t.Fatalf("after writes (-want +got):\n%s", d)
	}
	if ids, _, _ := f.changes("", now); !cmp.Equal([]string{"4", "1"}, ids) {
		t.Fatalf("from the earlier now: %v", ids)
	}
	if ids, _, _ := f.changes(`["a"]`, ""); !cmp.Equal([]string{"3", "4", "1"}, ids) {
		t.Fatalf("partition a from the beginning: %v", ids)
	}
	// An expired item is gone from the change feed at once (CO-6).
	f.clock.Advance(60 * time.Second)
	if ids, _, _ := f.changes("", ""); !cmp.Equal([]string{"3", "4", "1"}, ids) {
		t.Fatalf("after item 2 expired: %v", ids)
	}
	if _, _, status := f.changes("", etag2); status != http.StatusNotModified {
		t.Fatalf("after the last read: %d", status)
	}
}
