package examples

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The documentation's code blocks, as the tests of this package read them.
// A marker, an HTML comment on the line right above a fenced block, says
// what a block is, so a test can hold it to what it shows:
//
//	<!-- run: lapse ARGS -->    a console session, run against a lapse
//	                            started with ARGS (sessions_test.go)
//	<!-- file: PATH -->         the whole file at PATH (from the repo's root)
//	<!-- excerpt: PATH -->      consecutive lines of the file at PATH
//	<!-- not run: WHY -->       a block no test can run or compare, and why
//
// Console, Go, JavaScript, Python and JSON blocks must have one.

// repoRoot is where the documentation and the examples live, seen from
// this package's folder, where go test runs.
const repoRoot = ".."

// block is one fenced code block of a documentation page.
type block struct {
	page   string // its page, from the repo's root
	line   int    // the line of its opening fence
	lang   string // the fence's info string
	marker string // the marker above it, without <!-- -->; "" when none
	lines  []string
}

// where says where the block is, for messages.
func (b block) where() string { return b.page + ":" + strconv.Itoa(b.line) }

var markerLine = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// pages are the documentation's pages: README.md and every page of docs/.
func pages(tb testing.TB) []string {
	tb.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		tb.Fatalf("no pages in docs/: %v", err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		out = append(out, filepath.ToSlash(strings.TrimPrefix(d, repoRoot+string(filepath.Separator))))
	}
	return out
}

// blocks reads every fenced code block of the documentation's pages.
func blocks(tb testing.TB) []block {
	tb.Helper()
	var out []block
	for _, page := range pages(tb) {
		f, err := os.Open(filepath.Join(repoRoot, page))
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		var cur *block
		prev := ""
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			switch {
			case cur == nil && strings.HasPrefix(line, "```"):
				cur = &block{page: page, line: n, lang: strings.TrimPrefix(line, "```")}
				if m := markerLine.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
					cur.marker = m[1]
				}
			case cur != nil && line == "```":
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.lines = append(cur.lines, line)
			}
			prev = line
		}
		f.Close()
		if cur != nil {
			tb.Errorf("%s: the block opened at line %d is not closed", page, cur.line)
		}
	}
	return out
}

// markedLangs are the languages whose blocks must say what they are.
var markedLangs = map[string]bool{"console": true, "go": true, "js": true, "javascript": true, "python": true, "json": true}

// issue 15.3: every program, configuration and session the documentation
// shows is checked against the repository (a file or an excerpt of one) or
// run, unless its marker says why not.
func TestDocsBlocksSayWhatTheyAre(t *testing.T) {
	for _, b := range blocks(t) {
		if !markedLangs[b.lang] {
			continue
		}
		kind, _, _ := strings.Cut(b.marker, ":")
		switch kind {
		case "run", "file", "excerpt", "not run":
		default:
			t.Errorf("%s: a %s block without a marker (run:, file:, excerpt: or not run:) above it", b.where(), b.lang)
		}
	}
}

// issue 15.3: a block marked file: is the whole file, one marked excerpt:
// consecutive lines of it, so the programs the README shows are the ones
// the tests run.
func TestDocsBlocksAreTheFilesTheyShow(t *testing.T) {
	n := 0
	for _, b := range blocks(t) {
		kind, path, ok := strings.Cut(b.marker, ":")
		if !ok || kind != "file" && kind != "excerpt" {
			continue
		}
		n++
		path = strings.TrimSpace(path)
		src, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(path)))
		if err != nil {
			t.Errorf("%s: %v", b.where(), err)
			continue
		}
		file := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
		if kind == "file" && strings.Join(file, "\n") != strings.Join(b.lines, "\n") {
			t.Errorf("%s shows %s, but not as the file has it: copy the file into the block", b.where(), path)
		}
		if kind == "excerpt" && !containsLines(file, b.lines) {
			t.Errorf("%s shows lines that are not consecutive lines of %s", b.where(), path)
		}
	}
	if n == 0 {
		t.Error("no block is marked file: or excerpt:")
	}
}

// containsLines reports whether part is a run of consecutive lines of
// whole.
func containsLines(whole, part []string) bool {
	if len(part) == 0 {
		return false
	}
	for i := 0; i+len(part) <= len(whole); i++ {
		if equalLines(whole[i:i+len(part)], part) {
			return true
		}
	}
	return false
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// issue 15.3: the check itself catches a block that drifted from its file.
func TestExcerptMustBeConsecutiveLines(t *testing.T) {
	file := []string{"a", "b", "c"}
	for _, c := range []struct {
		part []string
		want bool
	}{{[]string{"b", "c"}, true}, {[]string{"a", "c"}, false}, {[]string{"c", "d"}, false}, {nil, false}} {
		if got := containsLines(file, c.part); got != c.want {
			t.Errorf("containsLines(%q, %q) = %v, want %v", file, c.part, got, c.want)
		}
	}
}

// link matches a markdown link's target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// issue 15.2: the pages link each other and the examples; every relative
// link leads to a file of the repository, and to a heading of it when it
// names one.
func TestDocsLinksLeadSomewhere(t *testing.T) {
	for _, page := range pages(t) {
		src, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(src), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := filepath.Join(repoRoot, filepath.Dir(page), filepath.FromSlash(path))
			if path == "" {
				file = filepath.Join(repoRoot, page)
			}
			body, err := os.ReadFile(file)
			if err != nil {
				if _, serr := os.Stat(file); serr != nil {
					t.Errorf("%s links to %s: %v", page, target, serr)
				}
				continue
			}
			if anchor != "" && !slugs(string(body))[anchor] {
				t.Errorf("%s links to %s: no heading %q there", page, target, anchor)
			}
		}
	}
}

// slugs are the anchors GitHub gives a markdown page's headings: lower
// case, spaces as hyphens, other punctuation dropped.
func slugs(md string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		h := strings.TrimLeft(line, "#")
		if h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}
