package cosmos_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

// benchDoc is a document of about 1 KB, as lapse-bench's cosmos scenarios
// write.
func benchDoc(id string, rev int) []byte {
	return fmt.Appendf(nil, `{"id":%q,"pk":"p","n":7,"rev":%d,"name":"bench item %s","tags":["lapse","bench","cosmos"],"filler":%q}`,
		id, rev, id, strings.Repeat("lorem ipsum ", 75))
}

// BenchmarkRESTCreate creates items of about 1 KB over the REST API, each
// with a new id, as BenchmarkRESTPointRead reads one.
func BenchmarkRESTCreate(b *testing.B) {
	f := MustServer(b)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	h := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if r := f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", benchDoc(strconv.Itoa(i), 1), h); r.status != http.StatusCreated {
			b.Fatalf("status %d: %s", r.status, r.body)
		}
	}
}

// BenchmarkRESTUpsert upserts over 100 existing items of about 1 KB.
func BenchmarkRESTUpsert(b *testing.B) {
	f := MustServer(b)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	h := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-is-upsert": "true"}
	for i := range 100 {
		if r := f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", benchDoc(strconv.Itoa(i), 0), h); r.status != http.StatusCreated {
			b.Fatalf("status %d: %s", r.status, r.body)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if r := f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", benchDoc(strconv.Itoa(i%100), i), h); r.status != http.StatusOK {
			b.Fatalf("status %d: %s", r.status, r.body)
		}
	}
}

// BenchmarkRESTCreateUnique is BenchmarkRESTCreate in a container with a
// unique key on /name, which each document's is (issue 28.3).
func BenchmarkRESTCreateUnique(b *testing.B) {
	f := MustServer(b)
	f.mustUniqueContainer(f.MustDatabase("db"), "c", nil, []string{"/name"})
	h := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if r := f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", benchDoc(strconv.Itoa(i), 1), h); r.status != http.StatusCreated {
			b.Fatalf("status %d: %s", r.status, r.body)
		}
	}
}

// benchCreates100 is the stored procedure BenchmarkStoredProcedure100Creates
// runs: 100 creates of the document it is given, under new ids.
const benchCreates100 = `function (prefix, doc) {
	var c = getContext().getCollection();
	for (var i = 0; i < 100; i++) {
		doc.id = prefix + '-' + i;
		c.createDocument(c.getSelfLink(), doc, function (err) { if (err) throw err; });
	}
}`

// BenchmarkStoredProcedure100Creates runs a stored procedure that creates
// 100 items of about 1 KB in one transaction, to compare with
// BenchmarkBatch100Creates (issue 28: within 2x of it).
func BenchmarkStoredProcedure100Creates(b *testing.B) {
	f := MustServer(b)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	r := f.do("POST", "/dbs/db/colls/c/sprocs", "sprocs", "dbs/db/colls/c", fmt.Appendf(nil, `{"id":"bulk","body":%s}`, strconvQuote(benchCreates100)), nil)
	if r.status != http.StatusCreated {
		b.Fatalf("create sproc: %d %s", r.status, r.body)
	}
	h := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		args := fmt.Appendf(nil, `["b%d",%s]`, i, benchDoc("x", 1))
		if r := f.do("POST", "/dbs/db/colls/c/sprocs/bulk", "sprocs", "dbs/db/colls/c/sprocs/bulk", args, h); r.status != http.StatusOK {
			b.Fatalf("status %d: %s", r.status, r.body)
		}
	}
}

// BenchmarkBatch100Creates sends a transactional batch of 100 creates of
// the documents BenchmarkStoredProcedure100Creates writes.
func BenchmarkBatch100Creates(b *testing.B) {
	f := MustServer(b)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	h := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-cosmos-is-batch-request": "true", "x-ms-cosmos-batch-atomic": "true"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		body := []byte{'['}
		for j := range 100 {
			if j > 0 {
				body = append(body, ',')
			}
			body = fmt.Appendf(body, `{"operationType":"Create","resourceBody":%s}`, benchDoc(fmt.Sprintf("b%d-%d", i, j), 1))
		}
		body = append(body, ']')
		if r := f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", body, h); r.status != http.StatusOK {
			b.Fatalf("status %d: %s", r.status, r.body)
		}
	}
}
