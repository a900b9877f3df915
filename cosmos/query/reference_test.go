package query

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The reference inventory: testdata/reference/pages.txt lists every page of
// the Azure Cosmos DB for NoSQL query reference (functions, clauses,
// keywords, operators) with the cases that carry its examples, or "none:"
// and why a page has no checkable example. The cases live in
// testdata/reference/*.txt (examples written on the page itself) and in
// testdata/queries/ms_samples.txt and ms_docs.txt (examples the page takes
// from Microsoft's samples repository or that were collected before).

// referenceFiles lists the reference case files.
func referenceFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "reference", "*.txt"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no reference case files: %v", err)
	}
	var out []string
	for _, f := range files {
		if filepath.Base(f) != "pages.txt" {
			out = append(out, f)
		}
	}
	return out
}

// issue 13.12: every system function and keyword of the NoSQL query
// reference gives the documented output of its reference example.
func TestReferenceExamples(t *testing.T) {
	for _, file := range referenceFiles(t) {
		for _, c := range readCases(t, file) {
			t.Run(strings.TrimSuffix(filepath.Base(file), ".txt")+"/"+c.name, func(t *testing.T) {
				if c.doc == "" {
					t.Fatal("a reference case names its page in doc:")
				}
				rows, errText := runCase(t, c)
				if c.isErr || errText != "" {
					if diff := cmp.Diff(c.result, errText); diff != "" || !c.isErr {
						t.Errorf("%s\nerror mismatch (-want +got):\n%s", c.query, diff)
					}
					return
				}
				want := sortKeys(t, canonicalRows(t, c.result))
				got := sortKeys(t, rows)
				if c.differs != "" {
					// A known difference: the case must still run, and must
					// still differ (else the differs: line is stale).
					if cmp.Equal(want, got) {
						t.Errorf("%s now gives the documented result: drop its differs: line", c.name)
					}
					t.Logf("differs from the documented result: %s", c.differs)
					return
				}
				if c.tol != "" {
					tol, err := strconv.ParseFloat(c.tol, 64)
					if err != nil {
						t.Fatal(err)
					}
					if !rowsClose(t, want, got, tol) {
						t.Errorf("%s\nrows differ beyond %g:\nwant %v\ngot  %v", c.query, tol, want, got)
					}
					return
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s\nrows mismatch (-want +got):\n%s", c.query, diff)
				}
			})
		}
	}
}

// rowsClose compares JSON rows, numbers within a relative tolerance.
func rowsClose(tb testing.TB, want, got []string, tol float64) bool {
	tb.Helper()
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		w, err1 := Decode([]byte(want[i]))
		g, err2 := Decode([]byte(got[i]))
		if err1 != nil || err2 != nil || !valuesClose(w, g, tol) {
			return false
		}
	}
	return true
}

// valuesClose is Equal with numbers compared within a relative tolerance.
func valuesClose(w, g any, tol float64) bool {
	switch x := w.(type) {
	case float64:
		y, ok := g.(float64)
		return ok && math.Abs(x-y) <= tol*math.Max(math.Abs(x), math.Abs(y))
	case []any:
		y, ok := g.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesClose(x[i], y[i], tol) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := g.(*Object)
		if !ok || len(x.Keys) != len(y.Keys) {
			return false
		}
		for i, k := range x.Keys {
			v, ok := y.Get(k)
			if !ok || !valuesClose(x.Vals[i], v, tol) {
				return false
			}
		}
		return true
	}
	return Equal(w, g)
}

// inventoryLine is one page of the inventory: its cases ("file#case",
// file relative to testdata) or why it has none.
type inventoryLine struct {
	page  string
	cases []string
	none  string
}

// readInventory parses testdata/reference/pages.txt: "page.md: file#case
// file#case ..." or "page.md: none: reason"; # starts a comment line.
func readInventory(tb testing.TB) []inventoryLine {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "reference", "pages.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []inventoryLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		page, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasSuffix(page, ".md") {
			tb.Fatalf("pages.txt: bad line %q", line)
		}
		l := inventoryLine{page: page}
		rest = strings.TrimSpace(rest)
		if reason, ok := strings.CutPrefix(rest, "none:"); ok {
			l.none = strings.TrimSpace(reason)
		} else {
			l.cases = strings.Fields(rest)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// issue 13.12: the inventory names every reference page once, each case it
// names exists, and every reference case belongs to a page of it.
func TestReferenceInventoryCoversEveryPage(t *testing.T) {
	known := map[string]bool{}
	for _, file := range append(referenceFiles(t),
		filepath.Join("testdata", "queries", "ms_samples.txt"),
		filepath.Join("testdata", "queries", "ms_docs.txt")) {
		rel, _ := filepath.Rel("testdata", file)
		for _, c := range readCases(t, file) {
			known[filepath.ToSlash(rel)+"#"+c.name] = true
		}
	}
	listed := map[string]bool{}
	pages := map[string]bool{}
	examples, without := 0, 0
	for _, l := range readInventory(t) {
		if pages[l.page] {
			t.Errorf("%s listed twice", l.page)
		}
		pages[l.page] = true
		if l.none != "" {
			without++
			continue
		}
		if len(l.cases) == 0 {
			t.Errorf("%s: no case and no reason", l.page)
		}
		for _, c := range l.cases {
			if !known[c] {
				t.Errorf("%s: no case %s", l.page, c)
			}
			listed[c] = true
			examples++
		}
	}
	for _, file := range referenceFiles(t) {
		rel, _ := filepath.Rel("testdata", file)
		for _, c := range readCases(t, file) {
			if ref := filepath.ToSlash(rel) + "#" + c.name; !listed[ref] {
				t.Errorf("%s is on no page of pages.txt", ref)
			}
		}
	}
	t.Logf("%d reference pages: %d examples on %d pages, %d pages without a checkable example",
		len(pages), examples, len(pages)-without, without)
}
