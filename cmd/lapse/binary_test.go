package main

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// process is a lapse binary running in the background.
type process struct {
	cmd    *exec.Cmd
	url    string        // its control API
	stderr chan string   // the rest of its stderr, once it ended
	lines  []string      // its stderr up to the listening line
	done   chan struct{} // closed when its stderr is read to the end
}

var listening = regexp.MustCompile(`msg=listening listener=control addr=(\S+)`)

// MustBuild builds the lapse binary into a temporary folder.
func MustBuild(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// Not t.TempDir, whose folders only root can enter: an unprivileged
	// user runs the binary too.
	base, err := os.MkdirTemp("", "lapse-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "lapse")
	out, err := exec.Command("go", "build", "-ldflags", "-X main.version=test-build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// MustSpawn starts the binary with args and waits until it logs its control
// address.
func MustSpawn(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	return mustSpawnEnv(t, bin, nil, args...)
}

// mustSpawnEnv is MustSpawn with more environment variables.
func mustSpawnEnv(t *testing.T, bin string, env []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), stderr: make(chan string, 1), done: make(chan struct{})}
	p.cmd.Env = append([]string{"LAPSE_LOG_LEVEL=info"}, env...)
	r, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
			_ = p.cmd.Wait()
		}
	})
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		p.lines = append(p.lines, sc.Text())
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			p.url = "http://" + dialable(m[1])
			break
		}
	}
	go func() {
		defer close(p.done)
		rest, _ := io.ReadAll(r)
		p.stderr <- string(rest)
	}()
	if p.url == "" {
		<-p.done
		t.Fatalf("lapse did not log its control address:\n%s%s", strings.Join(p.lines, "\n"), <-p.stderr)
	}
	return p
}

// stop sends sig and returns the exit code and the rest of stderr.
func (p *process) stop(t *testing.T, sig os.Signal) (int, string) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	<-p.done
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return p.cmd.ProcessState.ExitCode(), <-p.stderr
}

// The binary: signals, a second lapse on a locked folder, the health check
// the container uses, the version set by -ldflags.
func TestBinary(t *testing.T) {
	bin := MustBuild(t)
	dir := filepath.Join(t.TempDir(), "data")
	args := serveArgs(dir)

	p := MustSpawn(t, bin, args...)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(p.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /healthz: %d", resp.StatusCode)
	}
	if out, err := exec.Command(bin, "healthcheck", "--control-url", p.url).CombinedOutput(); err != nil {
		t.Errorf("lapse healthcheck: %v %s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "lapse test-build (go") {
		t.Errorf("lapse version: %v %q", err, out)
	}

	// A second lapse on the same folder: one line, exit code 1.
	second := exec.Command(bin, args...)
	var stderr strings.Builder
	second.Stderr = &stderr
	err = second.Run()
	if second.ProcessState.ExitCode() != 1 {
		t.Errorf("second lapse on the same folder: %v, want exit code 1", err)
	}
	if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "is in use by another lapse process (pid ") {
		t.Errorf("second lapse's stderr = %q, want one line saying the folder is in use", got)
	}

	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		code, rest := p.stop(t, sig)
		if code != 0 || !strings.Contains(rest, "msg=stopped") {
			t.Errorf("after %v: exit code %d, stderr:\n%s", sig, code, rest)
		}
		// The lock went with the process: the folder opens again.
		p = MustSpawn(t, bin, args...)
	}
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if out, err := exec.Command(bin, "healthcheck", "--control-url", p.url).CombinedOutput(); err == nil {
		t.Errorf("lapse healthcheck of a stopped lapse succeeded: %s", out)
	}
}

// A data folder whose database lapse cannot read: one line, exit code 1,
// the file untouched. Root reads every file whatever its mode, so under
// root the binary runs as the unprivileged user 65534.
func TestBinaryUnreadableDataFolder(t *testing.T) {
	bin := MustBuild(t)
	dir := filepath.Join(filepath.Dir(bin), "data")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // whatever the umask
		t.Fatal(err)
	}
	db := filepath.Join(dir, "lapse.db")
	if err := os.WriteFile(db, []byte("SQLite format 3\x00 and more"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(db, 0); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, serveArgs(dir)...)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("lapse on an unreadable folder: %v, want exit code 1; stderr %q", err, stderr.String())
	}
	if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "lapse: ") || !strings.Contains(got, "lapse.db: permission denied") {
		t.Errorf("stderr = %q, want one line saying lapse.db cannot be read", got)
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() != int64(len("SQLite format 3\x00 and more")) {
		t.Errorf("the database file changed: %v %v", fi, err)
	}
}
