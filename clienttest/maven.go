package clienttest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// surefireSuite is what a Surefire XML report says of one test class.
type surefireSuite struct {
	Tests   int `xml:"tests,attr"`
	Skipped int `xml:"skipped,attr"`
	Cases   []struct {
		Name    string           `xml:"name,attr"`
		Failure *surefireProblem `xml:"failure"`
		Error   *surefireProblem `xml:"error"`
	} `xml:"testcase"`
}

// surefireProblem is a failed test's failure or error: the exception's
// type and message, and its stack trace.
type surefireProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Stack   string `xml:",chardata"`
}

// summary is the problem in two lines: the exception and its message's
// first line, and the deepest frame of the project's own test code (the
// call the test failed or waited in).
func (p *surefireProblem) summary(pkg string) string {
	msg, _, _ := strings.Cut(strings.TrimSpace(p.Message), "\n")
	at := ""
	for line := range strings.Lines(p.Stack) {
		if f := strings.TrimSpace(line); strings.HasPrefix(f, "at "+pkg+".") {
			at = f
			break
		}
	}
	return p.Type + ": " + msg + "\n\t" + at
}

// MavenArgs are mvn's arguments before its goals: batch mode, quiet, and
// the local repository $LAPSE_MAVEN_REPO when it names one (.ci/run fills
// it and sets it). Not offline: Surefire resolves the provider it runs
// JUnit with only when tests run, so the first run fetches it; every
// version is fixed, so later runs ask the registry for nothing.
func MavenArgs() []string {
	args := []string{"-B", "-q"}
	if repo := os.Getenv("LAPSE_MAVEN_REPO"); repo != "" {
		args = append(args, "-Dmaven.repo.local="+repo)
	}
	return args
}

// MavenTests runs the JUnit tests of the Maven project in dir with `mvn
// test` (only those of filter, Surefire's -Dtest, when it is not empty),
// with env added to the environment and more after mvn's other arguments
// (-o, -Dname=value), within timeout, and checks from Surefire's reports
// that each class of want ran exactly the test methods it lists, all
// passing. The project must be compiled first (.ci/run: mvn test-compile
// dependency:build-classpath).
func MavenTests(t *testing.T, dir string, env []string, filter string, timeout time.Duration, want map[string][]string, more ...string) {
	t.Helper()
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		Need(t, "no mvn on PATH")
		return
	}
	Java(t, dir)
	reports := filepath.Join(dir, "target", "surefire-reports")
	if err := os.RemoveAll(reports); err != nil {
		t.Fatal(err)
	}
	args := append(append(MavenArgs(), more...), "test")
	if filter != "" {
		args = append(args, "-Dtest="+filter)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, mvn, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Errorf("mvn test in %s: %v\n%s", dir, err, out.String())
	}
	// The failed tests, said last, where a long log's tail shows them.
	var failed []string
	defer func() {
		t.Helper()
		if len(failed) > 0 {
			slices.Sort(failed)
			t.Errorf("failed in %s:\n%s", dir, strings.Join(failed, "\n"))
		}
	}()
	for class, cases := range want {
		pkg, _, _ := strings.Cut(class, ".")
		b, err := os.ReadFile(filepath.Join(reports, "TEST-"+class+".xml"))
		if err != nil {
			t.Errorf("no Surefire report of %s: %v", class, err)
			continue
		}
		var s surefireSuite
		if err := xml.Unmarshal(b, &s); err != nil {
			t.Errorf("%s's report: %v", class, err)
			continue
		}
		var passed []string
		for _, c := range s.Cases {
			if p := cmp.Or(c.Failure, c.Error); p != nil {
				failed = append(failed, class+"."+c.Name+": "+p.summary(pkg))
			} else {
				passed = append(passed, c.Name)
			}
		}
		slices.Sort(passed)
		cases = slices.Sorted(slices.Values(cases))
		if !slices.Equal(passed, cases) || s.Skipped != 0 || s.Tests != len(cases) {
			t.Errorf("%s: passed %v of %d tests (%d skipped), want exactly %v", class, passed, s.Tests, s.Skipped, strings.Join(cases, ", "))
		}
	}
}
