package cosmos_test

import (
	"net/http"
	"testing"
)

// BenchmarkRESTPointRead reads one item over the REST API, signed as the
// SDKs sign, on a keep-alive connection: the server's cost per request
// with a minimal client in the same process (allocs/op counts both).
func BenchmarkRESTPointRead(b *testing.B) {
	f := MustServer(b)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p", "n": 1})
	h := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	b.ReportAllocs()
	for b.Loop() {
		if r := f.do("GET", "/dbs/db/colls/c/docs/a", "docs", "dbs/db/colls/c/docs/a", nil, h); r.status != http.StatusOK {
			b.Fatalf("status %d: %s", r.status, r.body)
		}
	}
}
