package cosmos_test

import (
	"net/http"
	"testing"
)

// FuzzRequestBodies sends arbitrary bodies as an item create, an upsert, a
// query, a patch and a transactional and a bulk batch: whatever the body,
// the answer is the service's (a 2xx or a 4xx), never a 500, and the server
// goes on serving.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		`{"id":"a","pk":"p","n":1}`,
		`{"id":"a","pk":"p","ttl":0}`,
		`{"query":"SELECT * FROM c WHERE c.n > @n","parameters":[{"name":"@n","value":1}]}`,
		`{"query":"SELECT VALUE COUNT(1) FROM c GROUP BY c.pk"}`,
		`{"operations":[{"op":"incr","path":"/n","value":1}],"condition":"from c where c.n = 1"}`,
		`[{"op":"move","from":"/n","path":"/m/0"}]`,
		`[{"operationType":"Create","resourceBody":{"id":"b","pk":"p"}},{"operationType":"Patch","id":"a","resourceBody":[{"op":"remove","path":"/n"}]}]`,
		`[{"operationType":"Upsert","partitionKey":"[\"p\"]","resourceBody":{"id":"c","pk":"p"}}]`,
		`{"id":"a","pk":"p","x":[1,{"y":[[]]}],"_rid":5}`,
		``, `null`, `[]`, `{}`, `{"id":"` + "\x00" + `"}`,
	} {
		f.Add(seed)
	}
	s := MustServer(f)
	c := s.MustContainer(s.MustDatabase("db"), "c", "/pk", nil)
	s.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p", "n": 1})
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "Content-Type": "application/json"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range pk {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	requests := []struct {
		verb, path, link string
		headers          map[string]string
	}{
		{"POST", "/dbs/db/colls/c/docs", "dbs/db/colls/c", pk},
		{"POST", "/dbs/db/colls/c/docs", "dbs/db/colls/c", with(map[string]string{"x-ms-documentdb-is-upsert": "true"})},
		{"POST", "/dbs/db/colls/c/docs", "dbs/db/colls/c", with(map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json"})},
		{"POST", "/dbs/db/colls/c/docs", "dbs/db/colls/c", with(map[string]string{"x-ms-documentdb-query": "true", "x-ms-documentdb-query-enablecrosspartition": "true", "x-ms-documentdb-partitionkey": ""})},
		{"PATCH", "/dbs/db/colls/c/docs/a", "dbs/db/colls/c/docs/a", pk},
		{"PUT", "/dbs/db/colls/c/docs/a", "dbs/db/colls/c/docs/a", pk},
		{"POST", "/dbs/db/colls/c/docs", "dbs/db/colls/c", with(map[string]string{"x-ms-cosmos-is-batch-request": "true", "x-ms-cosmos-batch-atomic": "true"})},
		{"POST", "/dbs/db/colls/c/docs", "dbs/db/colls/c", with(map[string]string{"x-ms-cosmos-is-batch-request": "true", "x-ms-cosmos-batch-atomic": "false", "x-ms-documentdb-partitionkey": ""})},
		{"POST", "/dbs/db/colls", "dbs/db", map[string]string{"Content-Type": "application/json"}},
		{"PUT", "/dbs/db/colls/c", "dbs/db/colls/c", map[string]string{"Content-Type": "application/json"}},
	}
	f.Fuzz(func(t *testing.T, body string) {
		s := *s // the same server, reporting to t
		s.tb = t
		for _, r := range requests {
			h := map[string]string{}
			for k, v := range r.headers {
				if v != "" {
					h[k] = v
				}
			}
			res := s.do(r.verb, r.path, "docs", r.link, []byte(body), h)
			if r.path == "/dbs/db/colls" || r.path == "/dbs/db/colls/c" {
				res = s.do(r.verb, r.path, "colls", r.link, []byte(body), h)
			}
			if res.status >= 500 {
				t.Fatalf("%s %s with %q: %d %s", r.verb, r.path, body, res.status, res.body)
			}
		}
		if r := s.do("GET", "/dbs/db/colls/c", "colls", "dbs/db/colls/c", nil, nil); r.status != http.StatusOK && r.status != http.StatusNotFound {
			t.Fatalf("the container after %q: %d %s", body, r.status, r.body)
		}
	})
}
