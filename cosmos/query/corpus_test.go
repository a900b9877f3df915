package query

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// update rewrites the expected results of the golden query corpus.
var update = flag.Bool("update", false, "rewrite the expected results in testdata/queries")

// corpusNow is the clock of every corpus query.
var corpusNow = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)

// corpusCase is one query of the golden corpus, read from a case file:
//
//	=== name
//	docs: set            (testdata/docs/set.json; default: none)
//	params: {"@p": 1}    (optional)
//	doc: where           (optional: the expected result is documented by
//	                      Microsoft and -update leaves it alone)
//	now: RFC 3339 time   (optional: the query's clock; default corpusNow)
//	tolerance: 1e-5      (optional: numbers match within this relative error)
//	differs: why         (optional, reference cases: lapse knowingly gives
//	                      another result than the documented one)
//	query:
//	SELECT ...
//	result:
//	[ rows, one per line ]
//	   or
//	error: SC1001 7-15 Syntax error, incorrect syntax near 'x'.
type corpusCase struct {
	name    string
	docs    string
	params  string
	doc     string
	now     string
	tol     string
	differs string
	query   string
	result  string // the text after "result:" or "error:"
	isErr   bool
}

// readCases parses a case file.
func readCases(tb testing.TB, path string) []*corpusCase {
	tb.Helper()
	data := []byte(readFile(tb, path))
	var cases []*corpusCase
	var c *corpusCase
	section := ""
	var body []string
	flush := func() {
		if c == nil {
			return
		}
		text := strings.TrimRight(strings.Join(body, "\n"), "\n ")
		switch section {
		case "query":
			c.query = text
		case "result", "error":
			c.result = strings.TrimSpace(c.result + text)
		}
		body = nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "=== "):
			flush()
			c = &corpusCase{name: strings.TrimSpace(line[4:])}
			cases = append(cases, c)
			section = ""
		case c == nil:
			continue
		case section == "" && strings.HasPrefix(line, "docs:"):
			c.docs = strings.TrimSpace(line[5:])
		case section == "" && strings.HasPrefix(line, "params:"):
			c.params = strings.TrimSpace(line[7:])
		case section == "" && strings.HasPrefix(line, "doc:"):
			c.doc = strings.TrimSpace(line[4:])
		case section == "" && strings.HasPrefix(line, "now:"):
			c.now = strings.TrimSpace(line[4:])
		case section == "" && strings.HasPrefix(line, "tolerance:"):
			c.tol = strings.TrimSpace(line[len("tolerance:"):])
		case section == "" && strings.HasPrefix(line, "differs:"):
			c.differs = strings.TrimSpace(line[len("differs:"):])
		case line == "query:" && section == "":
			section = "query"
		case section == "query" && (line == "result:" || strings.HasPrefix(line, "error:")):
			flush()
			if line == "result:" {
				section = "result"
			} else {
				section, c.isErr = "error", true
				c.result = strings.TrimSpace(line[len("error:"):]) + " "
			}
		default:
			body = append(body, line)
		}
	}
	flush()
	return cases
}

// readFile returns a file's contents.
func readFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// writeCases writes cases back in the case file format.
func writeCases(path string, cases []*corpusCase) error {
	var b strings.Builder
	for i, c := range cases {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "=== %s\n", c.name)
		if c.docs != "" {
			fmt.Fprintf(&b, "docs: %s\n", c.docs)
		}
		if c.params != "" {
			fmt.Fprintf(&b, "params: %s\n", c.params)
		}
		if c.doc != "" {
			fmt.Fprintf(&b, "doc: %s\n", c.doc)
		}
		if c.now != "" {
			fmt.Fprintf(&b, "now: %s\n", c.now)
		}
		if c.tol != "" {
			fmt.Fprintf(&b, "tolerance: %s\n", c.tol)
		}
		if c.differs != "" {
			fmt.Fprintf(&b, "differs: %s\n", c.differs)
		}
		fmt.Fprintf(&b, "query:\n%s\n", c.query)
		if c.isErr {
			fmt.Fprintf(&b, "error: %s\n", c.result)
		} else {
			fmt.Fprintf(&b, "result:\n%s\n", c.result)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// MustDocs reads a document set from testdata/docs.
func MustDocs(tb testing.TB, name string) []any {
	tb.Helper()
	if name == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join("testdata", "docs", name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	v, err := Decode(data)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	docs, ok := v.([]any)
	if !ok {
		tb.Fatalf("%s: not an array of documents", name)
	}
	return docs
}

// MustParams decodes a params line.
func MustParams(tb testing.TB, text string) Params {
	tb.Helper()
	if text == "" {
		return nil
	}
	v, err := Decode([]byte(text))
	if err != nil {
		tb.Fatalf("params %s: %v", text, err)
	}
	o, ok := v.(*Object)
	if !ok {
		tb.Fatalf("params %s: not an object", text)
	}
	p := Params{}
	for i, k := range o.Keys {
		p[k] = o.Vals[i]
	}
	return p
}

// runCase runs a case and returns its rows as JSON texts, or its error as
// "CODE start-end message".
func runCase(tb testing.TB, c *corpusCase) ([]string, string) {
	tb.Helper()
	q, err := Parse(c.query)
	if err != nil {
		e := err.(*Error)
		return nil, fmt.Sprintf("%s %d-%d %s", e.Code, e.Start, e.End, e.Message)
	}
	docs := MustDocs(tb, c.docs)
	now := corpusNow
	if c.now != "" {
		if now, err = time.Parse(time.RFC3339Nano, c.now); err != nil {
			tb.Fatalf("now: %v", err)
		}
	}
	var rows []string
	err = q.Run(func(yield func(any) bool) {
		for _, d := range docs {
			if !yield(d) {
				return
			}
		}
	}, MustParams(tb, c.params), Options{Now: now}, func(row any) bool {
		rows = append(rows, string(AppendJSON(nil, row)))
		return true
	})
	if err != nil {
		e := err.(*Error)
		return nil, fmt.Sprintf("%s %d-%d %s", e.Code, e.Start, e.End, e.Message)
	}
	return rows, ""
}

// canonicalRows re-encodes an expected result array, one row per string.
func canonicalRows(tb testing.TB, text string) []string {
	tb.Helper()
	v, err := Decode([]byte(text))
	if err != nil {
		tb.Fatalf("expected result %q: %v", text, err)
	}
	arr, ok := v.([]any)
	if !ok {
		tb.Fatalf("expected result is not an array: %s", text)
	}
	var rows []string
	for _, r := range arr {
		rows = append(rows, string(AppendJSON(nil, r)))
	}
	return rows
}

// sortKeys re-encodes JSON rows with every object's properties sorted.
func sortKeys(tb testing.TB, rows []string) []string {
	tb.Helper()
	var sortObj func(v any) any
	sortObj = func(v any) any {
		switch x := v.(type) {
		case []any:
			for i := range x {
				x[i] = sortObj(x[i])
			}
		case *Object:
			o := &Object{}
			for _, i := range sortedIdx(x) {
				o.Set(x.Keys[i], sortObj(x.Vals[i]))
			}
			return o
		}
		return v
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		v, err := Decode([]byte(r))
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = string(AppendJSON(nil, sortObj(v)))
	}
	return out
}

// formatRows writes rows as a JSON array with one row per line.
func formatRows(rows []string) string {
	if len(rows) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, r := range rows {
		b.WriteString("  ")
		b.WriteString(r)
		if i < len(rows)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]")
	return b.String()
}

// corpusFiles lists the case files.
func corpusFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "queries", "*.txt"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no case files: %v", err)
	}
	return files
}

func TestCorpus(t *testing.T) {
	total := 0
	for _, file := range corpusFiles(t) {
		cases := readCases(t, file)
		changed := false
		for _, c := range cases {
			total++
			t.Run(strings.TrimSuffix(filepath.Base(file), ".txt")+"/"+c.name, func(t *testing.T) {
				rows, errText := runCase(t, c)
				if *update && c.doc == "" {
					if errText != "" {
						c.isErr, c.result = true, errText
					} else {
						c.isErr, c.result = false, formatRows(rows)
					}
					changed = true
					return
				}
				if c.isErr || errText != "" {
					if diff := cmp.Diff(c.result, errText); diff != "" || !c.isErr {
						t.Errorf("%s\nerror mismatch (-want +got):\n%s", c.query, diff)
					}
					return
				}
				want := canonicalRows(t, c.result)
				if c.doc != "" {
					// Documented results were checked with a comparison
					// that ignores property order; so is this one.
					want, rows = sortKeys(t, want), sortKeys(t, rows)
				}
				if diff := cmp.Diff(want, rows); diff != "" {
					t.Errorf("%s\nrows mismatch (-want +got):\n%s", c.query, diff)
				}
			})
		}
		if changed {
			if err := writeCases(file, cases); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d corpus queries", total)
}
