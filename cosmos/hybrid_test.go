package cosmos_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// Issue 26: hybrid search through the SDKs' own pipelines. A scenario
// runs ORDER BY RANK queries on a container of five partition key ranges
// and prints {"queries": {name: text}, "results": {name: rows}}; the rows
// must be lapse's whole-query answer over the same items, in the same
// order, and lapse's log must show that the SDK took its pipeline: the
// plan, the statistics query and the component queries on every range.

// mustLoggingServer is a server whose debug log the test reads.
func mustLoggingServer(t *testing.T) (*fixture, *clienttest.Buffer) {
	var log clienttest.Buffer
	f := MustServerWith(t, func(c *cosmos.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	return f, &log
}

// checkHybridScenario checks a hybrid search scenario's line against the
// whole-query answers over the items of container db/c, and log for the
// pipeline's requests.
func checkHybridScenario(t *testing.T, f *fixture, log *clienttest.Buffer, line []byte) {
	t.Helper()
	var got struct {
		Queries map[string]string
		Results map[string][]json.RawMessage
	}
	if err := json.Unmarshal(line, &got); err != nil || len(got.Queries) == 0 {
		t.Fatalf("decoding %s: %v", line, err)
	}
	body, _ := json.Marshal(map[string]string{"query": "SELECT * FROM c"})
	r := f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", body, map[string]string{
		"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json",
		"x-ms-documentdb-query-enablecrosspartition": "true", "x-ms-max-item-count": "1000"})
	var page struct{ Documents []json.RawMessage }
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatalf("reading the items: %d %s", r.status, r.body)
	}
	var docs []any
	for _, d := range page.Documents {
		v, err := query.Decode(d)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, v)
	}
	src := func(yield func(any) bool) {
		for _, d := range docs {
			if !yield(d) {
				return
			}
		}
	}
	for name, text := range got.Queries {
		q, err := query.Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		want := []string{}
		if err := q.Run(src, nil, query.Options{Now: t0}, func(row any) bool {
			want = append(want, string(query.AppendJSON(nil, row)))
			return true
		}); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		rows := []string{}
		for _, row := range got.Results[name] {
			v, err := query.Decode(row)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, string(query.AppendJSON(nil, v)))
		}
		if len(want) == 0 {
			t.Errorf("%s: the whole query has no rows", name)
		}
		if d := cmp.Diff(want, rows); d != "" {
			t.Errorf("%s: %s\nthrough the SDK's pipeline (-whole query +SDK):\n%s", name, text, d)
		}
	}

	// The pipeline's requests: a plan, then on each of the five ranges
	// the statistics query and the component queries.
	type entry struct {
		Msg, Range, Query string
		Plan              bool
	}
	stats, components, plans := map[string]bool{}, map[string]bool{}, 0
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var e entry
		if json.Unmarshal([]byte(l), &e) != nil || e.Msg != "cosmos query" {
			continue
		}
		switch {
		case e.Plan && strings.Contains(e.Query, "ORDER BY RANK"):
			plans++
		case e.Range != "" && strings.Contains(e.Query, "AS fullTextStatistics"):
			stats[e.Range] = true
		case e.Range != "" && strings.Contains(e.Query, "_FullTextScore("):
			components[e.Range] = true
		}
	}
	if plans < len(got.Queries) || len(stats) != 5 || len(components) != 5 {
		t.Errorf("the SDK did not take its hybrid search pipeline: %d plan requests for %d queries, statistics on ranges %v, component queries on ranges %v",
			plans, len(got.Queries), stats, components)
	}
}

func TestIssue26_HybridSearchThroughJSSDK(t *testing.T) {
	node := clienttest.Node(t, jsDir, "@azure/cosmos")
	f, log := mustLoggingServer(t)
	checkHybridScenario(t, f, log, runJSScenario(t, node, f, "hybrid-search"))
}

func TestIssue26_HybridSearchThroughPython4SDK(t *testing.T) {
	f, log := mustLoggingServer(t)
	checkHybridScenario(t, f, log, runPython4ScenarioOn(t, f, "hybrid_search"))
}
