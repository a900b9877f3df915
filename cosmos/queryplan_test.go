package cosmos_test

import (
	"encoding/json"
	"fmt"
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

// Issue 26: the plan of a cross-partition ORDER BY RANK is the gateway's
// hybrid search plan (hybridSearchQueryInfo, queryInfo null), in the
// refusal and in answer to a plan request; the ranges answer its
// statistics query and its component queries with the client's
// statistics filled in.
func TestIssue26_HybridSearchPlan(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	for i, text := range []string{"swim and run", "run run run", "a quiet swim"} {
		f.MustCreate(c, fmt.Sprint("p", i), map[string]any{"id": fmt.Sprint("t", i), "pk": fmt.Sprint("p", i), "text": text})
	}
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
		QueryInfo             *json.RawMessage
		HybridSearchQueryInfo *struct {
			GlobalStatisticsQuery    string
			ComponentQueryInfos      []struct{ OrderBy []string }
			Take                     *int
			RequiresGlobalStatistics bool
		}
	}
	const text = `SELECT TOP 2 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "swim"), FullTextScore(c.text, "run"))`
	r := query(text, nil)
	var refusal struct{ AdditionalErrorInfo string }
	if err := json.Unmarshal(r.body, &refusal); err != nil || r.status != http.StatusBadRequest || r.header.Get("x-ms-substatus") != "1004" {
		t.Fatalf("cross-partition ORDER BY RANK: %d substatus %q %s (%v)", r.status, r.header.Get("x-ms-substatus"), r.body, err)
	}
	for _, body := range []string{refusal.AdditionalErrorInfo, string(query(text, map[string]string{"x-ms-cosmos-is-query-plan-request": "true"}).body)} {
		var got plan
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("plan %s: %v", body, err)
		}
		h := got.HybridSearchQueryInfo
		if got.QueryInfo != nil || h == nil || len(h.ComponentQueryInfos) != 2 || h.Take == nil || *h.Take != 2 || !h.RequiresGlobalStatistics {
			t.Fatalf("plan is not a hybrid search plan of 2 components taking 2: %s", body)
		}
	}

	// A range answers the statistics query with its counts.
	r = query(`SELECT COUNT(1) AS documentCount, [{"totalWordCount": SUM(_FullTextWordCount(c.text)), "hitCounts": [COUNTIF(FullTextContains(c.text, "swim")), COUNTIF(FullTextContains(c.text, "run"))]}] AS fullTextStatistics FROM c`,
		map[string]string{"x-ms-documentdb-partitionkeyrangeid": "0"})
	var page struct{ Documents []json.RawMessage }
	if err := json.Unmarshal(r.body, &page); err != nil || len(page.Documents) != 1 ||
		string(page.Documents[0]) != `{"documentCount":3,"fullTextStatistics":[{"totalWordCount":7,"hitCounts":[2,2]}]}` {
		t.Errorf("statistics query: %d %s", r.status, r.body)
	}
}
