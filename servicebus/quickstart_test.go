package servicebus_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus"
)

// lapse's own programs of the flows of Microsoft's Service Bus
// quickstarts (testdata/quickstart; docs/examples.md names each), run
// against a server in the test's process with the connection string in
// SERVICEBUS_CONNECTION_STRING and the entities' names as arguments.

// quickstartDir holds the programs.
const quickstartDir = "testdata/quickstart"

// mustQuickstartServer starts a server whose frozen clock stands at the
// real time, since the JS SDK renews locks by the wall clock, logging to
// log.
func mustQuickstartServer(t *testing.T, log *clienttest.Buffer) *fixture {
	t.Helper()
	f := newFixture(t, core.NewMemStore(), time.Now().UTC().Truncate(time.Millisecond), func(c *servicebus.Config) {
		c.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	return f
}

// runProgram runs a quickstart program and returns what it printed; it
// fails the test when the program fails or runs past timeout.
func runProgram(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) string {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(c, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil || c.Err() != nil {
		t.Fatalf("%s %s: %v (%v)\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), err, c.Err(), stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String()
}

// runJSQuickstart runs the program file of quickstartDir/js with node and
// args, @azure/service-bus coming from jstest's node_modules, and returns
// what it printed.
func runJSQuickstart(t *testing.T, node, connStr, file string, args ...string) string {
	t.Helper()
	modules, err := filepath.Abs(filepath.Join(jsDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"NODE_PATH=" + modules, "SERVICEBUS_CONNECTION_STRING=" + connStr}
	return runProgram(t, time.Minute, filepath.Join(quickstartDir, "js"), env, node, append([]string{file}, args...)...)
}

// parcels are the lines receive.js prints when it gets the ten messages
// send.js sends, in order, and nothing goes wrong.
func parcels() string {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "received: parcel %d\n", i)
	}
	return b.String()
}

func TestJSQueueQuickstart(t *testing.T) {
	// issue 13.1: the program's messages carry no message-id; the SDK's
	// subscribe completes each after the handler and stops its lock
	// renewal, keyed by message-id ("Failed to stop auto lock renewal - no
	// message ID" without one, and the messages stay locked).
	node := clienttest.Node(t, jsDir, "@azure/service-bus")
	var log clienttest.Buffer
	f := mustQuickstartServer(t, &log)
	f.MustQueue("deliveries", nil)

	if out := runJSQuickstart(t, node, f.connStr, "send.js", "deliveries"); out != "sent 10 messages to deliveries\n" {
		t.Fatalf("send.js printed %q", out)
	}
	if got := f.counts("deliveries"); got.Active != 10 {
		t.Fatalf("after send.js the queue holds %+v, want 10 active messages", got)
	}
	out := runJSQuickstart(t, node, f.connStr, "receive.js", "10", "deliveries")
	if diff := cmp.Diff(parcels(), out); diff != "" {
		t.Errorf("receive.js printed (-want +got):\n%s", diff)
	}
	if got := f.counts("deliveries"); got != (core.Counts{}) {
		t.Errorf("after receive.js the queue holds %+v, want every message completed", got)
	}
}

func TestJSTopicQuickstart(t *testing.T) {
	// issue 13.1: as TestJSQueueQuickstart, from a topic's subscription.
	node := clienttest.Node(t, jsDir, "@azure/service-bus")
	var log clienttest.Buffer
	f := mustQuickstartServer(t, &log)
	f.MustTopic("deliveries", nil, "depot")

	if out := runJSQuickstart(t, node, f.connStr, "send.js", "deliveries"); out != "sent 10 messages to deliveries\n" {
		t.Fatalf("send.js printed %q", out)
	}
	out := runJSQuickstart(t, node, f.connStr, "receive.js", "10", "deliveries", "depot")
	if diff := cmp.Diff(parcels(), out); diff != "" {
		t.Errorf("receive.js printed (-want +got):\n%s", diff)
	}
	if got := f.counts("deliveries/Subscriptions/depot"); got != (core.Counts{}) {
		t.Errorf("after receive.js the subscription holds %+v, want every message completed", got)
	}
}

func TestGoQueueQuickstart(t *testing.T) {
	// issue 13: the Go program (send, send a batch, receive and complete,
	// dead-letter, receive from the dead-letter queue) with the emulator's
	// connection string.
	goTool, err := exec.LookPath("go")
	if err != nil {
		clienttest.Need(t, fmt.Sprintf("the Go quickstart test runs go run: %v", err))
	}
	var log clienttest.Buffer
	f := mustQuickstartServer(t, &log)
	f.MustQueue("notes", nil)
	out := runProgram(t, 5*time.Minute, ".", []string{"SERVICEBUS_CONNECTION_STRING=" + f.connStr},
		goTool, "run", "./"+quickstartDir+"/go", "notes")
	want := `sent: note 1
sent as a batch: note 2, note 3
received: note 1
received: note 2
received: note 3
sent: note 4
dead-lettered: note 4
from the dead-letter queue: note 4 (unreadable: the ink ran)
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("the Go program printed (-want +got):\n%s", diff)
	}
	for _, path := range []string{"notes", "notes/$DeadLetterQueue"} {
		if got := f.counts(path); got != (core.Counts{}) {
			t.Errorf("after the Go program %s holds %+v, want nothing", path, got)
		}
	}
}
