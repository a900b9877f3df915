package cosmos_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Issue 26.1: as the gateway, lapse refuses a cross-partition query that
// needs a client's pipeline with substatus 1004 and the query's plan in
// additionalErrorInfo, whatever client sends it; the plan request gets the
// same plan, unless the client says its pipeline lacks a feature the
// query needs; and a range's rewritten query is served.
func TestIssue26_1_GatewayRefusesWithThePlan(t *testing.T) {
	f := MustServer(t)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	query := func(q string, extra map[string]string) restResponse {
		h := map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json",
			"x-ms-documentdb-query-enablecrosspartition": "true"}
		for k, v := range extra {
			h[k] = v
		}
		body, _ := json.Marshal(map[string]string{"query": q})
		return f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", body, h)
	}
	type plan struct {
		QueryInfo struct {
			OrderBy        []string
			RewrittenQuery string
		}
		QueryRanges []struct{ Min, Max string }
	}
	want := plan{}
	want.QueryInfo.OrderBy = []string{"Descending"}
	want.QueryInfo.RewrittenQuery = `SELECT c._rid, [{"item": c.i}] AS orderByItems, c AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.i DESC`
	want.QueryRanges = []struct{ Min, Max string }{{"", "FF"}}

	r := query("SELECT * FROM c ORDER BY c.i DESC", nil)
	var refusal struct{ AdditionalErrorInfo string }
	if err := json.Unmarshal(r.body, &refusal); err != nil || r.status != http.StatusBadRequest || r.header.Get("x-ms-substatus") != "1004" {
		t.Fatalf("cross-partition ORDER BY: %d substatus %q %s (%v)", r.status, r.header.Get("x-ms-substatus"), r.body, err)
	}
	var got plan
	if err := json.Unmarshal([]byte(refusal.AdditionalErrorInfo), &got); err != nil {
		t.Fatalf("additionalErrorInfo %q: %v", refusal.AdditionalErrorInfo, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("plan in the refusal (-want +got):\n%s", d)
	}

	r = query("SELECT * FROM c ORDER BY c.i DESC", map[string]string{"x-ms-cosmos-is-query-plan-request": "true"})
	got = plan{}
	if err := json.Unmarshal(r.body, &got); err != nil || r.status != http.StatusOK {
		t.Fatalf("plan request: %d %s", r.status, r.body)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("plan (-want +got):\n%s", d)
	}

	r = query("SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk", map[string]string{"x-ms-cosmos-is-query-plan-request": "true",
		"x-ms-cosmos-supported-query-features": "Aggregate, Distinct, OrderBy, Top, OffsetAndLimit"})
	if r.status != http.StatusBadRequest || !json.Valid(r.body) {
		t.Errorf("plan of a GROUP BY for a client without GroupBy: %d %s", r.status, r.body)
	}

	// The range's query, as a pipeline sends it.
	r = query(`SELECT c._rid, [{"item": c.i}] AS orderByItems, c AS payload FROM c WHERE (true) ORDER BY c.i DESC`,
		map[string]string{"x-ms-documentdb-partitionkeyrangeid": "0"})
	if r.status != http.StatusOK {
		t.Errorf("a range's rewritten query: %d %s", r.status, r.body)
	}
}
