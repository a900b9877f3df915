package query

import (
	_ "embed"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"
	"github.com/kljensen/snowball/spanish"
)

// Full-text search: FullTextContains, FullTextContainsAll,
// FullTextContainsAny and FullTextScore read a text the way the service's
// full-text analyzer does: its words (runs of letters and digits, with
// apostrophes inside a word), lower-cased, without the stopwords of the
// text's language (the service removes them for English only), each
// reduced to its stem (Snowball). The language is the one the container's
// full-text policy gives the text's path (Options.Languages), else its
// default language, else English. The service answers the same without a
// full-text policy or index, only more slowly.
//
// A search string is a phrase to FullTextContains and its All and Any
// forms (fullTextExpr.phrases): its terms, in order, one after the other.
// FullTextScore scores it by its first term. The service once matched a
// string by its first word ("United States" matched "United Kingdom"; the
// SDKs' live tests still list those items as allowed) and now matches the
// phrase (the same tests count 13 items, the ones with "United States"),
// while its ranking still weighs "United" alone (their TOP 10 leaves out
// an item with the whole phrase in a long text, and holds one with
// "United" alone).

//go:embed stopwords_en.txt
var stopwordsEn string

// englishStopwords is the read-only set of English stopwords.
var englishStopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(stopwordsEn, "\n") {
		if w := strings.TrimSpace(line); w != "" && !strings.HasPrefix(w, "#") {
			m[w] = true
		}
	}
	return m
}()

// analyzer turns a text into its terms for one language.
type analyzer struct {
	stop map[string]bool     // nil: no stopwords
	stem func(string) string // nil: words are their own stems
}

// analyzerFor returns the analyzer of a full-text policy language such as
// "en-US"; languages without a Snowball stemmer here keep their words
// whole.
func analyzerFor(lang string) analyzer {
	switch strings.ToLower(strings.SplitN(lang, "-", 2)[0]) {
	case "", "en":
		return analyzer{stop: englishStopwords, stem: func(w string) string { return english.Stem(w, true) }}
	case "fr":
		return analyzer{stem: func(w string) string { return french.Stem(w, true) }}
	case "es":
		return analyzer{stem: func(w string) string { return spanish.Stem(w, true) }}
	}
	return analyzer{}
}

// terms returns the terms of text, in order.
func (a analyzer) terms(text string) []string {
	var out []string
	for _, w := range words(text) {
		if a.stop[w] {
			continue
		}
		if a.stem != nil {
			w = a.stem(w)
		}
		out = append(out, w)
	}
	return out
}

// words splits text into lower-case words: runs of letters and digits,
// with an apostrophe kept between two letters ("don't").
func words(text string) []string {
	var out []string
	var b strings.Builder
	rs := []rune(text)
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case (r == '\'' || r == '\u2019') && b.Len() > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]):
			b.WriteByte('\'')
		default:
			flush()
		}
	}
	flush()
	return out
}

// fullTextKind is which full-text function a fullTextExpr is.
type fullTextKind uint8

// The full-text functions.
const (
	ftContains fullTextKind = iota
	ftContainsAll
	ftContainsAny
	ftScore
	// The gateway's hybrid search plans split FullTextScore in two: each
	// partition key range counts its documents, their words and the
	// documents with each term (_FullTextWordCount, with COUNT and
	// COUNTIF of FullTextContains), and the client, having summed the
	// counts, asks each range for _FullTextScore(x, [terms], documents,
	// words, [hits]): the BM25 score against those statistics, the one
	// FullTextScore computes from the whole container (docs/architecture.md,
	// the client's pipeline gets what the service gives it).
	ftWordCount
	ftScoreGiven
)

// fullTextExpr is a call of a full-text function: text is the searched
// expression (usually a property path), path its path from the document
// root ("/text", "" when it is not a path), search the searched strings.
type fullTextExpr struct {
	kind   fullTextKind
	text   expr
	path   string
	search []expr
	given  []expr // ftScoreGiven: the documents, words and hits
	span
}

// language returns the analyzer of x's text in run rs.
func (x *fullTextExpr) analyzer(rs *runState) analyzer {
	lang, ok := rs.languages[x.path]
	if !ok || x.path == "" {
		lang = rs.defaultLanguage
	}
	return analyzerFor(lang)
}

func (x *fullTextExpr) eval(e *env) any {
	text, ok := x.text.eval(e).(string)
	if !ok {
		return Undefined
	}
	a := x.analyzer(e.rs)
	if x.kind == ftWordCount {
		return float64(len(a.terms(text)))
	}
	phrases, ok := x.phrases(e, a)
	if !ok {
		return Undefined
	}
	terms := a.terms(text)
	switch x.kind {
	case ftScore:
		// Scored by each search string's first term (the service ranks
		// the items with "United" alone for "United States", and not one
		// with the whole phrase but a long text), as lapse's hybrid search
		// plan counts them (hybridplan.go).
		firsts := firstTerms(phrases)
		return bm25(e.rs.stats(x, firsts), terms, firsts)
	case ftScoreGiven:
		st, ok := x.givenStats(e, len(phrases))
		if !ok {
			return Undefined
		}
		return bm25(st, terms, phrases)
	}
	found := func(i int) bool { return countPhrase(terms, phrases[i]) > 0 }
	switch x.kind {
	case ftContainsAll:
		for i := range phrases {
			if !found(i) {
				return false
			}
		}
		return true
	case ftContainsAny:
		for i := range phrases {
			if found(i) {
				return true
			}
		}
		return false
	}
	return found(0)
}

// phrases returns the terms of each string x searches for, and false
// when one of them is not a string. The full-text filters take a search
// string for a phrase: a text has it when it has all its terms, in order,
// one after the other (the service's answer for "United States" over the
// SDKs' live-test items holds the items with the two words, 13, and not
// the two with "United" alone). A string of stopwords only has no terms
// and is found nowhere. FullTextScore scores a string by its first term.
func (x *fullTextExpr) phrases(e *env, a analyzer) ([][]string, bool) {
	out := make([][]string, len(x.search))
	for i, s := range x.search {
		str, ok := s.eval(e).(string)
		if !ok {
			return nil, false
		}
		out[i] = a.terms(str)
	}
	return out, true
}

// firstTerms returns the first term of each phrase as a phrase of its
// own (none for an empty one).
func firstTerms(phrases [][]string) [][]string {
	out := make([][]string, len(phrases))
	for i, ph := range phrases {
		out[i] = ph[:min(1, len(ph))]
	}
	return out
}

// countPhrase returns how many times phrase occurs in terms, its terms
// one after the other; 0 for an empty phrase.
func countPhrase(terms, phrase []string) int {
	n := 0
	for i := 0; len(phrase) > 0 && i+len(phrase) <= len(terms); i++ {
		if slices.Equal(terms[i:i+len(phrase)], phrase) {
			n++
		}
	}
	return n
}

// BM25's parameters, the usual ones.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// corpusStats are the statistics of one FullTextScore call over the
// container's documents, as the service gathers them: the number of
// documents, the number of terms of the searched texts, and for each
// searched phrase the number of documents whose text has it.
type corpusStats struct {
	docs, words int
	hits        []int
}

// bm25 is the BM25 score of a document whose searched text has terms: the
// sum over the searched phrases of idf·tf·(k1+1)/(tf+k1·(1−b+b·dl/avgdl)),
// tf a phrase's occurrences.
func bm25(st *corpusStats, terms []string, phrases [][]string) float64 {
	if st.docs == 0 || st.words == 0 {
		return 0
	}
	avg := float64(st.words) / float64(st.docs)
	dl := float64(len(terms))
	score := 0.0
	for i, ph := range phrases {
		tf := float64(countPhrase(terms, ph))
		if tf == 0 {
			continue
		}
		n := float64(st.hits[i])
		idf := math.Log(1 + (float64(st.docs)-n+0.5)/(n+0.5))
		score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avg))
	}
	return score
}

// givenStats returns the statistics a _FullTextScore call is given, and
// false when they are not counts, or not one hit count per term.
func (x *fullTextExpr) givenStats(e *env, terms int) (*corpusStats, bool) {
	count := func(v any) (int, bool) {
		n, ok := v.(float64)
		if !ok || n < 0 || n != math.Trunc(n) || n > math.MaxInt32 {
			return 0, false
		}
		return int(n), true
	}
	docs, ok1 := count(x.given[0].eval(e))
	words, ok2 := count(x.given[1].eval(e))
	hits, ok3 := x.given[2].eval(e).([]any)
	if !ok1 || !ok2 || !ok3 || len(hits) != terms {
		return nil, false
	}
	st := &corpusStats{docs: docs, words: words, hits: make([]int, terms)}
	for i, h := range hits {
		if st.hits[i], ok1 = count(h); !ok1 {
			return nil, false
		}
	}
	return st, true
}

// stats returns, computing it the first time, the corpus statistics of x:
// every document of the corpus, bound to the query's FROM source the way
// the query binds its own documents.
func (rs *runState) stats(x *fullTextExpr, phrases [][]string) *corpusStats {
	if st, ok := rs.corpusStats[x]; ok {
		return st
	}
	st := &corpusStats{hits: make([]int, len(phrases))}
	a := x.analyzer(rs)
	q := rs.top
	ce := &env{vals: make([]any, q.nslots), rs: rs}
	rs.corpus(func(doc any) bool {
		st.docs++
		for i := range ce.vals {
			ce.vals[i] = Undefined
		}
		ce.doc = doc
		if len(q.from) > 0 {
			ce.vals[0] = q.from[0].x.eval(ce)
		}
		text, ok := x.text.eval(ce).(string)
		if !ok {
			return true
		}
		terms := a.terms(text)
		st.words += len(terms)
		for i, ph := range phrases {
			if countPhrase(terms, ph) > 0 {
				st.hits[i]++
			}
		}
		return true
	})
	if rs.corpusStats == nil {
		rs.corpusStats = map[*fullTextExpr]*corpusStats{}
	}
	rs.corpusStats[x] = st
	return st
}

// bindFullText binds a call of a full-text function: FullTextContains(x,
// s), FullTextContainsAll(x, s, ...), FullTextContainsAny(x, s, ...), and
// FullTextScore(x, s, ...) or FullTextScore(x, [s, ...]), whose strings
// must be literals or parameters and which only ORDER BY RANK may call.
func (b *binder) bindFullText(c *callExpr, sc *scope) (expr, error) {
	name := strings.ToUpper(c.name)
	kind := map[string]fullTextKind{"FULLTEXTCONTAINS": ftContains, "FULLTEXTCONTAINSALL": ftContainsAll,
		"FULLTEXTCONTAINSANY": ftContainsAny, "FULLTEXTSCORE": ftScore,
		"_FULLTEXTSCORE": ftScoreGiven, "_FULLTEXTWORDCOUNT": ftWordCount}[name]
	if kind == ftScore && !b.inRank {
		return nil, errAt(codeScoreOutside, span{c.start, c.end}, msgScoreOutside)
	}
	switch {
	case kind == ftWordCount && len(c.args) != 1:
		return nil, errAt(codeSemantic, c.span, "The %s function requires 1 argument(s).", name)
	case kind == ftScoreGiven && len(c.args) != 5:
		return nil, errAt(codeSemantic, c.span, "The %s function requires 5 argument(s).", name)
	case kind == ftWordCount:
	case kind == ftContains && len(c.args) != 2:
		return nil, errAt(codeSemantic, c.span, "The %s function requires 2 argument(s).", name)
	case len(c.args) < 2:
		return nil, errAt(codeSemantic, c.span, "The %s function requires 2 or more argument(s).", name)
	}
	if err := b.bindList(c.args, sc); err != nil {
		return nil, err
	}
	x := &fullTextExpr{kind: kind, text: c.args[0], search: c.args[1:], span: span{c.start, c.end}}
	x.path = b.pathString(c.args[0])
	if kind == ftScoreGiven {
		arr, ok := c.args[1].(*arrayExpr)
		if !ok || len(arr.elems) == 0 {
			return nil, errAt(codeSemantic, x.span, msgScoreTermsList)
		}
		x.search, x.given = arr.elems, c.args[2:]
	}
	if kind == ftScore {
		if arr, ok := c.args[1].(*arrayExpr); ok && len(c.args) == 2 {
			x.search = arr.elems
		}
		if len(x.search) == 0 {
			return nil, errAt(codeSemantic, x.span, msgScoreTermsList)
		}
		for _, s := range x.search {
			if !stringLiteral(s) {
				return nil, errAt(codeSemantic, x.span, msgScoreTermsList)
			}
		}
	}
	return x, nil
}

// pathString returns the path from the document root of a bound property
// path of the current query's first FROM source ("/a/b"), or "".
func (b *binder) pathString(x expr) string {
	var steps []string
	for {
		switch v := x.(type) {
		case *propExpr:
			steps = append(steps, v.name)
			x = v.x
			continue
		case *indexExpr:
			s, ok := stepName(v.idx)
			if !ok {
				return ""
			}
			steps = append(steps, s)
			x = v.x
			continue
		case *aliasRef:
			if v.depth != 0 || v.slot != 0 || len(b.from) == 0 || b.from[0].iterate || b.from[0].sub != nil {
				return ""
			}
			prefix, ok := pathOf(b.from[0].x, nil)
			if !ok {
				return ""
			}
			slices.Reverse(steps)
			return "/" + strings.Join(append(prefix, steps...), "/")
		}
		return ""
	}
}

// stringLiteral reports whether x is a string literal or a parameter.
func stringLiteral(x expr) bool {
	switch v := x.(type) {
	case *paramExpr:
		return true
	case *litExpr:
		_, ok := v.v.(string)
		return ok
	}
	return false
}
