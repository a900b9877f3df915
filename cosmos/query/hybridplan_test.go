package query

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// Issue 26: the plan of ORDER BY RANK is the gateway's hybrid search plan,
// its statistics query and one component query per score, in the form
// the SDKs parse (the service's recorded plan for this query, in the .NET
// SDK's tests, has the same statistics query and component query).
func TestIssue26_HybridPlanShape(t *testing.T) {
	q := MustParse(t, `SELECT TOP 10 * FROM c ORDER BY RANK FullTextScore(c.text, "swim", "run")`)
	info, ok := q.HybridPlan(nil, HybridOptions{})
	if !ok {
		t.Fatal("HybridPlan: not planned")
	}
	score := `_FullTextScore(c.text, ["swim", "run"], {documentdb-formattablehybridsearchquery-totaldocumentcount}, ` +
		`{documentdb-formattablehybridsearchquery-totalwordcount-0}, {documentdb-formattablehybridsearchquery-hitcountsarray-0})`
	top := 120
	take := 10
	want := HybridSearchQueryInfo{
		GlobalStatisticsQuery: `SELECT COUNT(1) AS documentCount, [{"totalWordCount": SUM(_FullTextWordCount(c.text)), ` +
			`"hitCounts": [COUNTIF(FullTextContains(c.text, "swim")), COUNTIF(FullTextContains(c.text, "run"))]}] AS fullTextStatistics` + "\nFROM c",
		ComponentQueryInfos: []QueryInfo{{
			DistinctType: "None", Top: &top, OrderBy: []string{"Descending"}, OrderByExpressions: []string{score},
			GroupByExpressions: []string{}, GroupByAliases: []string{}, Aggregates: []string{},
			GroupByAliasToAggregateType: map[string]*string{},
			RewrittenQuery: `SELECT TOP 120 c._rid, [{"item": ` + score + `}] AS orderByItems, {"payload": c, "componentScores": [(` + score + ` ?? -1)]} AS payload` +
				"\nFROM c\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY " + score + " DESC",
			HasNonStreamingOrderBy: true,
		}},
		ComponentWithoutPayloadQueryInfos: []QueryInfo{},
		ComponentWeights:                  []float64{},
		Take:                              &take,
		RequiresGlobalStatistics:          true,
	}
	if diff := gocmp.Diff(want, info); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	out, _ := json.Marshal(info)
	for _, field := range []string{`"projectionQueryInfo":null`, `"skip":null`, `"take":10`, `"componentWeights":[]`} {
		if !strings.Contains(string(out), field) {
			t.Errorf("plan JSON lacks %s: %s", field, out)
		}
	}

	// RRF of a full-text score and a vector, weighted, the vector the
	// other way round: its weight's magnitude, ascending, and the
	// highest float for a missing score.
	q = MustParse(t, `SELECT c.id FROM c WHERE c.n > 1 ORDER BY RANK RRF(VectorDistance(c.v, [1, 2]), FullTextScore(c.text, ["a"]), [-0.5, 2]) OFFSET 1 LIMIT 2`)
	info, ok = q.HybridPlan(nil, HybridOptions{})
	if !ok {
		t.Fatal("HybridPlan: RRF not planned")
	}
	ft := `_FullTextScore(c.text, ["a"], {documentdb-formattablehybridsearchquery-totaldocumentcount}, ` +
		`{documentdb-formattablehybridsearchquery-totalwordcount-1}, {documentdb-formattablehybridsearchquery-hitcountsarray-1})`
	if got, want := info.ComponentQueryInfos[0].RewrittenQuery, `SELECT TOP 36 c._rid, [{"item": (_VectorScore(c.v, [1, 2]) ?? 1.79769e+308)}] AS orderByItems, `+
		`{"payload": {"id": c.id}, "componentScores": [(_VectorScore(c.v, [1, 2]) ?? 1.79769e+308), (`+ft+` ?? -1)]} AS payload`+
		"\nFROM c\nWHERE (c.n > 1) AND ({documentdb-formattableorderbyquery-filter})\nORDER BY (_VectorScore(c.v, [1, 2]) ?? 1.79769e+308) ASC"; got != want {
		t.Errorf("vector component:\n got %s\nwant %s", got, want)
	}
	if got := info.ComponentQueryInfos[0].OrderBy; !slices.Equal(got, []string{"Ascending"}) {
		t.Errorf("vector component order %v, want Ascending", got)
	}
	if !slices.Equal(info.ComponentWeights, []float64{0.5, 2}) || *info.Skip != 1 || *info.Take != 2 {
		t.Errorf("weights %v skip %v take %v", info.ComponentWeights, *info.Skip, *info.Take)
	}

	// With HybridSearchSkipOrderByRewrite (the JS SDK's), the scores come
	// beside the payload, an ascending one negated.
	info, _ = q.HybridPlan(nil, HybridOptions{SkipOrderByRewrite: true})
	if got, want := info.ComponentQueryInfos[0].RewrittenQuery, `SELECT TOP 36 c._rid, {"id": c.id} AS payload, `+
		`[(-1 * (_VectorScore(c.v, [1, 2]) ?? 1.79769e+308)), (`+ft+` ?? -1)] AS componentScores`+
		"\nFROM c\nWHERE c.n > 1\nORDER BY (_VectorScore(c.v, [1, 2]) ?? 1.79769e+308) ASC"; got != want {
		t.Errorf("vector component without the ORDER BY rewrite:\n got %s\nwant %s", got, want)
	}
	if ci := info.ComponentQueryInfos[1]; len(ci.OrderBy) != 0 || ci.HasNonStreamingOrderBy || ci.Top != nil {
		t.Errorf("component without the ORDER BY rewrite has an ORDER BY plan: %+v", ci)
	}
}

// Issue 26: a client that follows the hybrid search plan over several
// partition key ranges, as the SDKs do (statistics summed, placeholders
// filled, each component query per range, ranks fused), gets the rows
// lapse's whole-query ORDER BY RANK returns, in the same order.
func TestIssue26_HybridPlanAgreesWithWholeQuery(t *testing.T) {
	texts := []string{
		"the swimmer swims in the pool", "run and swim", "a long run in the park", "swim swim swim",
		"nothing here", "runners run races", "the pool is closed", "a quick swim before a run",
		"cycling all day", "swimming pools and running tracks",
	}
	var docs []any
	for i, text := range texts {
		d := fmt.Sprintf(`{"id":"d%d","_rid":"r%02d","n":%d,"text":%q,"v":[%d,%d]}`, i, i, i, text, i%4, 3-i%3)
		if i == 4 {
			d = fmt.Sprintf(`{"id":"d%d","_rid":"r%02d","n":%d}`, i, i, i)
		}
		v, err := Decode([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, v)
	}
	ranges := [][]any{docs[:3], docs[3:7], docs[7:]}
	for _, text := range []string{
		`SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.text, "swim", "run")`,
		`SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, ["pool"]) OFFSET 1 LIMIT 3`,
		`SELECT TOP 6 VALUE c.id FROM c WHERE c.n > 0 ORDER BY RANK RRF(FullTextScore(c.text, "swim"), FullTextScore(c.text, "run"))`,
		`SELECT TOP 8 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "swim"), VectorDistance(c.v, [1, 1]), [1, 2])`,
		`SELECT TOP 8 c.id FROM c ORDER BY RANK RRF(VectorDistance(c.v, [1, 0]), FullTextScore(c.text, "run"), [-1, 1])`,
		`SELECT TOP 4 c.id FROM c ORDER BY RANK VectorDistance(c.v, [2, 1], false, {"distanceFunction": "euclidean"})`,
	} {
		q := MustParse(t, text)
		whole := MustRun(t, q, docs, nil)
		for _, skip := range []bool{false, true} {
			info, ok := q.HybridPlan(nil, HybridOptions{SkipOrderByRewrite: skip})
			if !ok {
				t.Fatalf("%s: not planned", text)
			}
			got := followHybridPlan(t, info, ranges, docs, skip)
			if diff := gocmp.Diff(whole, got); diff != "" {
				t.Errorf("%s (skip rewrite %v): pipeline (-whole +pipeline):\n%s", text, skip, diff)
			}
		}
	}
}

// followHybridPlan runs a hybrid search plan over ranges as the SDKs'
// pipelines do and returns the rows it yields as JSON texts.
func followHybridPlan(t *testing.T, info HybridSearchQueryInfo, ranges [][]any, all []any, skipRewrite bool) []string {
	t.Helper()
	run := func(text string, docs []any) []any {
		q := MustParse(t, text)
		var rows []any
		if err := q.Run(sliceSource(docs), nil, Options{Now: corpusNow, Corpus: sliceSource(all)}, func(r any) bool {
			rows = append(rows, r)
			return true
		}); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return rows
	}
	get := func(v any, key string) any {
		x, _ := v.(*Object).Get(key)
		return x
	}
	num := func(v any) string { return strconv.FormatFloat(v.(float64), 'f', -1, 64) }
	docCount, words, hits := 0.0, map[int]float64{}, map[int][]float64{}
	if info.RequiresGlobalStatistics {
		for _, r := range ranges {
			for _, row := range run(info.GlobalStatisticsQuery, r) {
				docCount += get(row, "documentCount").(float64)
				for i, s := range get(row, "fullTextStatistics").([]any) {
					words[i] += get(s, "totalWordCount").(float64)
					for j, h := range get(s, "hitCounts").([]any) {
						if len(hits[i]) <= j {
							hits[i] = append(hits[i], 0)
						}
						hits[i][j] += h.(float64)
					}
				}
			}
		}
	}
	type result struct {
		rid    string
		scores []float64
		data   any
	}
	seen := map[string]bool{}
	var results []result
	for _, ci := range info.ComponentQueryInfos {
		// The SDKs fill every component's placeholders, the n-th
		// component with statistics with the n-th statistics.
		text := strings.ReplaceAll(ci.RewrittenQuery, OrderByFilter, "true")
		text = strings.ReplaceAll(text, HybridDocumentCount, num(docCount))
		stat := 0
		for c := range info.ComponentQueryInfos {
			wc := hybridWordCount + strconv.Itoa(c) + "}"
			if !strings.Contains(text, wc) {
				continue
			}
			var hs []string
			for _, h := range hits[stat] {
				hs = append(hs, num(h))
			}
			text = strings.ReplaceAll(text, wc, num(words[stat]))
			text = strings.ReplaceAll(text, hybridHitCounts+strconv.Itoa(c)+"}", "["+strings.Join(hs, ",")+"]")
			stat++
		}
		var rows []any
		for _, r := range ranges {
			rows = append(rows, run(text, r)...)
		}
		if !skipRewrite || len(info.ComponentQueryInfos) == 1 {
			// The non-streaming ORDER BY merge of the ranges' rows.
			desc := ci.OrderBy[0] == "Descending"
			slices.SortStableFunc(rows, func(a, b any) int {
				// A document without the score has no item, which
				// sorts below every number.
				x := get(get(a, "orderByItems").([]any)[0], "item")
				y := get(get(b, "orderByItems").([]any)[0], "item")
				if desc {
					x, y = y, x
				}
				return Compare(orUndefined(x), orUndefined(y))
			})
			if ci.Top != nil && len(rows) > *ci.Top {
				rows = rows[:*ci.Top]
			}
		}
		for _, row := range rows {
			rid := get(row, "_rid").(string)
			if seen[rid] {
				continue
			}
			seen[rid] = true
			res := result{rid: rid}
			payload := get(row, "payload")
			scores := get(row, "componentScores")
			if !skipRewrite || len(info.ComponentQueryInfos) == 1 {
				scores, payload = get(payload, "componentScores"), get(payload, "payload")
			}
			for _, s := range scores.([]any) {
				res.scores = append(res.scores, s.(float64))
			}
			res.data = payload
			results = append(results, res)
		}
	}
	if len(info.ComponentQueryInfos) > 1 {
		// The Python SDK's fusion: by _rid, then each component's dense
		// ranks, then RRF, highest first.
		slices.SortStableFunc(results, func(a, b result) int { return strings.Compare(a.rid, b.rid) })
		fused := make([]float64, len(results))
		for c, ci := range info.ComponentQueryInfos {
			w := 1.0
			if len(info.ComponentWeights) > 0 {
				w = info.ComponentWeights[c]
			}
			desc := skipRewrite || ci.OrderBy[0] == "Descending"
			idx := make([]int, len(results))
			for i := range idx {
				idx[i] = i
			}
			slices.SortStableFunc(idx, func(a, b int) int {
				if desc {
					return cmp.Compare(results[b].scores[c], results[a].scores[c])
				}
				return cmp.Compare(results[a].scores[c], results[b].scores[c])
			})
			rank := 1
			for k, i := range idx {
				if k > 0 && results[i].scores[c] != results[idx[k-1]].scores[c] {
					rank++
				}
				fused[i] += w / float64(60+rank)
			}
		}
		order := make([]int, len(results))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(fused[b], fused[a]) })
		sorted := make([]result, len(results))
		for k, i := range order {
			sorted[k] = results[i]
		}
		results = sorted
	}
	skip := 0
	if info.Skip != nil {
		skip = *info.Skip
	}
	results = results[min(skip, len(results)):]
	if info.Take != nil && len(results) > *info.Take {
		results = results[:*info.Take]
	}
	var out []string
	for _, r := range results {
		out = append(out, string(AppendJSON(nil, r.data)))
	}
	return out
}

// orUndefined is v, or Undefined for a missing value.
func orUndefined(v any) any {
	if v == nil {
		return Undefined
	}
	return v
}

// Issue 26: RRF's weights may be a parameter (the Python SDK's tests pass
// them so): the query ranks as with the same literal weights, and its
// plan carries them.
func TestIssue26_RRFWeightsParameter(t *testing.T) {
	var docs []any
	for i, text := range []string{"swim run", "run run far", "swim", "a long swim and a short run", "nothing"} {
		v, err := Decode([]byte(fmt.Sprintf(`{"id":"d%d","_rid":"r%d","text":%q}`, i, i, text)))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, v)
	}
	const rrf = `SELECT VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "swim"), FullTextScore(c.text, "run"), %s)`
	for _, w := range [][]any{{1.0, 3.0}, {-1.0, 0.5}} {
		literal := MustRun(t, MustParse(t, fmt.Sprintf(rrf, string(AppendJSON(nil, w)))), docs, nil)
		q := MustParse(t, fmt.Sprintf(rrf, "@w"))
		params := Params{"@w": w}
		if got := MustRun(t, q, docs, params); !slices.Equal(got, literal) {
			t.Errorf("weights %v as a parameter: %v, as a literal: %v", w, got, literal)
		}
		info, ok := q.HybridPlan(params, HybridOptions{})
		if !ok || len(info.ComponentWeights) != 2 || info.ComponentWeights[1] != max(w[1].(float64), -w[1].(float64)) {
			t.Errorf("plan with weights %v: %v %v", w, ok, info.ComponentWeights)
		}
	}
	q := MustParse(t, fmt.Sprintf(rrf, "@w"))
	if err := q.Run(sliceSource(docs), Params{"@w": []any{1.0}}, Options{Now: corpusNow}, func(any) bool { return true }); err == nil {
		t.Error("one weight for two scores: no error")
	}
}

// A FullTextScore of several words is scored by its first word
// (fulltext.go): the plan's statistics count the documents with that
// word, whether the string is a literal or a parameter, so that the
// client's fusion ranks as the whole query does.
func TestHybridPlanCountsASearchStringByItsFirstWord(t *testing.T) {
	for _, c := range []struct {
		arg    string
		params Params
	}{
		{`"United States"`, nil},
		{`'United States'`, nil},
		{`@s`, Params{"@s": "United States"}},
	} {
		q := MustParse(t, `SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.text, `+c.arg+`)`)
		info, ok := q.HybridPlan(c.params, HybridOptions{})
		if !ok || !strings.Contains(info.GlobalStatisticsQuery, "FullTextContains(c.text, ") ||
			!strings.Contains(info.GlobalStatisticsQuery, "United") || strings.Contains(info.GlobalStatisticsQuery, "States") {
			t.Errorf("%s: %v %s", c.arg, ok, info.GlobalStatisticsQuery)
		}
	}
}
