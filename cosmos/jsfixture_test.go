package cosmos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/cosmos"
)

// jsDir holds package.json, its lock file and scenarios.mjs.
const jsDir = "jstest"

// runJSScenario runs one scenario of scenarios.mjs against f and returns
// the JSON line it printed.
func runJSScenario(t *testing.T, node string, f *fixture, name string) []byte {
	t.Helper()
	env := []string{"COSMOS_ENDPOINT=" + f.endpoint, "COSMOS_KEY=" + cosmos.EmulatorKey}
	stdout, _ := runProgram(t, f, jsDir, env, node, "scenarios.mjs", name)
	return scenarioLine(t, name, stdout)
}

// runProgram runs argv in dir, with env added to this process's
// environment and LAPSE_CONTROL_URL, and returns what it printed on
// stdout and stderr; it fails
// the test when the program fails or runs past 90 s. The control server
// at LAPSE_CONTROL_URL, POST /advance?by=D, moves f's clock on the test's
// goroutine (f.advance) while the program waits for the answer.
func runProgram(t *testing.T, f *fixture, dir string, env []string, argv ...string) (stdout, stderr []byte) {
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
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(c, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "LAPSE_CONTROL_URL="+control.URL)
	cmd.Stdout, cmd.Stderr = &out, &errOut
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
		t.Fatalf("%s: %v (%v)\nstdout: %s\nstderr: %s", strings.Join(argv, " "), err, c.Err(), out.Bytes(), errOut.Bytes())
	}
	return out.Bytes(), errOut.Bytes()
}

// scenarioLine returns the one JSON line a scenario program printed, which
// names the scenario.
func scenarioLine(t *testing.T, name string, stdout []byte) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	var head struct{ Scenario string }
	if len(lines) != 1 || json.Unmarshal(lines[0], &head) != nil || head.Scenario != name {
		t.Fatalf("scenario %s printed %q, want one JSON line for the scenario", name, stdout)
	}
	return lines[0]
}

// newOf returns a pointer to a new zero value of v's type, for decoding.
func newOf(v any) any { return reflect.New(reflect.TypeOf(v)).Interface() }

// derefAny returns the value p points to.
func derefAny(p any) any { return reflect.ValueOf(p).Elem().Interface() }
