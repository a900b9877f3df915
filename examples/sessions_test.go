package examples

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// step is one command of a console session and the output shown for it.
type step struct {
	cmd  string
	want []string
}

// steps splits a console block into its commands ("$ " lines, continued
// by a trailing backslash) and their shown output.
func steps(lines []string) []step {
	var out []step
	continued := false
	for _, l := range lines {
		switch {
		case continued:
			out[len(out)-1].cmd += "\n" + l
		case strings.HasPrefix(l, "$ "):
			out = append(out, step{cmd: strings.TrimPrefix(l, "$ ")})
		case len(out) > 0:
			out[len(out)-1].want = append(out[len(out)-1].want, l)
		}
		continued = strings.HasSuffix(l, `\`) && len(out) > 0 && len(out[len(out)-1].want) == 0
	}
	return out
}

// issue 15.1, 15.3: every console session of README.md and docs/ prints
// what the page shows when run as the page says: lapse started with the
// marker's arguments (and the examples' configuration files), then each
// command in turn. The example programs run this way too: each sends an
// item, moves lapse's clock 61 minutes and prints the expiry, so a page
// whose output a program no longer prints fails here. Shown output is
// compared line by line after normalize (times, addresses); a line "..."
// stands for any lines.
func TestDocsSessionsPrintWhatTheyShow(t *testing.T) {
	n := 0
	for _, b := range blocks(t) {
		args, ok := strings.CutPrefix(b.marker, "run:")
		if b.lang != "console" || !ok {
			continue
		}
		n++
		t.Run(strings.ReplaceAll(b.where(), "/", "_"), func(t *testing.T) {
			runSession(t, b, strings.Fields(args))
		})
	}
	if n == 0 {
		t.Error("no console block is marked run:")
	}
}

func runSession(t *testing.T, b block, args []string) {
	if len(args) == 0 || args[0] != "lapse" {
		t.Fatalf("%s: the marker must start lapse: run: lapse ARGS", b.where())
	}
	ss := steps(b.lines)
	if len(ss) == 0 {
		t.Fatalf("%s: no command", b.where())
	}
	// Find every outside program first, so that a missing one skips the
	// session before it starts.
	python := map[string]string{}
	for _, s := range ss {
		prog := strings.Fields(s.cmd)[0]
		switch prog {
		case "curl", "grep":
			if _, err := exec.LookPath(prog); err != nil {
				clienttest.Need(t, prog+" is not installed")
			}
		case "node":
			nodeFor(t, s.cmd)
		case "python3":
			python[s.cmd] = pythonFor(t, s.cmd)
		}
	}
	in := startLapse(t, args[1:]...)
	for _, s := range ss {
		cmd := in.localize(s.cmd)
		if p := python[s.cmd]; p != "" {
			if strings.Contains(s.cmd, "servicebus") && !in.amqps5671 {
				// Only this command cannot run: the session goes on.
				why := "azure-servicebus for Python dials AMQPS on port 5671, taken on every loopback address (is a lapse listening on *:5671?)"
				if os.Getenv("CI") != "" {
					t.Errorf("$ %s: %s; CI must not skip it", s.cmd, why)
				} else {
					t.Logf("$ %s: not run: %s", s.cmd, why)
				}
				continue
			}
			cmd = p + strings.TrimPrefix(cmd, "python3")
		}
		got := runStep(t, in, cmd, python[s.cmd] != "" && strings.Contains(s.cmd, "servicebus"))
		if !matchLines(normalize(s.want), normalize(got)) {
			t.Errorf("%s: $ %s\nshown:\n%s\nprinted:\n%s", b.where(), s.cmd, strings.Join(s.want, "\n"), strings.Join(got, "\n"))
		}
	}
}

// runStep runs one command with bash from the repo's root and returns the
// lines it printed on stdout.
func runStep(t *testing.T, in *instance, cmd string, sbPython bool) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", cmd)
	c.Dir = repoRoot
	c.Env = in.env(sbPython)
	c.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("$ %s: %v\nstdout:\n%s\nstderr:\n%s", cmd, err, stdout.String(), stderr.String())
	}
	out := strings.TrimSuffix(stdout.String(), "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// nodeFor checks that node and the npm folder of the program a node
// command runs (node examples/x/js/main.js) are installed.
func nodeFor(t *testing.T, cmd string) {
	f := strings.Fields(cmd)
	if len(f) < 2 {
		t.Fatalf("$ %s: which program?", cmd)
	}
	dir := filepath.Join(repoRoot, filepath.Dir(f[1]))
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	var deps []string
	for d := range pkg.Dependencies {
		deps = append(deps, d)
	}
	clienttest.Node(t, dir, deps...)
}

// pythonModules are the modules each protocol's Python example imports.
var pythonModules = map[string][]string{
	"servicebus": {"azure.servicebus", "uamqp"},
	"rabbitmq":   {"pika"},
	"cosmos":     {"azure.cosmos"},
}

// pythonFor returns the interpreter that runs a python3 command's program
// (python3 examples/PROTOCOL/python/main.py).
func pythonFor(t *testing.T, cmd string) string {
	for proto, mods := range pythonModules {
		if strings.Contains(cmd, "examples/"+proto+"/") {
			return clienttest.Python(t, mods...)
		}
	}
	t.Fatalf("$ %s: which protocol's modules does it need?", cmd)
	return ""
}

var (
	// rfc3339 matches a time as lapse prints it.
	rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	// addrField matches a listener's address in /api/info.
	addrField = regexp.MustCompile(`"addr":"[^"]*"`)
	// unixTime matches x-death's time, seconds since 1970.
	unixTime = regexp.MustCompile(`"time":\d{9,}`)
)

// normalize replaces what differs from run to run (the time lapse started
// at, the addresses it got) with placeholders.
func normalize(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		l = rfc3339.ReplaceAllString(l, "TIME")
		l = addrField.ReplaceAllString(l, `"addr":"ADDR"`)
		out[i] = unixTime.ReplaceAllString(l, `"time":UNIX`)
	}
	return out
}

// matchLines reports whether got is want, where a want line "..." stands
// for any number of lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchLines(want[1:], got[1:])
}

// issue 15.3: the comparison itself holds a session to its output.
func TestSessionOutputMustMatch(t *testing.T) {
	for _, c := range []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, true},
		{[]string{"a", "b"}, []string{"a", "c"}, false},
		{[]string{"a", "..."}, []string{"a", "b", "c"}, true},
		{[]string{"a", "...", "c"}, []string{"a", "c"}, true},
		{[]string{"a", "...", "c"}, []string{"a", "b"}, false},
		{[]string{`{"now":"2026-01-01T00:00:00.5Z"}`}, []string{`{"now":"2030-02-03T04:05:06Z"}`}, true},
		{[]string{`{"addr":"[::]:8081","served":true}`}, []string{`{"addr":"127.1.2.3:40000","served":false}`}, false},
		{[]string{"a"}, nil, false},
	} {
		if got := matchLines(normalize(c.want), normalize(c.got)); got != c.ok {
			t.Errorf("matchLines(%q, %q) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
	ss := steps([]string{"$ curl -s x \\", "    -d y", "out 1", "$ lapse clock", "out 2", "out 3"})
	if len(ss) != 2 || ss[0].cmd != "curl -s x \\\n    -d y" || len(ss[0].want) != 1 || len(ss[1].want) != 2 {
		t.Errorf("steps: %q", ss)
	}
}
