package cosmos_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// issue 13.12: a container keeps its fullTextPolicy as sent and echoes it;
// FullTextScore weighs a partition's items against the whole container
// (the service gathers its BM25 statistics over every partition) and the
// policy's language is the text's; a query without any policy is answered
// too, as the service answers it (without the index, only more slowly).
func TestFullTextSearchUsesTheContainerPolicyAndAllItems(t *testing.T) {
	f := MustServer(t)
	query := func(pk, q string) restResponse {
		h := map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json"}
		if pk != "" {
			h["x-ms-documentdb-partitionkey"] = `["` + pk + `"]`
		} else {
			h["x-ms-documentdb-query-enablecrosspartition"] = "true"
		}
		body, _ := json.Marshal(map[string]string{"query": q})
		return f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", body, h)
	}
	policy := `{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text","language":"en-US"},{"path":"/fr","language":"fr-FR"}]}`
	steps := []struct{ verb, path, typ, link, body, pk string }{
		{"POST", "/dbs", "dbs", "", `{"id":"db"}`, ""},
		{"POST", "/dbs/db/colls", "colls", "dbs/db", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"},` +
			`"fullTextPolicy":` + policy + `,"indexingPolicy":{"includedPaths":[{"path":"/*"}],"fullTextIndexes":[{"path":"/text"}]}}`, ""},
		{"POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"id":"A","pk":"p","text":"alpha alpha","fr":"il mangeait"}`, "p"},
		{"POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"id":"B","pk":"p","text":"beta"}`, "p"},
	}
	for i, other := range []string{"gamma", "delta", "epsilon", "zeta", "theta"} {
		steps = append(steps, struct{ verb, path, typ, link, body, pk string }{"POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c",
			`{"id":"o` + string(rune('1'+i)) + `","pk":"q","text":"alpha ` + other + `"}`, "q"})
	}
	for _, s := range steps {
		var h map[string]string
		if s.pk != "" {
			h = map[string]string{"x-ms-documentdb-partitionkey": `["` + s.pk + `"]`}
		}
		if r := f.do(s.verb, s.path, s.typ, s.link, []byte(s.body), h); r.status != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", s.verb, s.path, r.status, r.body)
		}
	}
	r := f.do("GET", "/dbs/db/colls/c", "colls", "dbs/db/colls/c", nil, nil)
	var coll map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &coll); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(policy, string(coll["fullTextPolicy"])); diff != "" {
		t.Errorf("fullTextPolicy echoed (-want +got):\n%s", diff)
	}
	// In partition p alone "alpha" (A) and "beta" (B) would be as rare;
	// over the container "alpha" is in six items of seven, "beta" in one.
	got := feedIDs(t, query("p", `SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, "alpha", "beta")`).body)
	if diff := cmp.Diff([]string{"B", "A"}, got); diff != "" {
		t.Errorf("ORDER BY RANK in partition p (-want +got):\n%s", diff)
	}
	got = feedIDs(t, query("", `SELECT c.id FROM c WHERE FullTextContains(c.fr, "manger") AND FullTextContainsAny(c.text, "alphas", "omega")`).body)
	if diff := cmp.Diff([]string{"A"}, got); diff != "" {
		t.Errorf("FullTextContains with the policy's languages (-want +got):\n%s", diff)
	}
	// No policy for c.id: answered all the same.
	got = feedIDs(t, query("", `SELECT c.id FROM c WHERE FullTextContainsAny(c.id, "o1", "o2")`).body)
	if diff := cmp.Diff([]string{"o1", "o2"}, got); diff != "" {
		t.Errorf("FullTextContainsAny on a path without a policy (-want +got):\n%s", diff)
	}
	bad := query("p", `SELECT FullTextScore(c.text, "alpha") FROM c`)
	if bad.status != http.StatusBadRequest || !strings.Contains(string(bad.body), `SC2240`) {
		t.Errorf("FullTextScore in SELECT: %d %s, want 400 SC2240", bad.status, bad.body)
	}
}
