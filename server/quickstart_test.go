package server

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
)

// quickstartDir holds lapse's own programs of the flows of public
// quickstarts; docs/examples.md names each.
const quickstartDir = "testdata/quickstart"

// runUntil runs cmd and returns the lines it printed on stdout once it
// exits or, for a program that never ends (a receive loop), once it has
// printed want lines and settled (when not nil) reports true, polled for
// up to 10 s; then it is stopped.
func runUntil(tb testing.TB, cmd *exec.Cmd, want int, settled func() bool) []string {
	tb.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	timeout := time.After(90 * time.Second)
read:
	for len(got) < want {
		select {
		case l, ok := <-lines:
			if !ok {
				break read
			}
			got = append(got, l)
		case <-timeout:
			tb.Errorf("%s printed %d of %d lines in 90 s", cmd.Path, len(got), want)
			break read
		}
	}
	for deadline := time.Now().Add(10 * time.Second); settled != nil && !settled() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	for range lines {
	}
	cmd.Wait()
	if tb.Failed() || len(got) < want {
		tb.Fatalf("%s: stdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), strings.Join(got, "\n"), stderr.String())
	}
	return got
}

// MustTrustInPython returns the environment under which Debian's Python
// trusts lapse's certificate as it would after `update-ca-certificates`:
// Debian's certifi, which uamqp and requests read their trust from, is the
// system bundle; a certifi module first on PYTHONPATH gives the system
// bundle with lapse's certificate added. The program itself is unchanged.
func MustTrustInPython(tb testing.TB, python, certFile string) []string {
	tb.Helper()
	out, err := exec.Command(python, "-c", "import certifi; print(certifi.where())").Output()
	if err != nil {
		tb.Fatal(err)
	}
	system, err := os.ReadFile(strings.TrimSpace(string(out)))
	if err != nil {
		tb.Fatal(err)
	}
	lapse, err := os.ReadFile(certFile)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	bundle := filepath.Join(dir, "ca-certificates.crt")
	if err := os.WriteFile(bundle, append(append(system, '\n'), lapse...), 0o644); err != nil {
		tb.Fatal(err)
	}
	mod := filepath.Join(dir, "certifi")
	if err := os.Mkdir(mod, 0o755); err != nil {
		tb.Fatal(err)
	}
	src := "def where():\n    return " + pyQuote(bundle) + "\n\n\ndef contents():\n    with open(where()) as f:\n        return f.read()\n"
	if err := os.WriteFile(filepath.Join(mod, "__init__.py"), []byte(src), 0o644); err != nil {
		tb.Fatal(err)
	}
	return []string{"PYTHONPATH=" + dir, "REQUESTS_CA_BUNDLE=" + bundle}
}

func pyQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// lapse's own program of the flow of Microsoft's Python quickstart for
// Service Bus queues: azure-servicebus 7.8.2 sends 16 messages over AMQPS
// and receives them in order, completing each.
func TestQuickstartServiceBusQueuesPython(t *testing.T) {
	python := clienttest.Python(t, "azure.servicebus", "uamqp")
	m, ip := MustStartOnLoopback(t)
	MustSBAdmin(t, m).CreateQueue(sbContext(t), "mail", nil)
	env := MustTrustInPython(t, python, MustCertFile(t, m))
	env = append(env, "SERVICEBUS_CONNECTION_STRING="+sbKeyConnString(ip+":5671"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join(quickstartDir, "sbqueue.py"), "mail")
	cmd.Env = append(os.Environ(), env...)
	want := sbQuickstartLines()
	// It completes each message after printing it: the last completion
	// may follow the last line.
	sb := MustSBClient(t, m)
	empty := func() bool { return len(sbPeek(t, sb, "mail", 0)) == 0 }
	got := runUntil(t, cmd, len(want), empty)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if left := sbPeek(t, sb, "mail", 0); !slices.Equal(left, []string{}) {
		t.Errorf("not completed: %q", left)
	}
}

// sbQuickstartLines are the lines sbqueue.py and sbtopic.py print: three
// sends, then the sixteen messages in the order they were sent.
func sbQuickstartLines() []string {
	want := []string{"sent one message", "sent a list of 5 messages", "sent a batch of 10 messages", "received: single"}
	for i := 1; i <= 5; i++ {
		want = append(want, fmt.Sprintf("received: list %d", i))
	}
	for i := 1; i <= 10; i++ {
		want = append(want, fmt.Sprintf("received: batch %d", i))
	}
	return want
}

// issue 27: the same program of the queue quickstart with the current
// azure-servicebus 7.x (its own AMQP stack) and the emulator's connection
// string, plain AMQP on lapse's AMQP port.
func TestQuickstartServiceBusQueuesPython7(t *testing.T) {
	python := clienttest.PythonSDK(t, "import azure.servicebus")
	m := MustStart(t)
	MustSBAdmin(t, m).CreateQueue(sbContext(t), "mail", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join(quickstartDir, "sbqueue.py"), "mail")
	cmd.Env = append(os.Environ(), "SERVICEBUS_CONNECTION_STRING="+sbKeyConnString(listenerAddr(t, m, "amqp"))+"UseDevelopmentEmulator=true;")
	sb := MustSBClient(t, m)
	empty := func() bool { return len(sbPeek(t, sb, "mail", 0)) == 0 }
	got := runUntil(t, cmd, len(sbQuickstartLines()), empty)
	if diff := cmp.Diff(sbQuickstartLines(), got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if left := sbPeek(t, sb, "mail", 0); !slices.Equal(left, []string{}) {
		t.Errorf("not completed: %q", left)
	}
}

// issue 27: lapse's own program of the flow of Microsoft's Python
// quickstart for topics and subscriptions, with the asyncio clients of
// the current azure-servicebus 7.x and the emulator's connection string:
// 16 messages sent to a topic, received from its subscription in order and
// completed.
func TestQuickstartServiceBusTopicPython7(t *testing.T) {
	python := clienttest.PythonSDK(t, "import azure.servicebus")
	m := MustStart(t)
	ctx := sbContext(t)
	ad := MustSBAdmin(t, m)
	if _, err := ad.CreateTopic(ctx, "mytopic", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ad.CreateSubscription(ctx, "mytopic", "S1", nil); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, python, filepath.Join(quickstartDir, "sbtopic.py"), "mytopic", "S1")
	cmd.Env = append(os.Environ(), "SERVICEBUS_CONNECTION_STRING="+sbKeyConnString(listenerAddr(t, m, "amqp"))+"UseDevelopmentEmulator=true;")
	active := func() int32 {
		p, err := ad.GetSubscriptionRuntimeProperties(ctx, "mytopic", "S1", nil)
		if err != nil {
			t.Fatal(err)
		}
		return p.ActiveMessageCount
	}
	got := runUntil(t, cmd, len(sbQuickstartLines()), func() bool { return active() == 0 })
	if diff := cmp.Diff(sbQuickstartLines(), got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if n := active(); n != 0 {
		t.Errorf("%d messages not completed", n)
	}
}
