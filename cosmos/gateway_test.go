package cosmos_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// What the gateway says of a query the client did not allow to cross
// partitions, and which range answered a point operation: both as the
// Python SDK's own emulator tests expect (issue 26).

func TestIssue26_CrossPartitionDisabledIsTheClientsToSee(t *testing.T) {
	// A query with neither a partition key nor leave to read them all is
	// refused with 400 and no substatus: substatus 1004 would tell the
	// client to plan the query and run it itself, which the Python SDK
	// did, so that the refusal never reached the caller.
	f := MustServer(t)
	f.raw("POST", "/dbs", "dbs", "", []byte(`{"id":"db"}`), nil)
	f.raw("POST", "/dbs/db/colls", "colls", "dbs/db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`), nil)
	f.raw("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", []byte(`{"id":"i1","pk":"a"}`),
		map[string]string{"x-ms-documentdb-partitionkey": `["a"]`})
	query := func(extra map[string]string) map[string]string {
		h := map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json"}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	for _, path := range []string{"docs", "conflicts"} {
		r := f.raw("POST", "/dbs/db/colls/c/"+path, path, "dbs/db/colls/c", []byte(`{"query":"SELECT * FROM c"}`), query(nil))
		if r.status != http.StatusBadRequest || r.header["x-ms-substatus"] != "" ||
			!strings.Contains(string(r.body), "Cross partition query is required but disabled") {
			t.Errorf("%s query without a partition key: %d substatus %q: %s", path, r.status, r.header["x-ms-substatus"], r.body)
		}
		for name, h := range map[string]map[string]string{
			"allowed":       {"x-ms-documentdb-query-enablecrosspartition": "true"},
			"one key":       {"x-ms-documentdb-partitionkey": `["a"]`},
			"one key range": {"x-ms-documentdb-partitionkeyrangeid": "0"},
		} {
			if r := f.raw("POST", "/dbs/db/colls/c/"+path, path, "dbs/db/colls/c", []byte(`{"query":"SELECT * FROM c"}`), query(h)); r.status != http.StatusOK {
				t.Errorf("%s query, %s: %d: %s", path, name, r.status, r.body)
			}
		}
	}
}

func TestIssue26_PointOperationsNameTheirRange(t *testing.T) {
	// A response about one partition key says which range served it
	// (x-ms-documentdb-partitionkeyrangeid), the range its session token
	// is of. Without it the Python SDK takes the response for a sign of a
	// split and drops its cache of the container's ranges.
	f := MustServer(t)
	f.raw("POST", "/dbs", "dbs", "", []byte(`{"id":"db"}`), nil)
	f.raw("POST", "/dbs/db/colls", "colls", "dbs/db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`),
		map[string]string{"x-ms-offer-throughput": "25000"})
	var feed struct {
		PartitionKeyRanges []struct{ ID string }
	}
	if err := json.Unmarshal(f.raw("GET", "/dbs/db/colls/c/pkranges", "pkranges", "dbs/db/colls/c", nil, nil).body, &feed); err != nil || len(feed.PartitionKeyRanges) < 2 {
		t.Fatalf("ranges: %v %+v", err, feed)
	}
	seen := map[string]bool{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		pk := map[string]string{"x-ms-documentdb-partitionkey": `["` + k + `"]`}
		for _, step := range []struct{ verb, path, link, body string }{
			{"POST", "/dbs/db/colls/c/docs", "dbs/db/colls/c", `{"id":"i","pk":"` + k + `"}`},
			{"GET", "/dbs/db/colls/c/docs/i", "dbs/db/colls/c/docs/i", ""},
			{"DELETE", "/dbs/db/colls/c/docs/i", "dbs/db/colls/c/docs/i", ""},
		} {
			r := f.raw(step.verb, step.path, "docs", step.link, []byte(step.body), pk)
			id := r.header["x-ms-documentdb-partitionkeyrangeid"]
			token := r.header["x-ms-session-token"]
			if r.status >= 300 || id == "" || !strings.HasPrefix(token, id+":") {
				t.Errorf("%s %s of key %s: %d, range %q, session token %q", step.verb, step.path, k, r.status, id, token)
			}
			seen[id] = true
		}
	}
	if len(seen) < 2 {
		t.Errorf("eight keys all in range(s) %v", seen)
	}
}
