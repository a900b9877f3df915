//go:build unix

package packaging

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// The npm packages of issue 30.3, as packaging/npm/build.mjs leaves them
// in $LAPSE_DIST/npm: lapse-emulator (the lapse command and the sandbox
// fixture) and @lapse-emulator/<os>-<cpu> for six platforms (the binary).

// npmPlatforms are npm's names of the six platforms, each with the name of
// its binary.
var npmPlatforms = map[string]string{
	"linux-x64": "lapse", "linux-arm64": "lapse",
	"darwin-x64": "lapse", "darwin-arm64": "lapse",
	"win32-x64": "lapse.exe", "win32-arm64": "lapse.exe",
}

// npmPlatform is npm's name of the platform the test runs on.
func npmPlatform() string {
	goos := runtime.GOOS
	if goos == "windows" {
		goos = "win32"
	}
	cpu := runtime.GOARCH
	if cpu == "amd64" {
		cpu = "x64"
	}
	return goos + "-" + cpu
}

// npmManifest is what the test reads of a package.json.
type npmManifest struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Type                 string            `json:"type"`
	OS                   []string          `json:"os"`
	CPU                  []string          `json:"cpu"`
	Bin                  map[string]string `json:"bin"`
	Scripts              map[string]string `json:"scripts"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	Exports              json.RawMessage   `json:"exports"`
	Engines              map[string]string `json:"engines"`
}

// npmTarball is one packed package: its file, its package.json and the
// mode of each of its files (by path inside package/).
type npmTarball struct {
	file     string
	manifest npmManifest
	modes    map[string]os.FileMode
	sizes    map[string]int64
}

// readNpmTarball reads the package.json and the file modes of the
// tarball at file.
func readNpmTarball(t *testing.T, file string) npmTarball {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	tb := npmTarball{file: file, modes: map[string]os.FileMode{}, sizes: map[string]int64{}}
	tr := tar.NewReader(gz)
	manifest := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		name, ok := strings.CutPrefix(path.Clean(h.Name), "package/")
		if !ok {
			t.Errorf("%s: %s is outside package/, where npm looks", file, h.Name)
			continue
		}
		tb.modes[name] = os.FileMode(h.Mode).Perm()
		tb.sizes[name] = h.Size
		if name == "package.json" {
			if err := json.NewDecoder(tr).Decode(&tb.manifest); err != nil {
				t.Fatalf("%s: package.json: %v", file, err)
			}
			manifest = true
		}
	}
	if !manifest {
		t.Fatalf("%s has no package/package.json", file)
	}
	return tb
}

// npmDist returns the tarballs of $LAPSE_DIST/npm by package name, and
// the version of lapse that dist was built from ($LAPSE_DIST/bin/VERSION).
func npmDist(t *testing.T) (map[string]npmTarball, string) {
	t.Helper()
	build := "build them with goreleaser release --snapshot --clean, packaging/collect-binaries and node packaging/npm/build.mjs --bin-dir dist/bin --out dist/npm, then set LAPSE_DIST to dist's absolute path"
	dist := os.Getenv("LAPSE_DIST")
	if dist == "" {
		clienttest.Need(t, "LAPSE_DIST names no dist folder with the npm packages: "+build)
		return nil, ""
	}
	files, err := filepath.Glob(filepath.Join(dist, "npm", "*.tgz"))
	if err != nil || len(files) == 0 {
		clienttest.Need(t, fmt.Sprintf("%s has no npm tarballs (%v): %s", filepath.Join(dist, "npm"), err, build))
		return nil, ""
	}
	version, err := os.ReadFile(filepath.Join(dist, "bin", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]npmTarball{}
	for _, f := range files {
		tb := readNpmTarball(t, f)
		if other, ok := byName[tb.manifest.Name]; ok {
			t.Fatalf("%s and %s are both %s: build.mjs removes the tarballs of an earlier build", other.file, f, tb.manifest.Name)
		}
		byName[tb.manifest.Name] = tb
	}
	return byName, strings.TrimSpace(string(version))
}

// npmSemverRE is semver 2.0.0's grammar of a version.
var npmSemverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// checkNpmManifests checks the seven packages' package.json and the
// platform packages' binaries.
func checkNpmManifests(t *testing.T, pkgs map[string]npmTarball, stamped string) {
	t.Helper()
	main, ok := pkgs["lapse-emulator"]
	if !ok {
		t.Fatalf("no lapse-emulator tarball among %v", slices.Sorted(maps.Keys(pkgs)))
	}
	version := main.manifest.Version
	if !npmSemverRE.MatchString(version) {
		t.Errorf("lapse-emulator's version %q is not semver (lapse's is %q)", version, stamped)
	}
	// A snapshot's commit stays in the version, so two snapshots differ.
	if _, commit, ok := strings.Cut(stamped, "SNAPSHOT-"); ok && !strings.Contains(version, strings.ToLower(commit)) {
		t.Errorf("lapse-emulator's version %q does not name the snapshot's commit %q", version, commit)
	}
	if got := main.manifest.Bin["lapse"]; got != "bin/lapse.js" {
		t.Errorf("lapse-emulator's bin.lapse = %q, want bin/lapse.js", got)
	}
	if main.modes["bin/lapse.js"] == 0 {
		t.Errorf("lapse-emulator has no bin/lapse.js: %v", main.modes)
	}
	for _, f := range []string{"index.js", "index.d.ts", "sandbox.js", "sandbox.d.ts", "binary.js", "README.md"} {
		if _, ok := main.modes[f]; !ok {
			t.Errorf("lapse-emulator has no %s", f)
		}
	}
	if main.manifest.Engines["node"] != ">=18" {
		t.Errorf("lapse-emulator's engines.node = %q, want >=18", main.manifest.Engines["node"])
	}
	if len(main.manifest.Dependencies) != 0 {
		t.Errorf("lapse-emulator has dependencies %v, want none (the install runs offline)", main.manifest.Dependencies)
	}
	want := map[string]string{}
	for p := range npmPlatforms {
		want["@lapse-emulator/"+p] = version
	}
	if !maps.Equal(main.manifest.OptionalDependencies, want) {
		t.Errorf("lapse-emulator's optionalDependencies = %v, want %v", main.manifest.OptionalDependencies, want)
	}

	for p, exe := range npmPlatforms {
		name := "@lapse-emulator/" + p
		tb, ok := pkgs[name]
		if !ok {
			t.Errorf("no %s tarball", name)
			continue
		}
		goos, cpu, _ := strings.Cut(p, "-")
		m := tb.manifest
		if m.Version != version || !slices.Equal(m.OS, []string{goos}) || !slices.Equal(m.CPU, []string{cpu}) {
			t.Errorf("%s: version %q, os %v, cpu %v; want %q, [%s], [%s]", name, m.Version, m.OS, m.CPU, version, goos, cpu)
		}
		if mode, ok := tb.modes["bin/"+exe]; !ok || mode != 0o755 || tb.sizes["bin/"+exe] == 0 {
			t.Errorf("%s: bin/%s has mode %v and %d bytes (present: %v), want 0755 and the binary", name, exe, mode, tb.sizes["bin/"+exe], ok)
		}
		if len(m.Bin) != 0 {
			t.Errorf("%s declares bin %v: only lapse-emulator's launcher is a command", name, m.Bin)
		}
	}
	for name, tb := range pkgs {
		// No install script: nothing is fetched or built at install time.
		if len(tb.manifest.Scripts) != 0 {
			t.Errorf("%s has scripts %v, want none", name, tb.manifest.Scripts)
		}
	}
}

// npmTools returns node's, npm's and npx's paths.
func npmTools(t *testing.T) (node, npm, npx string) {
	t.Helper()
	var missing []string
	find := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name)
		}
		return p
	}
	node, npm, npx = find("node"), find("npm"), find("npx")
	if len(missing) > 0 {
		clienttest.Need(t, fmt.Sprintf("no %s on PATH (Debian's nodejs and npm)", strings.Join(missing, ", ")))
	}
	return node, npm, npx
}

// npmProject is a fresh npm project in a temporary folder, with a cache of
// its own, so that nothing comes from the user's cache or the network.
type npmProject struct {
	dir string
	env []string
}

// newNpmProject runs npm init -y in a new temporary folder.
func newNpmProject(t *testing.T, npm string) *npmProject {
	t.Helper()
	root := t.TempDir()
	p := &npmProject{dir: filepath.Join(root, "app")}
	if err := os.Mkdir(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p.env = append(os.Environ(),
		"npm_config_cache="+filepath.Join(root, "npm-cache"),
		"npm_config_update_notifier=false",
		"npm_config_fund=false",
		"npm_config_audit=false",
		"NO_COLOR=1",
	)
	p.mustRun(t, npm, "init", "-y")
	return p
}

// run runs name with args in the project and returns its combined output
// and error.
func (p *npmProject) run(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = p.dir
	cmd.Env = append(slices.Clone(p.env), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustRun runs name with args in the project and fails the test when it
// fails.
func (p *npmProject) mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := p.run(t, nil, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

// install installs the tarballs by file path, offline: the packages have
// no other dependency, and the optional ones of other platforms are left
// out.
func (p *npmProject) install(t *testing.T, npm string, tarballs ...string) {
	t.Helper()
	p.mustRun(t, npm, append([]string{"install", "--offline", "--no-audit", "--no-fund"}, tarballs...)...)
}

// startLapse starts command (npx lapse serve, or the launcher itself) in
// the project in a process group of its own, on free loopback ports with
// nothing kept, and waits until /healthz answers. It returns the control
// API's base URL and the process; the test's end stops the group.
func (p *npmProject) startLapse(t *testing.T, command ...string) (string, *exec.Cmd, <-chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	control := l.Addr().String()
	l.Close()
	args := append(command[1:], "serve", "--data", ":memory:", "--control-addr", control,
		"--amqp-addr", "127.0.0.1:0", "--amqps-addr", "127.0.0.1:0", "--cosmos-addr", "127.0.0.1:0",
		"--servicebus-admin-addr", "127.0.0.1:0", "--servicebus-websocket-addr", "127.0.0.1:0", "--rabbitmq-management-addr", "127.0.0.1:0")
	cmd := exec.Command(command[0], args...)
	cmd.Dir = p.dir
	cmd.Env = p.env
	var out clienttest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// Whatever is left of the group (npm, a shell, the launcher, lapse).
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("%s's output:\n%s", strings.Join(command, " "), out.String())
		}
	})
	url := "http://" + control
	deadline := time.Now().Add(60 * time.Second)
	for !npmHealthy(url) {
		select {
		case err := <-exited:
			t.Fatalf("%s serve exited before /healthz answered: %v", strings.Join(command, " "), err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s serve: /healthz did not answer on %s in 60 s", strings.Join(command, " "), control)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return url, cmd, exited
}

// npmHealthy says whether lapse's /healthz at url answers 200.
func npmHealthy(url string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// npmWaitExit waits for a started command to end and returns its error.
func npmWaitExit(t *testing.T, exited <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-exited:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit in 30 s", what)
		return nil
	}
}

// npmSandboxScript is a test in the fresh project that uses the package as a
// user's tests would: the fixture's createSandbox, with LAPSE_URL set.
const npmSandboxScript = `import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { binaryPath, createSandbox } from "lapse-emulator";

assert.ok(existsSync(binaryPath()), "binaryPath() " + binaryPath());

const sandbox = await createSandbox();
assert.equal(sandbox.initialClock.mode, "frozen");
const start = Date.parse(sandbox.initialClock.now);
const moved = await sandbox.advance("15m");
assert.equal(Date.parse(moved.now) - start, 15 * 60 * 1000);
assert.equal(Date.parse((await sandbox.clock()).now) - start, 15 * 60 * 1000);
await sandbox.dispose();
await sandbox.dispose();
console.log("sandbox " + sandbox.id + " moved 15m and disposed of");
`

// issue 30.3: the tarballs install offline in a fresh project (the main
// package and this platform's, by file path), npx lapse runs the binary,
// and the fixture the main package exports drives the lapse it started.
func TestIssue30_3_NpmPackagesInstallAndRun(t *testing.T) {
	pkgs, stamped := npmDist(t)
	node, npm, npx := npmTools(t)
	checkNpmManifests(t, pkgs, stamped)
	if t.Failed() {
		return
	}
	platform := npmPlatform()
	native, ok := pkgs["@lapse-emulator/"+platform]
	if !ok {
		t.Fatalf("no package for this platform, %s", platform)
	}
	for name, tb := range pkgs {
		if st, err := os.Stat(tb.file); err == nil {
			t.Logf("%s: %s, %.1f MB", name, filepath.Base(tb.file), float64(st.Size())/1e6)
		}
	}

	p := newNpmProject(t, npm)
	start := time.Now()
	p.install(t, npm, pkgs["lapse-emulator"].file, native.file)
	t.Logf("npm install --offline of lapse-emulator and %s: %v", platform, time.Since(start).Round(time.Millisecond))

	t.Run("Version", func(t *testing.T) {
		out := p.mustRun(t, npx, "--no-install", "lapse", "version")
		if !strings.HasPrefix(out, "lapse "+stamped+" ") {
			t.Errorf("npx lapse version printed %q, want lapse %s (...)", out, stamped)
		}
	})

	t.Run("ExitCode", func(t *testing.T) {
		// lapse exits 2 for a mistake on the command line; the launcher
		// passes the code on.
		out, err := p.run(t, nil, npx, "--no-install", "lapse", "no-such-command")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(out, `unknown command "no-such-command"`) {
			t.Errorf("npx lapse no-such-command: %v, want exit code 2 and lapse's message\n%s", err, out)
		}
	})

	t.Run("ServeAndSandbox", func(t *testing.T) {
		url, cmd, exited := p.startLapse(t, npx, "--no-install", "lapse")
		script := filepath.Join(p.dir, "sandbox.test.mjs")
		if err := os.WriteFile(script, []byte(npmSandboxScript), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := p.run(t, []string{"LAPSE_URL=" + url}, node, script)
		if err != nil {
			t.Fatalf("node sandbox.test.mjs: %v\n%s", err, out)
		}
		t.Logf("node sandbox.test.mjs: %s", clienttest.LastLine([]byte(out)))
		var left []json.RawMessage
		if err := npmGetJSON(url+"/api/sandboxes", &left); err != nil || len(left) != 0 {
			t.Errorf("GET /api/sandboxes after dispose: %v, %d left, want none", err, len(left))
		}
		// Ctrl-C in a terminal reaches the whole process group.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		npmWaitExit(t, exited, "npx lapse serve after SIGINT")
		if npmHealthy(url) {
			t.Errorf("lapse still answers on %s after npx lapse serve was interrupted", url)
		}
	})

	t.Run("SignalReachesBinary", func(t *testing.T) {
		// A process manager signals the launcher alone: it passes SIGTERM
		// on to lapse, which shuts down, and ends with lapse's code, 0.
		launcher := filepath.Join(p.dir, "node_modules", ".bin", "lapse")
		url, cmd, exited := p.startLapse(t, launcher)
		cmd.Process.Signal(syscall.SIGTERM)
		if err := npmWaitExit(t, exited, "the lapse launcher after SIGTERM"); err != nil {
			t.Errorf("the launcher after SIGTERM: %v, want exit code 0 (lapse's after a clean shutdown)", err)
		}
		if npmHealthy(url) {
			t.Errorf("lapse still answers on %s after its launcher got SIGTERM and exited: the signal did not reach it", url)
		}
	})

	t.Run("WithoutPlatformPackage", func(t *testing.T) {
		// Installed alone (as --omit=optional does), the main package's
		// command says which package is missing.
		bare := newNpmProject(t, npm)
		bare.install(t, npm, pkgs["lapse-emulator"].file)
		out, err := bare.run(t, nil, npx, "--no-install", "lapse", "version")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("npx lapse version without %s: %v, want exit code 1\n%s", native.manifest.Name, err, out)
		}
		goos, cpu, _ := strings.Cut(platform, "-")
		for _, want := range []string{native.manifest.Name + "@" + native.manifest.Version, goos + " " + cpu, "is not installed"} {
			if !strings.Contains(out, want) {
				t.Errorf("npx lapse version without %s printed %q, want it to name %q", native.manifest.Name, out, want)
			}
		}
	})
}

// npmGetJSON decodes the JSON body of a GET of url into v.
func npmGetJSON(url string, v any) error {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
