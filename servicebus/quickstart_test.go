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

// Microsoft's Service Bus quickstarts, kept in testdata/quickstart as the
// tutorials give them, run against a server in the test's process with
// only the connection string and the entity names filled in.

// quickstartDir holds the quickstarts' programs.
const quickstartDir = "testdata/quickstart"

// mustQuickstartServer starts a server whose frozen clock stands at the
// real time, since the JS SDK renews locks by the wall clock, logging to
// log.
func mustQuickstartServer(t *testing.T, log *syncBuffer) *fixture {
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

// runJSQuickstart writes the quickstart program file of dir to a
// directory of the test's with each placeholder replaced, and runs it
// with node, @azure/service-bus coming from jstest's node_modules.
func runJSQuickstart(t *testing.T, node, dir, file string, fill map[string]string, timeout time.Duration) string {
	t.Helper()
	var replace []string
	for placeholder, v := range fill {
		replace = append(replace, placeholder, v)
	}
	tmp := t.TempDir()
	clienttest.Fill(t, filepath.Join(quickstartDir, dir, file), tmp, replace...)
	modules, err := filepath.Abs(filepath.Join(jsDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	return runProgram(t, timeout, tmp, []string{"NODE_PATH=" + modules}, node, file)
}

// scientists are the messages the JS quickstarts send.
var scientists = []string{"Albert Einstein", "Werner Heisenberg", "Marie Curie", "Steven Hawking", "Isaac Newton",
	"Niels Bohr", "Michael Faraday", "Galileo Galilei", "Johannes Kepler", "Nikolaus Kopernikus"}

// receivedLines are the lines the JS quickstarts' receivers print when
// they get every message and nothing goes wrong.
func receivedLines() string {
	var b strings.Builder
	for _, s := range scientists {
		fmt.Fprintf(&b, "Received message: %s\n", s)
	}
	return b.String()
}

func TestJSQueueQuickstart(t *testing.T) {
	// issue 13.1: the quickstart's messages carry no message-id; the SDK's
	// subscribe completes each after the handler and stops its lock
	// renewal, keyed by message-id ("Failed to stop auto lock renewal - no
	// message ID" without one, and the messages stay locked).
	node := clienttest.Node(t, jsDir, "@azure/service-bus")
	var log syncBuffer
	f := mustQuickstartServer(t, &log)
	f.MustQueue("myqueue", nil)
	fill := map[string]string{"<CONNECTION STRING TO SERVICE BUS NAMESPACE>": f.connStr, "<QUEUE NAME>": "myqueue"}

	out := runJSQuickstart(t, node, "js-queue", "send.js", fill, time.Minute)
	if out != "Sent a batch of messages to the queue: myqueue\n" {
		t.Fatalf("send.js printed %q", out)
	}
	if got := f.counts("myqueue"); got.Active != len(scientists) {
		t.Fatalf("after send.js the queue holds %+v, want %d active messages", got, len(scientists))
	}
	out = runJSQuickstart(t, node, "js-queue", "receive.js", fill, time.Minute)
	if diff := cmp.Diff(receivedLines(), out); diff != "" {
		t.Errorf("receive.js printed (-want +got):\n%s", diff)
	}
	if got := f.counts("myqueue"); got != (core.Counts{}) {
		t.Errorf("after receive.js the queue holds %+v, want every message completed", got)
	}
}

func TestJSTopicQuickstart(t *testing.T) {
	// issue 13.1: as TestJSQueueQuickstart, from a topic's subscription.
	node := clienttest.Node(t, jsDir, "@azure/service-bus")
	var log syncBuffer
	f := mustQuickstartServer(t, &log)
	f.MustTopic("mytopic", nil, "mysubscription")
	fill := map[string]string{"<SERVICE BUS NAMESPACE CONNECTION STRING>": f.connStr, "<TOPIC NAME>": "mytopic"}

	out := runJSQuickstart(t, node, "js-topic", "sendtotopic.js", fill, time.Minute)
	if out != "Sent a batch of messages to the topic: mytopic\n" {
		t.Fatalf("sendtotopic.js printed %q", out)
	}
	fill["<SUBSCRIPTION NAME>"] = "mysubscription"
	out = runJSQuickstart(t, node, "js-topic", "receivefromsubscription.js", fill, time.Minute)
	if diff := cmp.Diff(receivedLines(), out); diff != "" {
		t.Errorf("receivefromsubscription.js printed (-want +got):\n%s", diff)
	}
	if got := f.counts("mytopic/Subscriptions/mysubscription"); got != (core.Counts{}) {
		t.Errorf("after receivefromsubscription.js the subscription holds %+v, want every message completed", got)
	}
}

func TestGoQueueQuickstart(t *testing.T) {
	// issue 13: the Go quickstart (send, send a batch, receive and
	// complete, dead-letter, receive from the dead-letter queue) with the
	// emulator's connection string.
	goTool, err := exec.LookPath("go")
	if err != nil {
		msg := fmt.Sprintf("the Go quickstart test runs go run: %v", err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var log syncBuffer
	f := mustQuickstartServer(t, &log)
	f.MustQueue("myqueue", nil)
	out := runProgram(t, 5*time.Minute, ".", []string{"AZURE_SERVICEBUS_CONNECTION_STRING=" + f.connStr},
		goTool, "run", "./"+quickstartDir+"/go-queue")
	want := `send a single message...
send two messages as a batch...

get all three messages:
firstMessage
secondMessage
thirdMessage

send a message to the Dead Letter Queue:
DeadLetter Reason: exampleReason
DeadLetter Description: exampleErrorDescription
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("the Go quickstart printed (-want +got):\n%s", diff)
	}
	for _, path := range []string{"myqueue", "myqueue/$DeadLetterQueue"} {
		if got := f.counts(path); got != (core.Counts{}) {
			t.Errorf("after the Go quickstart %s holds %+v, want nothing", path, got)
		}
	}
}
