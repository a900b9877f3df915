// Package clienttest finds the outside client programs that lapse's tests
// drive it with (Debian's python3 with its client packages, node with an
// npm folder's packages). A test whose program is missing skips, except
// under CI (the CI environment variable set), where .ci/run installs every
// one and the test fails instead.
//
// It imports nothing of lapse's; the test files of every front-end and of
// the server package import it.
package clienttest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Need skips the test because of why, or fails it under CI, which must
// run it.
func Need(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s; CI must not skip this test", why)
	}
	tb.Skip(why)
}

// Python returns a Python interpreter that imports every module of
// modules: $LAPSE_PYTHON when set, else the first of python3 on PATH and
// Debian's /usr/bin/python3 that does. Debian's python3-* packages import
// only in Debian's interpreter, which need not be the first on PATH.
func Python(tb testing.TB, modules ...string) string {
	tb.Helper()
	candidates := []string{"python3", "/usr/bin/python3"}
	if p := os.Getenv("LAPSE_PYTHON"); p != "" {
		candidates = []string{p}
	}
	check := "import " + strings.Join(modules, ", ")
	var tried []string
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err == nil {
			var out []byte
			if out, err = exec.Command(path, "-c", check).CombinedOutput(); err == nil {
				return path
			}
			err = fmt.Errorf("%v: %s", err, LastLine(out))
		}
		tried = append(tried, c+": "+err.Error())
	}
	Need(tb, fmt.Sprintf("no python3 can %q (Debian's python3-azure, python3-azure-cosmos, python3-pika, python3-kombu; or set LAPSE_PYTHON): %s",
		check, strings.Join(tried, "; ")))
	return ""
}

// PythonSDK returns the interpreter of the venv that holds the current
// Python SDKs (requirements.txt in the repo's root; .ci/run makes it),
// $LAPSE_PYTHON_SDK, when it runs check (a Python statement, such as an
// import with an assertion on the version).
func PythonSDK(tb testing.TB, check string) string {
	tb.Helper()
	p := os.Getenv("LAPSE_PYTHON_SDK")
	if p == "" {
		Need(tb, "LAPSE_PYTHON_SDK is not set (python3 -m venv V && V/bin/pip install -r requirements.txt, then LAPSE_PYTHON_SDK=V/bin/python)")
		return ""
	}
	if out, err := exec.Command(p, "-c", check).CombinedOutput(); err != nil {
		Need(tb, fmt.Sprintf("%s cannot %q: %v: %s", p, check, err, LastLine(out)))
		return ""
	}
	return p
}

// Java returns the java command and the class path of the Maven project
// in dir, which .ci/run builds (mvn package dependency:build-classpath:
// target/classes and target/classpath.txt).
func Java(tb testing.TB, dir string) (java, classpath string) {
	tb.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		Need(tb, "no java on PATH")
		return "", ""
	}
	deps, err := os.ReadFile(filepath.Join(dir, "target", "classpath.txt"))
	if err != nil {
		Need(tb, fmt.Sprintf("%s is not built (mvn -f %s package dependency:build-classpath): %v", dir, dir, err))
		return "", ""
	}
	classes, err := filepath.Abs(filepath.Join(dir, "target", "classes"))
	if err != nil {
		tb.Fatal(err)
	}
	return java, classes + string(os.PathListSeparator) + strings.TrimSpace(string(deps))
}

// Node returns node's path when node is installed and every package of
// pkgs is in the npm folder dir's node_modules (npm ci --prefix dir).
func Node(tb testing.TB, dir string, pkgs ...string) string {
	tb.Helper()
	node, err := exec.LookPath("node")
	for _, p := range pkgs {
		if err == nil {
			_, err = os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(p), "package.json"))
		}
	}
	if err != nil {
		Need(tb, fmt.Sprintf("this test needs node and %s in %s/node_modules (npm ci --prefix %s): %v",
			strings.Join(pkgs, ", "), filepath.ToSlash(dir), filepath.ToSlash(dir), err))
	}
	return node
}

// LastLine is the last line of out, without surrounding space.
func LastLine(out []byte) []byte {
	out = bytes.TrimSpace(out)
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		return out[i+1:]
	}
	return out
}
