package packaging

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// served is a lapse binary of a package, serving on free loopback ports.
type served struct {
	url    string // the control API's base URL
	cmd    *exec.Cmd
	exited chan error
	once   sync.Once
	err    error
}

// controlListening finds the control port in lapse's log.
var controlListening = regexp.MustCompile(`msg=listening listener=control addr=\S*:(\d+)`)

// mustServe starts bin serve with data as its data folder and every
// listener on a free loopback port, learns the control port from its log
// and waits until /healthz answers. The test's end kills it if it still
// runs.
func mustServe(t *testing.T, bin, data string) *served {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", data, "--log-level", "info",
		"--amqp-addr", "127.0.0.1:0", "--amqps-addr", "127.0.0.1:0", "--cosmos-addr", "127.0.0.1:0",
		"--servicebus-admin-addr", "127.0.0.1:0", "--servicebus-websocket-addr", "127.0.0.1:0", "--rabbitmq-management-addr", "127.0.0.1:0",
		"--control-addr", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, exited: make(chan error, 1)}
	var mu sync.Mutex
	var log bytes.Buffer
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := controlListening.FindStringSubmatch(sc.Text()); m != nil {
				port <- m[1]
			}
		}
		s.exited <- cmd.Wait()
	}()
	logText := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
	t.Cleanup(func() { _ = s.stop(syscall.SIGKILL) })
	select {
	case p := <-port:
		s.url = "http://127.0.0.1:" + p
	case err := <-s.exited:
		s.once.Do(func() { s.err = err })
		t.Fatalf("%s serve exited before it listened: %v\n%s", bin, err, logText())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s serve did not log its control address in 30 s:\n%s", bin, logText())
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := client.Get(s.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s/healthz: %v\n%s", s.url, err, logText())
		}
		time.Sleep(50 * time.Millisecond) // readiness, not an expiry
	}
}

// stop sends sig to lapse and returns how it exited, waiting at most 10 s
// before it kills it; a second call returns the first's answer.
func (s *served) stop(sig syscall.Signal) error {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(sig)
		select {
		case s.err = <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
			s.err = fmt.Errorf("lapse serve did not stop within 10 s of %v", sig)
		}
	})
	return s.err
}
