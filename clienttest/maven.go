package clienttest

import (
	"bytes"
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
		Name    string    `xml:"name,attr"`
		Failure *struct{} `xml:"failure"`
		Error   *struct{} `xml:"error"`
	} `xml:"testcase"`
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
	for class, cases := range want {
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
			if c.Failure == nil && c.Error == nil {
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
