package packaging

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// The PyPI wheels of issue 30.4, built by packaging/pypi/build_wheels.py
// from dist/bin (packaging/collect-binaries' layout): one per platform,
// each with its binary as the script lapse and the pytest plugin
// pytest_lapse of fixtures/python.

// wheelTags are the wheels' platform tags by dist/bin's folder names.
var wheelTags = map[string]string{
	"linux-amd64":   "manylinux_2_17_x86_64.manylinux2014_x86_64",
	"linux-arm64":   "manylinux_2_17_aarch64.manylinux2014_aarch64",
	"darwin-amd64":  "macosx_10_12_x86_64",
	"darwin-arm64":  "macosx_11_0_arm64",
	"windows-amd64": "win_amd64",
	"windows-arm64": "win_arm64",
}

// wheelName matches a wheel's file name: its version and platform tags.
var wheelName = regexp.MustCompile(`^lapse_emulator-([^-]+)-py3-none-([^-]+)\.whl$`)

// pypiDist returns $LAPSE_DIST, which .ci/run sets after the release
// snapshot; without it the test skips (fails under CI).
func pypiDist(t *testing.T) string {
	t.Helper()
	dist := os.Getenv("LAPSE_DIST")
	if dist == "" {
		clienttest.Need(t, "LAPSE_DIST is not set: build dist/ as .ci/run's release snapshot and PyPI wheels blocks do "+
			"(goreleaser release --snapshot --clean, packaging/collect-binaries, python3 packaging/pypi/build_wheels.py --bin-dir dist/bin --out dist/pypi, "+
			"pip download pytest -d dist/pypi/deps), then LAPSE_DIST=$PWD/dist")
	}
	return dist
}

// mustWheels returns the wheels of dist/pypi by platform, building them
// from dist/bin into a temporary folder when dist/pypi holds none.
func mustWheels(t *testing.T, python, dist string) map[string]string {
	t.Helper()
	dir := filepath.Join(dist, "pypi")
	found, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	if len(found) == 0 {
		dir = t.TempDir()
		out, err := exec.Command(python, filepath.Join("pypi", "build_wheels.py"), "--bin-dir", filepath.Join(dist, "bin"), "--out", dir).CombinedOutput()
		if err != nil {
			t.Fatalf("build_wheels.py: %v\n%s", err, out)
		}
		t.Logf("built the wheels from %s:\n%s", filepath.Join(dist, "bin"), out)
		found, _ = filepath.Glob(filepath.Join(dir, "*.whl"))
	}
	wheels := map[string]string{}
	for _, path := range found {
		m := wheelName.FindStringSubmatch(filepath.Base(path))
		if m == nil {
			t.Errorf("%s: not a lapse_emulator-VERSION-py3-none-TAG.whl name", path)
			continue
		}
		for platform, tag := range wheelTags {
			if tag == m[2] {
				if wheels[platform] != "" {
					t.Errorf("two wheels for %s: %s and %s", platform, wheels[platform], path)
				}
				wheels[platform] = path
			}
		}
	}
	for platform, tag := range wheelTags {
		if wheels[platform] == "" {
			t.Errorf("no wheel for %s (tag %s) in %s: %v", platform, tag, dir, found)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return wheels
}

// recordHash is a RECORD line's hash of data.
func recordHash(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256=" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// headerFields returns the "Key: value" lines of an email-style header
// (METADATA, WHEEL) up to its first blank line; a key may repeat.
func headerFields(text string) map[string][]string {
	fields := map[string][]string{}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		k, v, _ := strings.Cut(line, ": ")
		fields[k] = append(fields[k], v)
	}
	return fields
}

// checkWheel checks the structure of the wheel of platform at path, of
// version: the binary of dist/bin as an executable script, the plugin as
// fixtures/python has it, the dist-info files and a RECORD whose every
// hash and size is right.
func checkWheel(t *testing.T, dist, platform, path, version string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer zr.Close()
	files := map[string][]byte{}
	modes := map[string]os.FileMode{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, f.Name, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, f.Name, err)
		}
		if _, dup := files[f.Name]; dup {
			t.Errorf("%s: %s twice", path, f.Name)
		}
		files[f.Name], modes[f.Name] = data, f.Mode()
	}
	base := filepath.Base(path)

	exe := "lapse"
	if strings.HasPrefix(platform, "windows-") {
		exe = "lapse.exe"
	}
	script := "lapse_emulator-" + version + ".data/scripts/" + exe
	bin, err := os.ReadFile(filepath.Join(dist, "bin", platform, exe))
	if err != nil {
		t.Fatal(err)
	}
	switch got, ok := files[script]; {
	case !ok:
		t.Errorf("%s: no %s", base, script)
	case !bytes.Equal(got, bin):
		t.Errorf("%s: %s is not dist/bin/%s/%s", base, script, platform, exe)
	case modes[script] != 0o755:
		t.Errorf("%s: %s has mode %v, want -rwxr-xr-x (pip gives the installed script its executable bit from it)", base, script, modes[script])
	}

	// The plugin is fixtures/python's, file for file, not a copy kept apart.
	plugin, _ := filepath.Glob(filepath.Join("..", "fixtures", "python", "pytest_lapse", "*.py"))
	if len(plugin) == 0 {
		t.Fatal("no fixtures/python/pytest_lapse/*.py")
	}
	for _, p := range plugin {
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := "pytest_lapse/" + filepath.Base(p)
		if got, ok := files[name]; !ok || !bytes.Equal(got, want) {
			t.Errorf("%s: %s is missing or differs from fixtures/python's", base, name)
		}
	}
	for _, name := range []string{"lapse_emulator/__init__.py", "lapse_emulator/__main__.py", "lapse_emulator/_version.py"} {
		if _, ok := files[name]; !ok {
			t.Errorf("%s: no %s", base, name)
		}
	}

	info := "lapse_emulator-" + version + ".dist-info/"
	meta := headerFields(string(files[info+"METADATA"]))
	for k, want := range map[string]string{"Name": "lapse-emulator", "Version": version, "Requires-Python": ">=3.9"} {
		if got := meta[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s: METADATA %s = %q, want %q", base, k, got, want)
		}
	}
	if mv := meta["Metadata-Version"]; len(mv) != 1 || !slices.Contains([]string{"2.1", "2.2", "2.3", "2.4"}, mv[0]) {
		t.Errorf("%s: METADATA Metadata-Version = %q, want 2.1 or later", base, mv)
	}
	for _, req := range meta["Requires-Dist"] {
		if !strings.Contains(req, "extra ==") {
			t.Errorf("%s: METADATA requires %q always; the wheel must need nothing (pytest loads the plugin, not the other way round)", base, req)
		}
	}
	wheel := headerFields(string(files[info+"WHEEL"]))
	var wantTags []string
	for tag := range strings.SplitSeq(wheelTags[platform], ".") {
		wantTags = append(wantTags, "py3-none-"+tag)
	}
	if wheel["Wheel-Version"] == nil || wheel["Wheel-Version"][0] != "1.0" || wheel["Root-Is-Purelib"] == nil || wheel["Root-Is-Purelib"][0] != "false" ||
		len(wheel["Generator"]) != 1 || !slices.Equal(wheel["Tag"], wantTags) {
		t.Errorf("%s: WHEEL = %q, want Wheel-Version 1.0, a Generator, Root-Is-Purelib false and the tags %q", base, files[info+"WHEEL"], wantTags)
	}
	if ep := string(files[info+"entry_points.txt"]); !regexp.MustCompile(`(?m)^\[pytest11\]\s*\nlapse\s*=\s*pytest_lapse\s*$`).MatchString(ep) {
		t.Errorf("%s: entry_points.txt = %q, want [pytest11] lapse = pytest_lapse", base, ep)
	}

	// RECORD: every file once with its sha256 and size, RECORD itself
	// with neither.
	record := info + "RECORD"
	rows, err := csv.NewReader(bytes.NewReader(files[record])).ReadAll()
	if err != nil {
		t.Fatalf("%s: RECORD: %v", base, err)
	}
	listed := map[string]bool{}
	for _, row := range rows {
		if len(row) != 3 {
			t.Errorf("%s: RECORD row %q has %d fields, want 3", base, row, len(row))
			continue
		}
		name := row[0]
		data, ok := files[name]
		switch {
		case listed[name]:
			t.Errorf("%s: RECORD lists %s twice", base, name)
		case !ok:
			t.Errorf("%s: RECORD lists %s, which the wheel does not hold", base, name)
		case name == record:
			if row[1] != "" || row[2] != "" {
				t.Errorf("%s: RECORD's own row is %q, want no hash and no size", base, row)
			}
		case row[1] != recordHash(data) || row[2] != strconv.Itoa(len(data)):
			t.Errorf("%s: RECORD says %s is %s, %s bytes; it is %s, %d bytes", base, name, row[1], row[2], recordHash(data), len(data))
		}
		listed[name] = true
	}
	for name := range files {
		if !listed[name] {
			t.Errorf("%s: RECORD does not list %s", base, name)
		}
	}
}

// venvScripts is where a venv keeps its scripts and the suffix of its
// programs.
func venvScripts(venv string) (dir, exe string) {
	if runtime.GOOS == "windows" {
		return filepath.Join(venv, "Scripts"), ".exe"
	}
	return filepath.Join(venv, "bin"), ""
}

// pypiRun runs name with args in dir with env added, and returns its
// combined output; it fails the test when it fails.
func pypiRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pluginTest is the test pytest runs with the installed plugin: it moves
// its sandbox's clock and reads it back.
const pluginTest = `import datetime as dt
import sys

import pytest_lapse


def at(clock):
    return dt.datetime.fromisoformat(clock["now"].replace("Z", "+00:00"))


def test_the_sandbox_clock_moves(lapse_sandbox):
    # The plugin pytest loaded is the wheel's, in this venv.
    assert pytest_lapse.__file__.startswith(sys.prefix), pytest_lapse.__file__
    before = lapse_sandbox.clock()
    assert before["mode"] == "frozen"
    moved = lapse_sandbox.advance("90m")
    assert at(moved) - at(before) == dt.timedelta(minutes=90)
    assert lapse_sandbox.clock()["now"] == moved["now"]
`

// issue 30.4: pip installs the linux/amd64 wheel, offline, into a fresh
// venv: lapse is on the venv's PATH and serves, pytest loads the plugin by
// its entry point and a test moves its sandbox's clock in that lapse;
// lapse_emulator.binary_path() names the script. The other wheels hold
// their own binaries under the right tags, and pip accepts each for its
// platform.
func TestIssue30_4_WheelInstallsLapseAndThePlugin(t *testing.T) {
	dist := pypiDist(t)
	python := clienttest.Python(t, "venv")
	wheels := mustWheels(t, python, dist)
	rawVersion, err := os.ReadFile(filepath.Join(dist, "bin", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	stamped := strings.TrimSpace(string(rawVersion))
	version := wheelName.FindStringSubmatch(filepath.Base(wheels["linux-amd64"]))[1]
	for platform, path := range wheels {
		if v := wheelName.FindStringSubmatch(filepath.Base(path))[1]; v != version {
			t.Errorf("%s: version %s, the linux-amd64 wheel's is %s", path, v, version)
		}
		checkWheel(t, dist, platform, path, version)
		t.Logf("%s: %d bytes", filepath.Base(path), wheelSize(t, path))
	}

	host := runtime.GOOS + "-" + runtime.GOARCH
	wheel, ok := wheels[host]
	if !ok {
		clienttest.Need(t, "no wheel runs on "+host)
	}
	deps := filepath.Join(dist, "pypi", "deps")
	if found, _ := filepath.Glob(filepath.Join(deps, "pytest-*.whl")); len(found) == 0 {
		clienttest.Need(t, "no pytest wheel in "+deps+" for the offline install (pip download --only-binary=:all: -d "+deps+" pytest)")
	}

	work := t.TempDir()
	venv := filepath.Join(work, "venv")
	pypiRun(t, work, nil, python, "-m", "venv", venv)
	scripts, exe := venvScripts(venv)
	vpython := filepath.Join(scripts, "python"+exe)

	// pip accepts every wheel for its own platform, and refuses one on
	// another: the tags are what pip reads.
	dryRun := func(tag, path string) []string {
		return []string{"-m", "pip", "install", "--dry-run", "--no-index", "--no-deps", "--only-binary=:all:",
			"--platform", tag, "--python-version", "3.9", "--target", filepath.Join(work, "dry-run"), path}
	}
	for platform, path := range wheels {
		tag, _, _ := strings.Cut(wheelTags[platform], ".")
		pypiRun(t, work, nil, vpython, dryRun(tag, path)...)
	}
	if out, err := exec.Command(vpython, dryRun("win_amd64", wheels["linux-amd64"])...).CombinedOutput(); err == nil {
		t.Errorf("pip takes the linux-amd64 wheel for win_amd64:\n%s", out)
	}

	// The real install, offline; the extra "pytest" brings pytest.
	pypiRun(t, work, nil, vpython, "-m", "pip", "install", "--no-index", "--find-links", deps, wheel+"[pytest]")
	lapse := filepath.Join(scripts, "lapse"+exe)
	if out := pypiRun(t, work, nil, lapse, "version"); !strings.HasPrefix(out, "lapse "+stamped+" (") {
		t.Errorf("%s version = %q, want lapse %s (...)", lapse, out, stamped)
	}
	if out := pypiRun(t, work, nil, vpython, "-m", "lapse_emulator", "version"); !strings.HasPrefix(out, "lapse "+stamped+" (") {
		t.Errorf("python -m lapse_emulator version = %q, want lapse %s (...)", out, stamped)
	}
	got := strings.TrimSpace(pypiRun(t, work, nil, vpython, "-c", "import lapse_emulator; print(lapse_emulator.binary_path())"))
	if st, err := os.Stat(got); err != nil || st.IsDir() {
		t.Errorf("lapse_emulator.binary_path() = %q, not a file: %v", got, err)
	} else if same, _ := os.Stat(lapse); !os.SameFile(st, same) {
		t.Errorf("lapse_emulator.binary_path() = %q, want the venv's %s", got, lapse)
	}
	if got := strings.TrimSpace(pypiRun(t, work, nil, vpython, "-c", "import lapse_emulator; print(lapse_emulator.__version__)")); got != version {
		t.Errorf("lapse_emulator.__version__ = %q, want %q", got, version)
	}
	// The version pip installed is a valid PEP 440 one (pytest brings the
	// packaging library, which parses it).
	if got := strings.TrimSpace(pypiRun(t, work, nil, vpython, "-c", "import sys; from packaging.version import Version; print(Version(sys.argv[1]))", version)); got != version {
		t.Errorf("PEP 440 reads %q as %q", version, got)
	}

	url := mustServe(t, lapse, ":memory:").url
	tests := filepath.Join(work, "tests")
	if err := os.MkdirAll(tests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tests, "test_installed_plugin.py"), []byte(pluginTest), 0o644); err != nil {
		t.Fatal(err)
	}
	out := pypiRun(t, tests, []string{"LAPSE_URL=" + url}, vpython, "-m", "pytest", "-p", "no:cacheprovider", "-v", ".")
	if !strings.Contains(out, "test_the_sandbox_clock_moves PASSED") || !strings.Contains(out, "lapse-emulator-"+version) {
		t.Errorf("pytest did not pass the plugin's test, or named no lapse-emulator plugin:\n%s", out)
	}
	t.Logf("pytest in the fresh venv, against the installed lapse:\n%s", clienttest.LastLine([]byte(out)))

	// The fixture disposed of its sandbox.
	resp, err := http.Get(url + "/api/sandboxes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var left []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&left); err != nil || len(left) != 0 {
		t.Errorf("GET /api/sandboxes after pytest: %d left (%v), want none", len(left), err)
	}
}

// wheelSize is the size of the file at path.
func wheelSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
