package cosmos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/cosmos"
)

// jsDir holds package.json, its lock file and scenarios.mjs.
const jsDir = "jstest"

// mustJS returns node's path, when node and jstest/node_modules are there.
// Without them the test skips, but fails under CI, which must run it.
func mustJS(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(jsDir, "node_modules", "@azure", "cosmos", "package.json"))
	}
	if err != nil {
		msg := fmt.Sprintf("the JS SDK tests need node and cosmos/jstest/node_modules (run `npm ci --prefix cosmos/jstest`): %v", err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// runJSScenario runs one scenario of scenarios.mjs against f and returns
// the JSON line it printed. The control server's POST /advance?by=D moves
// f's clock on the test's goroutine (f.advance) while node waits for the
// answer.
func runJSScenario(t *testing.T, node string, f *fixture, name string) []byte {
	t.Helper()
	type advance struct {
		by   time.Duration
		done chan struct{}
	}
	advances := make(chan advance)
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		by, err := time.ParseDuration(r.URL.Query().Get("by"))
		if r.Method != http.MethodPost || r.URL.Path != "/advance" || err != nil || by <= 0 {
			http.Error(w, "POST /advance?by=DURATION", http.StatusBadRequest)
			return
		}
		a := advance{by: by, done: make(chan struct{})}
		select {
		case advances <- a:
			<-a.done
		case <-r.Context().Done():
		}
	}))
	defer control.Close()

	c, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(c, node, "scenarios.mjs", name)
	cmd.Dir = jsDir
	cmd.Env = append(os.Environ(), "COSMOS_ENDPOINT="+f.endpoint, "COSMOS_KEY="+cosmos.EmulatorKey, "LAPSE_CONTROL_URL="+control.URL)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
wait:
	for {
		select {
		case a := <-advances:
			f.advance(a.by)
			close(a.done)
		case err = <-exited:
			break wait
		}
	}
	if err != nil || c.Err() != nil {
		t.Fatalf("node scenarios.mjs %s: %v (%v)\nstdout: %s\nstderr: %s", name, err, c.Err(), stdout.Bytes(), stderr.Bytes())
	}
	lines := bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n"))
	var head struct{ Scenario string }
	if len(lines) != 1 || json.Unmarshal(lines[0], &head) != nil || head.Scenario != name {
		t.Fatalf("node scenarios.mjs %s printed %q, want one JSON line for the scenario\nstderr: %s", name, stdout.Bytes(), stderr.Bytes())
	}
	return lines[0]
}

// newOf returns a pointer to a new zero value of v's type, for decoding.
func newOf(v any) any { return reflect.New(reflect.TypeOf(v)).Interface() }

// derefAny returns the value p points to.
func derefAny(p any) any { return reflect.ValueOf(p).Elem().Interface() }
