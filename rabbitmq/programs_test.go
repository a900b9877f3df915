package rabbitmq_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// Helpers for the tests that drive the server with outside programs: the
// Python clients (Debian's pika and kombu), the programs of the tutorials'
// flows in Go, JavaScript and Python. Such a test skips when its program is missing,
// except in CI (CI set), where it fails.

// jsDir holds package.json, its lock file and node_modules (npm ci).
const jsDir = "jstest"

// program is an outside program a test started; its stdout and stderr go
// to out.
type program struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	out    clienttest.Buffer
	exited chan struct{}
	err    error
}

// startProgram starts name with args in dir (or the test's folder), with
// env added to the environment. It is killed at the end of the test if it
// still runs.
func startProgram(t *testing.T, dir string, env []string, name string, args ...string) *program {
	t.Helper()
	p := &program{t: t, name: filepath.Base(name) + " " + strings.Join(args, " "), exited: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", p.name, p.out.String())
		}
	})
	return p
}

// wait waits for the program to end by itself, which it must do without
// an error within timeout.
func (p *program) wait(timeout time.Duration) string {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		p.t.Fatalf("%s still runs after %v; output:\n%s", p.name, timeout, p.out.String())
	}
	if p.err != nil {
		p.t.Fatalf("%s: %v; output:\n%s", p.name, p.err, p.out.String())
	}
	return p.out.String()
}

// waitFor waits until the program has printed every one of texts, and
// fails the test after timeout.
func (p *program) waitFor(timeout time.Duration, texts ...string) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := p.out.String()
		missing := ""
		for _, s := range texts {
			if !strings.Contains(out, s) {
				missing = s
				break
			}
		}
		if missing == "" {
			return
		}
		select {
		case <-p.exited:
			p.t.Fatalf("%s ended (%v) before printing %q; output:\n%s", p.name, p.err, missing, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s did not print %q within %v; output:\n%s", p.name, missing, timeout, out)
		}
	}
}

// interrupt stops a program that runs until stopped, as a user's Ctrl-C
// does, and waits for it to end (killing it after a while).
func (p *program) interrupt() string {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
	return p.out.String()
}

// MustClockControl serves POST /advance?by=DURATION, which moves f's clock
// and applies what fell due before it answers, for programs that cannot
// call f.advance; it returns the base URL.
func MustClockControl(t *testing.T, f *fixture) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		by, err := time.ParseDuration(r.URL.Query().Get("by"))
		if r.Method != http.MethodPost || r.URL.Path != "/advance" || err != nil || by <= 0 {
			http.Error(w, "POST /advance?by=DURATION", http.StatusBadRequest)
			return
		}
		now, err := f.clock.Advance(by)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if _, err := f.e.ApplyDue(context.Background(), now); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
