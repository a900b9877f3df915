package query

import (
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, and that a query it accepts
// runs without panicking over a small document set, with and without
// parameters. Its seeds are every query of the golden corpus.
func FuzzParse(f *testing.F) {
	for _, file := range corpusFiles(f) {
		for _, c := range readCases(f, file) {
			f.Add(c.query)
		}
	}
	docs := fuzzDocs(f)
	params := Params{"@pk": "a", "@n": 2.0, "@a": []any{1.0, "x"}, "@o": &Object{Keys: []string{"k"}, Vals: []any{1.0}}}
	f.Fuzz(func(t *testing.T, text string) {
		q, err := Parse(text)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q) error %T is not *Error", text, err)
			}
			return
		}
		rows := 0
		err = q.Run(sliceSource(docs), params, Options{}, func(v any) bool {
			AppendJSON(nil, v)
			rows++
			return rows < 1000
		})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Run(%q) error %T is not *Error", text, err)
			}
		}
		q.Equalities(params)
	})
}

// FuzzDecode checks that Decode never panics and that what it accepts
// encodes to JSON that decodes to an equal value.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(benchDoc))
	for _, s := range []string{`{}`, `[]`, `"\ud83d\ude00"`, `-0.0e-0`, `{"a":{"a":[1,{"a":null}]},"a":2}`, "\"\xff\"", `1e999`} {
		f.Add([]byte(s))
	}
	for _, file := range []string{"people", "mixed", "ms-samples"} {
		f.Add([]byte(readFile(f, filepath.Join("testdata", "docs", file+".json"))))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if err != nil {
			return
		}
		out := AppendJSON(nil, v)
		w, err := Decode(out)
		if err != nil {
			t.Fatalf("Decode(AppendJSON(Decode(%q))) = %v", b, err)
		}
		if !Equal(v, w) {
			t.Fatalf("round trip of %q changed %s into %s", b, out, AppendJSON(nil, w))
		}
		if Compare(v, w) != 0 {
			t.Fatalf("Compare of a round trip of %q is not 0", b)
		}
	})
}

// fuzzDocs is the document set fuzzed queries run over.
func fuzzDocs(tb testing.TB) []any {
	return append(MustDocs(tb, "mixed"), MustDocs(tb, "people")...)
}
