package query

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// MustDecodeAll decodes JSON document texts.
func MustDecodeAll(tb testing.TB, texts ...string) []any {
	tb.Helper()
	out := make([]any, len(texts))
	for i, s := range texts {
		v, err := Decode([]byte(s))
		if err != nil {
			tb.Fatalf("Decode(%s): %v", s, err)
		}
		out[i] = v
	}
	return out
}

// MustRunOpts runs q over docs with opts and returns its rows as JSON
// texts.
func MustRunOpts(tb testing.TB, q *Query, docs []any, opts Options) []string {
	tb.Helper()
	var rows []string
	if err := q.Run(sliceSource(docs), nil, opts, func(row any) bool {
		rows = append(rows, string(AppendJSON(nil, row)))
		return true
	}); err != nil {
		tb.Fatal(err)
	}
	return rows
}

// issue 13.12: the full-text and ranking errors are the service's: code,
// span and message of the queries its own baselines record (the .NET
// SDK's LINQ baselines, run against the service).
func TestFullTextAndRankErrorsAreTheServices(t *testing.T) {
	for _, c := range []struct {
		name, query, want string
	}{
		{"RRFOfOneScore", `SELECT VALUE root["Pk"] FROM root ORDER BY RANK RRF(FullTextScore(root["StringField"], "test1"))`,
			"SC2221 34-96 The ORDER BY RANK clause must be followed by a VectorDistance and/or a FullTextScore function call."},
		{"RRFOfANumber", `SELECT c FROM c ORDER BY RANK RRF(FullTextScore(c.d, "a"), 20.5)`,
			"SC2221 16-64 The ORDER BY RANK clause must be followed by a VectorDistance and/or a FullTextScore function call."},
		{"RankOfAPath", `SELECT c FROM c ORDER BY RANK c.x`,
			"SC2221 16-33 The ORDER BY RANK clause must be followed by a VectorDistance and/or a FullTextScore function call."},
		{"ScoreInWhere", `SELECT VALUE root FROM root WHERE (FullTextScore(root["StringField"], "test1") != 123)`,
			"SC2240 35-78 The FullTextScore function is only allowed in the ORDER BY RANK clause."},
		{"ScoreInRRFInWhere", `SELECT VALUE root FROM root WHERE (RRF(FullTextScore(root["StringField"], "test1")) != 123)`,
			"SC2240 39-82 The FullTextScore function is only allowed in the ORDER BY RANK clause."},
		{"ScoreInSelect", `SELECT FullTextScore(c.text, "keyword") AS Score FROM c`,
			"SC2240 7-39 The FullTextScore function is only allowed in the ORDER BY RANK clause."},
		{"RRFInSelect", `SELECT VALUE RRF(VectorDistance(c.v, [1]), VectorDistance(c.v, [2])) FROM c`,
			"SC2005 13-16 'RRF' is not a recognized built-in function name."},
		{"NestedRRF", `SELECT c FROM c ORDER BY RANK RRF(RRF(FullTextScore(c.d, "a"), FullTextScore(c.d, "b")), FullTextScore(c.d, "c"))`,
			"SC2005 34-37 'RRF' is not a recognized built-in function name."},
		{"Join", `SELECT VALUE doc0 FROM root JOIN doc0 IN root["ArrayField"] ORDER BY RANK FullTextScore(root["StringField"], "test1")`,
			"SC2224 23-59 The JOIN operator is not allowed with the ORDER BY RANK clause."},
		{"FromIn", `SELECT VALUE t FROM t IN c.tags ORDER BY RANK FullTextScore(t.text, "a")`,
			"SC2223 20-31 The FROM clause with the IN operator is not allowed with the ORDER BY RANK clause."},
		{"FromSubquery", `SELECT VALUE r0 FROM (SELECT VALUE root FROM root OFFSET 1 LIMIT 2147483647) AS r0 ORDER BY RANK FullTextScore(r0["StringField"], "test1")`,
			"SC2225 21-76 Subqueries in the FROM clause are not allowed with the ORDER BY RANK clause."},
		{"InSubquery", `SELECT VALUE COUNT(1) FROM (SELECT VALUE root FROM root ORDER BY RANK FullTextScore(root["StringField"], "test1")) AS r0 GROUP BY r0["Pk"]`,
			"SC2228 56-113 The ORDER BY RANK clause is not supported in subqueries."},
		{"WeightsNotNumbers", `SELECT VALUE root["Pk"] FROM root ORDER BY RANK RRF(FullTextScore(root["StringField"], "test1"), FullTextScore(root["StringField"], "test1"), [2, FullTextScore(root["StringField"], "test1", "text2")])`,
			"SC2229 34-200 The last parameter of the RRF function is an optional array of weights. When present, it must be a literal array of numbers, one for each of the component scores used for the RRF function. The length of this array must be the same as the number of the component scores."},
		{"WeightsTooFew", `SELECT c FROM c ORDER BY RANK RRF(FullTextScore(c.d, "a"), FullTextScore(c.d, "b"), [1])`,
			"SC2229 16-88 The last parameter of the RRF function is an optional array of weights. When present, it must be a literal array of numbers, one for each of the component scores used for the RRF function. The length of this array must be the same as the number of the component scores."},
		// The service's messages (its code here is not known).
		{"SortOrder", `SELECT TOP 10 c.index FROM c WHERE FullTextContains(c.title, 'John') ORDER BY RANK FullTextScore(c.title, 'John') DESC`,
			"SC2221 69-118 Specifying a sort order (ASC or DESC) in the ORDER BY RANK clause is not allowed."},
		{"Distinct", `SELECT DISTINCT c.name FROM c ORDER BY RANK FullTextScore(c.d, ["beaver"])`,
			"SC2221 30-74 The DISTINCT keyword is not allowed with the ORDER BY RANK clause."},
		{"TermsNotLiterals", `SELECT c FROM c ORDER BY RANK FullTextScore(c.d, [c.id > 2 ? "a" : "b"])`,
			"SC2001 30-72 The second argument of the FullTextScore function must be a non-empty array of string literals."},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.query)
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("Parse(%s) = %v, want an *Error", c.query, err)
			}
			if got := fmt.Sprintf("%s %d-%d %s", e.Code, e.Start, e.End, e.Message); got != c.want {
				t.Errorf("%s\ngot  %s\nwant %s", c.query, got, c.want)
			}
		})
	}
}

// issue 13.12: full-text functions compare words lower-cased, by their
// stems, without English stopwords, and are served without any full-text
// policy (the service answers them without one too, only more slowly).
func TestFullTextContainsComparesStemsWithoutStopwords(t *testing.T) {
	docs := MustDecodeAll(t, `{"text":"The Runners were RUNNING down the hills"}`)
	q := MustParse(t, `SELECT VALUE [FullTextContains(c.text, "runner"), FullTextContains(c.text, "run"),
		FullTextContains(c.text, "hill"), FullTextContains(c.text, "the"), FullTextContains(c.text, "walking"),
		FullTextContainsAll(c.text, "hills", "running"), FullTextContainsAll(c.text, "hills", "walk"),
		FullTextContainsAny(c.text, "walk", "hill"), FullTextContainsAny(c.text, "walk", "swim")] FROM c`)
	got := MustRunOpts(t, q, docs, Options{})
	if diff := cmp.Diff([]string{`[true,true,true,false,false,true,false,true,false]`}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A search string is a phrase: its terms in order, one after the other,
// as the service answers "United States" over the SDKs' live-test items
// today (13 items: those with the two words, not those with "United" or
// "States" alone). A phrase counts once per occurrence in FullTextScore.
func TestFullTextSearchStringIsAPhrase(t *testing.T) {
	docs := MustDecodeAll(t,
		`{"id":"us","text":"a law of the United States"}`,
		`{"id":"uk","text":"a peerage of the United Kingdom"}`,
		`{"id":"states","text":"iron in several oxidation states"}`,
		`{"id":"apart","text":"states of the united kingdom"}`,
		`{"id":"twice","text":"United States and again the United States"}`)
	q := MustParse(t, `SELECT VALUE c.id FROM c WHERE FullTextContains(c.text, "United States")`)
	if diff := cmp.Diff([]string{`"us"`, `"twice"`}, MustRunOpts(t, q, docs, Options{})); diff != "" {
		t.Errorf("FullTextContains (-want +got):\n%s", diff)
	}
	q = MustParse(t, `SELECT VALUE c.id FROM c WHERE FullTextContainsAny(c.text, "united kingdom", "oxidation states")`)
	if diff := cmp.Diff([]string{`"uk"`, `"states"`, `"apart"`}, MustRunOpts(t, q, docs, Options{})); diff != "" {
		t.Errorf("FullTextContainsAny (-want +got):\n%s", diff)
	}
	q = MustParse(t, `SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "United States")`)
	if got := MustRunOpts(t, q, docs, Options{}); len(got) != 5 || got[0] != `"twice"` || got[1] != `"us"` {
		t.Errorf("FullTextScore ranks %v, want twice then us first", got)
	}
}

// issue 13.12: FullTextScore weighs a term by how many of the container's
// documents have it (BM25's idf and average length come from all of
// them, as the service gathers its statistics), not only by the
// documents the query reads: a term every other document has counts for
// little.
func TestFullTextScoreWeighsTermsByTheWholeContainer(t *testing.T) {
	scope := MustDecodeAll(t, `{"id":"A","text":"alpha alpha"}`, `{"id":"B","text":"beta"}`)
	others := MustDecodeAll(t, `{"id":"1","text":"alpha gamma"}`, `{"id":"2","text":"alpha delta"}`,
		`{"id":"3","text":"alpha epsilon"}`, `{"id":"4","text":"alpha zeta"}`, `{"id":"5","text":"alpha theta"}`)
	q := MustParse(t, `SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "alpha", "beta")`)
	if diff := cmp.Diff([]string{`"A"`, `"B"`}, MustRunOpts(t, q, scope, Options{})); diff != "" {
		t.Errorf("statistics of the scope alone (-want +got):\n%s", diff)
	}
	all := append(append([]any{}, scope...), others...)
	opts := Options{Corpus: sliceSource(all)}
	if diff := cmp.Diff([]string{`"B"`, `"A"`}, MustRunOpts(t, q, scope, opts)); diff != "" {
		t.Errorf("statistics of the whole container (-want +got):\n%s", diff)
	}
	if !q.NeedsCorpus() || MustParse(t, `SELECT * FROM c ORDER BY RANK VectorDistance(c.v, [1])`).NeedsCorpus() {
		t.Error("NeedsCorpus: want true for FullTextScore only")
	}
}

// issue 13.12: the language of a text is the one the container's
// full-text policy gives its path: French words meet by their French
// stems, and English stopwords are words like any other.
func TestFullTextLanguageIsThePolicys(t *testing.T) {
	docs := MustDecodeAll(t, `{"fr":"il mangeait the pain","en":"il mangeait the pain"}`)
	q := MustParse(t, `SELECT VALUE [FullTextContains(c.fr, "manger"), FullTextContains(c.fr, "the"),
		FullTextContains(c.en, "manger"), FullTextContains(c.en, "the")] FROM c`)
	got := MustRunOpts(t, q, docs, Options{Languages: map[string]string{"/fr": "fr-FR"}, DefaultLanguage: "en-US"})
	if diff := cmp.Diff([]string{`[true,true,false,false]`}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// issue 13.12: rows that rank the same keep the order of their
// documents' _rid (the service breaks RRF ties by _rid), and ORDER BY RANK
// is a HybridSearch query the gateway leaves to the SDKs' pipelines.
func TestRankTiesFollowRidOrder(t *testing.T) {
	docs := MustDecodeAll(t,
		`{"id":"2","_rid":"b","v":[1,0]}`, `{"id":"1","_rid":"a","v":[0,1]}`, `{"id":"3","_rid":"c","v":[1,1]}`)
	q := MustParse(t, `SELECT VALUE c.id FROM c ORDER BY RANK RRF(VectorDistance(c.v, [1,0]), VectorDistance(c.v, [0,1]))`)
	// 1 and 2 rank 1st and 3rd once each and tie, above 3 (2nd twice);
	// 1's _rid comes first, though its document comes second.
	if diff := cmp.Diff([]string{`"1"`, `"2"`, `"3"`}, MustRunOpts(t, q, docs, Options{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"HybridSearch"}, q.Features()); diff != "" {
		t.Errorf("Features (-want +got):\n%s", diff)
	}
}
