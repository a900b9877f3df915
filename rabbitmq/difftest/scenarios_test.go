package difftest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The rules the suite proves. RB-13 (expiry while the server is down) needs a
// restart and is proved elsewhere.
//
// rule: RB-1 RB-2 RB-3 RB-4 RB-5 RB-6 RB-7 RB-8 RB-9 RB-10 RB-11 RB-12 RB-14
var covered = []string{"RB-1", "RB-2", "RB-3", "RB-4", "RB-5", "RB-6", "RB-7", "RB-8", "RB-9", "RB-10", "RB-11", "RB-12", "RB-14"}

func TestScenariosWellFormed(t *testing.T) {
	all := Scenarios()
	if len(all) < 70 {
		t.Errorf("%d scenarios, want at least 70", len(all))
	}
	name := regexp.MustCompile(`^[A-Z][A-Za-z0-9]+$`)
	seen := map[string]bool{}
	byRule := map[string]int{}
	for _, sc := range all {
		if !name.MatchString(sc.Name) {
			t.Errorf("scenario name %q: want letters and digits, a capital first", sc.Name)
		}
		if seen[sc.Name] {
			t.Errorf("scenario %s listed twice", sc.Name)
		}
		seen[sc.Name] = true
		if sc.Run == nil {
			t.Errorf("scenario %s has no Run", sc.Name)
		}
		for _, r := range sc.Rules {
			if !slices.Contains(covered, r) {
				t.Errorf("scenario %s: rule %q is not one of %v", sc.Name, r, covered)
			}
			byRule[r]++
		}
	}
	for _, r := range covered {
		if byRule[r] == 0 {
			t.Errorf("no scenario proves %s", r)
		}
	}
}

// TestGoldenFilesMatchScenarios keeps testdata/golden and Scenarios in step:
// a golden file per scenario, none left over.
func TestGoldenFilesMatchScenarios(t *testing.T) {
	names := map[string]bool{}
	for _, sc := range Scenarios() {
		names[sc.Name] = true
		lines, ok := Golden(sc.Name)
		if !ok {
			t.Errorf("scenario %s has no golden file; record it with -update against RabbitMQ", sc.Name)
			continue
		}
		if len(lines) == 0 {
			t.Errorf("golden file of %s is empty", sc.Name)
		}
	}
	files, err := fs.Glob(golden, "testdata/golden/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		n := strings.TrimSuffix(strings.TrimPrefix(f, "testdata/golden/"), ".txt")
		if !names[n] {
			t.Errorf("golden file %s belongs to no scenario; delete it", f)
		}
	}
}

// TestGoldenFilesNormalised checks that no recorded transcript holds what
// differs from run to run: raw server-made names, timestamps.
func TestGoldenFilesNormalised(t *testing.T) {
	raw := regexp.MustCompile(`amq\.(gen|ctag)-(?:[^0-9]|[0-9]+[^0-9"' ,\]}])`)
	stamp := regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]`)
	for _, sc := range Scenarios() {
		lines, _ := Golden(sc.Name)
		for i, l := range lines {
			if raw.MatchString(l) || stamp.MatchString(l) || strings.Contains(l, "\r") {
				t.Errorf("%s line %d is not normalised: %s", sc.Name, i+1, l)
			}
		}
	}
}

// TestScenarioCommentsNameRules checks that every scenario function says in
// its doc comment which rules it pins, as RB-n.
func TestScenarioCommentsNameRules(t *testing.T) {
	docs := map[string]string{}
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Doc != nil {
					docs[fn.Name.Name] = fn.Doc.Text()
				}
			}
		}
	}
	for _, sc := range Scenarios() {
		full := runtime.FuncForPC(reflect.ValueOf(sc.Run).Pointer()).Name()
		fn := full[strings.LastIndex(full, ".")+1:]
		if strings.HasPrefix(fn, "func") {
			continue // a table row: its comment is on the row
		}
		doc, ok := docs[fn]
		if !ok {
			t.Errorf("scenario %s: function %s has no doc comment", sc.Name, fn)
			continue
		}
		if !strings.HasPrefix(doc, fn+" pins ") {
			t.Errorf("scenario %s: doc of %s should start %q", sc.Name, fn, fn+" pins ")
		}
		for _, r := range sc.Rules {
			if !regexp.MustCompile(`\b` + r + `\b`).MatchString(doc) {
				t.Errorf("scenario %s: doc of %s does not name %s", sc.Name, fn, r)
			}
		}
	}
}

func TestNormaliser(t *testing.T) {
	n := newNormaliser()
	got := []string{
		n.line(`queue.declare "": ok name="amq.gen-JzTY20BRgKO-HjmUJj0wLg"`),
		n.line(`basic.get "amq.gen-JzTY20BRgKO-HjmUJj0wLg", "amq.gen-Other_9"`),
		n.line(`consumer "amq.ctag-abc" on amq.gen-Other_9`),
		n.line(`no server names here: amq.direct`),
	}
	want := []string{
		`queue.declare "": ok name="amq.gen-1"`,
		`basic.get "amq.gen-1", "amq.gen-2"`,
		`consumer "amq.ctag-1" on amq.gen-2`,
		`no server names here: amq.direct`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("normalised lines (-want +got):\n%s", diff)
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"Int64KeepsWidth", int64(1), "int64(1)"},
		{"Int32KeepsWidth", int32(1), "int32(1)"},
		{"Uint8KeepsWidth", uint8(3), "uint8(3)"},
		{"String", "a\"b", `"a\"b"`},
		{"Bytes", []byte("raw"), `[]byte("raw")`},
		{"Bool", true, "bool(true)"},
		{"Float", 1.5, "float64(1.5)"},
		{"Void", nil, "nil"},
		{"Timestamp", time.Unix(1700000000, 0), "<time>"},
		{"Decimal", amqp.Decimal{Scale: 2, Value: 150}, "decimal(scale=2, value=150)"},
		{"ArrayKeepsOrder", []any{"k2", "k1", int64(3)}, `["k2", "k1", int64(3)]`},
		{"TableSortsKeys", amqp.Table{"reason": "expired", "count": int64(1), "time": time.Now()},
			`{count=int64(1), reason="expired", time=<time>}`},
		{"Nested", amqp.Table{"x-death": []any{amqp.Table{"b": "x", "a": int64(2)}}}, `{x-death=[{a=int64(2), b="x"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := formatValue(c.v); got != c.want {
				t.Errorf("formatValue(%#v) = %s, want %s", c.v, got, c.want)
			}
		})
	}
}

func TestTranscriptRoundTrip(t *testing.T) {
	for _, lines := range [][]string{{}, {"one"}, {"one", "", "three"}} {
		if diff := cmp.Diff(lines, ParseTranscript(FormatTranscript(lines))); diff != "" {
			t.Errorf("round trip of %q (-want +got):\n%s", lines, diff)
		}
	}
}
