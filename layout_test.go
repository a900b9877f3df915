package lapse_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/lapse-emulator/lapse"

// allowed says which of our packages each top-level folder may import
// (besides its own subpackages and the leaves), test files included.
// docs/architecture.md: arrows point inward: protocol packages -> adapters
// -> core; sqlitestore -> core;
// dashboard -> core; only server, the wiring cmd/lapse runs, and the
// commands import a protocol package; lapsetest, which starts the server
// for a Go user's tests, imports only server and core. httpserver,
// the lifecycle every HTTP listener shares, sits beside
// core: it imports only core, and the packages that serve HTTP import it.
// clienttest, which finds the outside client programs tests drive lapse
// with, imports nothing of ours and only test files import it
// (testOnly). docs embeds the documentation pages the binary serves (the
// rules) and imports nothing; examples holds programs that use only the
// SDKs, and the test that runs them; reliability, the standing suite
// that drives the built binary, imports only the control API client,
// internal/control, and internal/gcfloor, whose floor its memory bounds
// allow for; packaging, the tests of the release's packages built
// from the binaries, imports only clienttest. An internal package counts
// as "internal/NAME".
var allowed = map[string][]string{
	"core":        {},
	"httpserver":  {"core"},
	"clienttest":  {},
	"adapters":    {"core"},
	"sqlitestore": {"core"},
	"docs":        {},
	"dashboard":   {"core", "httpserver", "docs"},
	"servicebus":  {"core", "adapters", "httpserver", "clienttest"},
	"rabbitmq":    {"core", "adapters", "httpserver", "clienttest"},
	"cosmos":      {"core", "adapters", "httpserver", "clienttest"},
	"server":      {"core", "adapters", "httpserver", "clienttest", "sqlitestore", "dashboard", "servicebus", "rabbitmq", "cosmos"},
	"lapsetest":   {"server", "core"},
	"examples":    {"clienttest"},
	"internal":    {},
	"reliability": {"internal/control", "internal/gcfloor"},
	"packaging":   {"clienttest"},
	"cmd":         {"*"},
	"":            {"*"}, // this package
}

// testOnly are the packages of ours that only test files may import.
var testOnly = []string{"clienttest", "internal/testdeadline", "internal/connmem", "internal/leakcheck", "internal/watchconn"}

// leaves are the packages of ours that import nothing of ours and that
// every package may import: the servers' mutexes (sync's, or the lock-order
// checker's in a deadlock build), MurmurHash3 (Cosmos DB's partition key
// hashes), and, for tests, a step that must not hang, the measure of an
// idle connection's memory and the goroutine-leak check.
var leaves = []string{"internal/lockorder", "internal/murmur3", "internal/testdeadline", "internal/connmem", "internal/leakcheck", "internal/watchconn"}

func TestImportsPointInward(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		top := strings.Split(filepath.ToSlash(filepath.Dir(path)), "/")[0]
		if top == "." {
			top = ""
		}
		rules, ok := allowed[top]
		if !ok {
			t.Errorf("%s: folder %q is not in docs/architecture.md's layout; add it there and to this test's table", path, top)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if p != module && !strings.HasPrefix(p, module+"/") {
				continue
			}
			parts := strings.Split(strings.TrimPrefix(strings.TrimPrefix(p, module), "/"), "/")
			target := parts[0]
			if target == "internal" && len(parts) > 1 {
				target = "internal/" + parts[1]
			}
			if contains(testOnly, target) && target != top && !strings.HasSuffix(path, "_test.go") {
				t.Errorf("%s imports %s: only test files may import it", path, p)
			}
			if target == top || strings.HasPrefix(target, top+"/") || contains(rules, "*") || contains(rules, target) || contains(leaves, target) {
				continue
			}
			t.Errorf("%s imports %s: %s may import only %v of ours, and %v (docs/architecture.md)", path, p, top, rules, leaves)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestImportRuleCatchesAWrongArrow(t *testing.T) {
	// The table must refuse the arrows docs/architecture.md forbids.
	for _, c := range []struct{ from, to string }{
		{"core", "adapters"}, {"adapters", "rabbitmq"}, {"rabbitmq", "servicebus"},
		{"cosmos", "sqlitestore"}, {"sqlitestore", "adapters"}, {"dashboard", "cosmos"},
		{"core", "httpserver"}, {"httpserver", "dashboard"}, {"core", "internal/control"},
		{"rabbitmq", "internal/control"},
	} {
		if contains(allowed[c.from], c.to) || contains(allowed[c.from], "*") || contains(leaves, c.to) {
			t.Errorf("%s -> %s is allowed, docs/architecture.md forbids it", c.from, c.to)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestArchitectureIsInTheRepo keeps the design where contributors find it
// (issue 25.10): docs/architecture.md names every top-level folder of the
// import table, and no file cites design documents kept outside the
// repository.
func TestArchitectureIsInTheRepo(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for top := range allowed {
		if top != "" && !strings.Contains(string(doc), "\n"+top+"/") {
			t.Errorf("docs/architecture.md's layout does not name folder %s/", top)
		}
	}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, outside := range []string{"DESIGN" + ".md", "STYLE" + ".md"} {
			if strings.Contains(string(b), outside) {
				t.Errorf("%s cites %s, which is not in the repository: cite docs/architecture.md", path, outside)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCosmosLeavesImportNoCosmos keeps cosmos's query dialect and script
// sandbox below it (docs/architecture.md): neither imports cosmos or the
// other, and only the sandbox imports goja.
func TestCosmosLeavesImportNoCosmos(t *testing.T) {
	for _, dir := range []string{"cosmos/query", "cosmos/script", "cosmos"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p := strings.Trim(imp.Path.Value, `"`)
				switch {
				case dir != "cosmos" && strings.HasPrefix(p, module+"/cosmos") && p != module+"/"+dir:
					t.Errorf("%s imports %s: cosmos's query and script packages import neither cosmos nor each other", path, p)
				case dir != "cosmos/script" && strings.HasPrefix(p, "github.com/dop251/goja"):
					t.Errorf("%s imports %s: only cosmos/script runs JavaScript", path, p)
				}
			}
		}
	}
}
