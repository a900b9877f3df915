package rabbitmq_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// lapse's own programs of the flows of RabbitMQ's tutorials 1 ("Hello
// World!") and 2 ("Work Queues"), in Go, JavaScript and Python
// (testdata/tutorials; docs/examples.md names the tutorials), run against
// a server started here with the broker's URL in RABBITMQ_URL. Receivers
// and workers run until interrupted: the test interrupts them once they
// printed what they received.

// tutorialTimeout bounds one tutorial program's run and each wait for its
// output.
const tutorialTimeout = 30 * time.Second

// tutorialRun is how a test starts the tutorial program of one language
// with a command (send, receive, add, work) and its arguments.
type tutorialRun func(t *testing.T, command string, args ...string) *program

// checkHelloWorld runs tutorial 1's flow: the receiver, started first,
// prints the message the sender sent.
func checkHelloWorld(t *testing.T, run tutorialRun) {
	t.Helper()
	recv := run(t, "receive")
	recv.waitFor(tutorialTimeout, "waiting on greetings\n")
	if out := run(t, "send").wait(tutorialTimeout); out != "sent: hello, lapse\n" {
		t.Errorf("send printed %q, want %q", out, "sent: hello, lapse\n")
	}
	recv.waitFor(tutorialTimeout, "got: hello, lapse\n")
	if out := recv.interrupt(); strings.Count(out, "got: ") != 1 {
		t.Errorf("the receiver got other than one message:\n%s", out)
	}
}

// checkWorkQueues runs tutorial 2's flow with two workers: four jobs
// added one after the other go round-robin, two to each worker, each
// taken and acked once.
func checkWorkQueues(t *testing.T, run tutorialRun) {
	t.Helper()
	workers := []*program{run(t, "work"), run(t, "work")}
	for _, w := range workers {
		w.waitFor(tutorialTimeout, "waiting on jobs\n")
	}
	jobs := []string{"wash the car", "feed the cat", "water the plants", "post the letters"}
	for _, job := range jobs {
		if out, want := run(t, "add", strings.Fields(job)...).wait(tutorialTimeout), "added: "+job+"\n"; out != want {
			t.Errorf("add printed %q, want %q", out, want)
		}
	}
	acked := func(out string) int { return strings.Count(out, "acked: ") }
	for deadline := time.Now().Add(tutorialTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if acked(workers[0].out.String())+acked(workers[1].out.String()) >= len(jobs) {
			break
		}
	}
	outs := []string{workers[0].interrupt(), workers[1].interrupt()}
	for _, job := range jobs {
		for _, line := range []string{"took: " + job + "\n", "acked: " + job + "\n"} {
			if n := strings.Count(outs[0], line) + strings.Count(outs[1], line); n != 1 {
				t.Errorf("%q printed %d times, want once:\nworker 1:\n%s\nworker 2:\n%s", line, n, outs[0], outs[1])
			}
		}
	}
	for i, out := range outs {
		if n := acked(out); n != 2 {
			t.Errorf("worker %d acked %d jobs, want 2 (round-robin):\n%s", i+1, n, out)
		}
	}
}

// issue 13: the Go program (amqp091-go), built once.
func TestTutorialsGo(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "tutorials")
	if out, err := exec.Command(goBin, "build", "-o", bin, "./testdata/tutorials/go").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	runner := func(f *fixture) tutorialRun {
		return func(t *testing.T, command string, args ...string) *program {
			t.Helper()
			return startProgram(t, "", []string{"RABBITMQ_URL=" + f.url}, bin, append([]string{command}, args...)...)
		}
	}
	t.Run("HelloWorld", func(t *testing.T) { checkHelloWorld(t, runner(MustServer(t))) })
	t.Run("WorkQueues", func(t *testing.T) { checkWorkQueues(t, runner(MustServer(t))) })
}

// issue 13: the JavaScript program (amqplib, from jstest/node_modules).
func TestTutorialsJavaScript(t *testing.T) {
	node := clienttest.Node(t, jsDir, "amqplib")
	modules, err := filepath.Abs(filepath.Join(jsDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := filepath.Abs(filepath.Join("testdata", "tutorials", "tutorials.js"))
	if err != nil {
		t.Fatal(err)
	}
	runner := func(f *fixture) tutorialRun {
		return func(t *testing.T, command string, args ...string) *program {
			t.Helper()
			// amqplib reads a URL path of "/" as the empty vhost name.
			env := []string{"NODE_PATH=" + modules, "RABBITMQ_URL=" + strings.TrimSuffix(f.url, "/")}
			return startProgram(t, "", env, node, append([]string{prog, command}, args...)...)
		}
	}
	t.Run("HelloWorld", func(t *testing.T) { checkHelloWorld(t, runner(MustServer(t))) })
	t.Run("WorkQueues", func(t *testing.T) { checkWorkQueues(t, runner(MustServer(t))) })
}

// issue 13: the Python program (Debian's pika 1.2.0).
func TestTutorialsPython(t *testing.T) {
	checkPythonTutorials(t, clienttest.Python(t, "pika"))
}

// issue 27: the same Python program, unchanged, with the current pika of
// requirements.txt ($LAPSE_PYTHON_SDK's venv).
func TestTutorialsPythonCurrentPika(t *testing.T) {
	checkPythonTutorials(t, pythonSDK(t))
}

// checkPythonTutorials runs tutorials.py's five tutorials with python.
func checkPythonTutorials(t *testing.T, python string) {
	t.Helper()
	prog, err := filepath.Abs(filepath.Join("testdata", "tutorials", "tutorials.py"))
	if err != nil {
		t.Fatal(err)
	}
	runner := func(f *fixture) tutorialRun {
		return func(t *testing.T, command string, args ...string) *program {
			t.Helper()
			env := []string{"PYTHONUNBUFFERED=1", "RABBITMQ_URL=" + f.url}
			return startProgram(t, "", env, python, append([]string{prog, command}, args...)...)
		}
	}
	t.Run("HelloWorld", func(t *testing.T) { checkHelloWorld(t, runner(MustServer(t))) })
	t.Run("WorkQueues", func(t *testing.T) { checkWorkQueues(t, runner(MustServer(t))) })
	checkExchangeTutorials(t, runner)
}

// checkExchangeTutorials runs tutorials 3 to 5, each against a server of
// its own, with the program runner gives.
func checkExchangeTutorials(t *testing.T, runner func(*fixture) tutorialRun) {
	t.Helper()
	t.Run("PublishSubscribe", func(t *testing.T) { checkPublishSubscribe(t, runner(MustServer(t))) })
	t.Run("Routing", func(t *testing.T) {
		checkKeyedRouting(t, runner(MustServer(t)), "log", "watch",
			[][]string{{"error"}, {"info", "warning", "error"}},
			[]string{"info", "error", "debug", "warning"},
			[][]string{{"error"}, {"info", "error", "warning"}}, "error")
	})
	t.Run("Topics", func(t *testing.T) {
		checkKeyedRouting(t, runner(MustServer(t)), "tell", "hear",
			[][]string{{"kern.*"}, {"*.critical"}, {"#"}, {"kern.#", "*.*.rabbit"}},
			[]string{"kern.critical", "kern.info", "cron.critical", "quick.orange.rabbit", "lazy"},
			[][]string{{"kern.critical", "kern.info"}, {"kern.critical", "cron.critical"},
				{"kern.critical", "kern.info", "cron.critical", "quick.orange.rabbit", "lazy"},
				{"kern.critical", "kern.info", "quick.orange.rabbit"}}, "kern.critical")
	})
}

// checkPublishSubscribe runs tutorial 3's flow: two listeners, each with
// a queue of its own bound to the fanout exchange, both get every line.
func checkPublishSubscribe(t *testing.T, run tutorialRun) {
	t.Helper()
	listeners := []*program{run(t, "listen"), run(t, "listen")}
	for _, l := range listeners {
		l.waitFor(tutorialTimeout, "waiting on logs\n")
	}
	for _, line := range []string{"disk almost full", "backup done"} {
		if out, want := run(t, "emit", strings.Fields(line)...).wait(tutorialTimeout), "emitted: "+line+"\n"; out != want {
			t.Errorf("emit printed %q, want %q", out, want)
		}
	}
	for i, l := range listeners {
		l.waitFor(tutorialTimeout, "got: disk almost full\n", "got: backup done\n")
		if out := l.interrupt(); strings.Count(out, "got: ") != 2 {
			t.Errorf("listener %d got other than the two lines:\n%s", i+1, out)
		}
	}
}

// checkKeyedRouting runs the flow of tutorial 4 (publish and subscribe
// commands log and watch, direct exchange) or 5 (tell and hear, topic
// exchange): each subscriber, bound with its keys, gets exactly the
// messages whose key they match; last, a key every subscriber matches,
// ends the run.
func checkKeyedRouting(t *testing.T, run tutorialRun, publish, subscribe string, subscribers [][]string, sent []string, got [][]string, last string) {
	t.Helper()
	var subs []*program
	for _, keys := range subscribers {
		s := run(t, subscribe, keys...)
		s.waitFor(tutorialTimeout, "waiting on "+strings.Join(keys, ",")+"\n")
		subs = append(subs, s)
	}
	verb := map[string]string{"log": "logged", "tell": "told"}[publish]
	for _, key := range sent {
		out := run(t, publish, key, "note", "for", key).wait(tutorialTimeout)
		if want := verb + " " + key + ": note for " + key + "\n"; out != want {
			t.Errorf("%s printed %q, want %q", publish, out, want)
		}
	}
	if out, want := run(t, publish, last, "the", "end").wait(tutorialTimeout), verb+" "+last+": the end\n"; out != want {
		t.Errorf("%s printed %q, want %q", publish, out, want)
	}
	for i, s := range subs {
		var lines []string
		for _, key := range got[i] {
			lines = append(lines, "got "+key+": note for "+key+"\n")
		}
		// The last message, which every subscriber gets, comes after
		// anything misrouted to it (one queue, in order): once it is
		// printed, the output holds the rest.
		lines = append(lines, "got "+last+": the end\n")
		s.waitFor(tutorialTimeout, lines...)
		if out := s.interrupt(); strings.Count(out, "got ") != len(lines) {
			t.Errorf("subscriber %d (%v) got other than %v:\n%s", i+1, subscribers[i], got[i], out)
		}
	}
}

// issue 27: the Java program (amqp-client 5.x, testdata/java's Tutorials,
// built by .ci/run), tutorials 1 to 5.
func TestTutorialsJava(t *testing.T) {
	java, cp := clienttest.Java(t, javaDir)
	runner := func(f *fixture) tutorialRun {
		return func(t *testing.T, command string, args ...string) *program {
			t.Helper()
			// The Java client reads a URL path of "/" as the vhost "".
			env := []string{"RABBITMQ_URL=" + strings.TrimSuffix(f.url, "/")}
			return startProgram(t, "", env, java, append([]string{"-cp", cp, "lapse.Tutorials", command}, args...)...)
		}
	}
	t.Run("HelloWorld", func(t *testing.T) { checkHelloWorld(t, runner(MustServer(t))) })
	t.Run("WorkQueues", func(t *testing.T) { checkWorkQueues(t, runner(MustServer(t))) })
	checkExchangeTutorials(t, runner)
}
