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
	python := clienttest.Python(t, "pika")
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
}

// issue 27: the same Python program, unchanged, with the current pika of
// requirements.txt ($LAPSE_PYTHON_SDK's venv).
func TestTutorialsPythonCurrentPika(t *testing.T) {
	python := pythonSDK(t)
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
}
