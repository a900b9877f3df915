package rabbitmq_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// RabbitMQ's official tutorials 1 ("Hello World!") and 2 ("Work Queues") in
// Go, JavaScript and Python, unchanged but for the broker's address (see
// testdata/tutorials/README.md), against a server started here. Receivers
// and workers run until interrupted: the test interrupts them once they
// printed what they received.

// tutorialTimeout bounds one tutorial program's run and each wait for its
// output.
const tutorialTimeout = 30 * time.Second

// tutorialCopy writes a copy of testdata/tutorials/<lang>/<file> into dir
// with the broker's address old replaced by addr, which must occur in it,
// and returns the copy's path.
func tutorialCopy(t *testing.T, dir, lang, file, old, addr string) string {
	t.Helper()
	return clienttest.Fill(t, filepath.Join("testdata", "tutorials", lang, file), dir, old, addr)
}

// tutorialRun is how a test starts one tutorial program with arguments.
type tutorialRun func(t *testing.T, program string, args ...string) *program

// checkHelloWorld runs tutorial 1: the receiver prints the message the
// sender sent.
func checkHelloWorld(t *testing.T, run tutorialRun, waiting, sent, received string) {
	t.Helper()
	recv := run(t, "receive")
	recv.waitFor(tutorialTimeout, waiting)
	if out := run(t, "send").wait(tutorialTimeout); !strings.Contains(out, sent) {
		t.Errorf("send printed %q, want %q", out, sent)
	}
	recv.waitFor(tutorialTimeout, received)
	recv.interrupt()
}

// checkWorkQueues runs tutorial 2 with two workers: four tasks sent one
// after the other go round-robin, two to each worker, each done once.
func checkWorkQueues(t *testing.T, run tutorialRun, waiting string, received func(task string) string, done string) {
	t.Helper()
	workers := []*program{run(t, "worker"), run(t, "worker")}
	for _, w := range workers {
		w.waitFor(tutorialTimeout, waiting)
	}
	tasks := []string{"First task", "Second task", "Third task", "Fourth task"}
	for _, task := range tasks {
		run(t, "new_task", strings.Fields(task)...).wait(tutorialTimeout)
	}
	deadline := time.Now().Add(tutorialTimeout)
	for {
		outs := []string{workers[0].out.String(), workers[1].out.String()}
		got := 0
		for _, task := range tasks {
			for _, out := range outs {
				got += strings.Count(out, received(task))
			}
		}
		if got == len(tasks) && strings.Count(outs[0]+outs[1], done) == len(tasks) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	outs := []string{workers[0].interrupt(), workers[1].interrupt()}
	for _, task := range tasks {
		if n := strings.Count(outs[0], received(task)) + strings.Count(outs[1], received(task)); n != 1 {
			t.Errorf("%q received %d times, want once:\nworker 1:\n%s\nworker 2:\n%s", task, n, outs[0], outs[1])
		}
	}
	for i, out := range outs {
		if n := strings.Count(out, done); n != 2 {
			t.Errorf("worker %d did %d tasks, want 2 (round-robin):\n%s", i+1, n, out)
		}
	}
}

// issue 13: the Go tutorials (amqp091-go), built with the broker's URL in
// place of amqp://guest:guest@localhost:5672/ (go build -overlay keeps the
// file where it is, so the module's amqp091-go builds it).
func TestTutorialsGo(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := t.TempDir()
	build := func(t *testing.T, f *fixture, name string) string {
		t.Helper()
		dir := t.TempDir()
		src, err := filepath.Abs(filepath.Join("testdata", "tutorials", "go", name+".go"))
		if err != nil {
			t.Fatal(err)
		}
		cp := tutorialCopy(t, dir, "go", name+".go", "amqp://guest:guest@localhost:5672/", f.url)
		overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{src: cp}})
		ov := filepath.Join(dir, "overlay.json")
		if err := os.WriteFile(ov, overlay, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(bin, name+"-"+filepath.Base(dir))
		cmd := exec.Command(goBin, "build", "-overlay", ov, "-o", out, src)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, b)
		}
		return out
	}
	runner := func(f *fixture) tutorialRun {
		built := map[string]string{}
		return func(t *testing.T, name string, args ...string) *program {
			t.Helper()
			if built[name] == "" {
				built[name] = build(t, f, name)
			}
			return startProgram(t, "", nil, built[name], args...)
		}
	}
	t.Run("HelloWorld", func(t *testing.T) {
		checkHelloWorld(t, runner(MustServer(t)), " [*] Waiting for messages", " [x] Sent Hello World!",
			"Received a message: Hello World!")
	})
	t.Run("WorkQueues", func(t *testing.T) {
		checkWorkQueues(t, runner(MustServer(t)), " [*] Waiting for messages",
			func(task string) string { return "Received a message: " + task + "\n" }, "Done\n")
	})
}

// issue 13: the JavaScript tutorials (amqplib, from jstest/node_modules),
// with the broker's URL in place of amqp://localhost.
func TestTutorialsJavaScript(t *testing.T) {
	node := clienttest.Node(t, jsDir, "amqplib")
	modules, err := filepath.Abs(filepath.Join(jsDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	runner := func(f *fixture) tutorialRun {
		dir := t.TempDir()
		return func(t *testing.T, name string, args ...string) *program {
			t.Helper()
			cp := tutorialCopy(t, dir, "javascript", name+".js", "amqp://localhost", strings.TrimSuffix(f.url, "/"))
			return startProgram(t, dir, []string{"NODE_PATH=" + modules}, node, append([]string{cp}, args...)...)
		}
	}
	t.Run("HelloWorld", func(t *testing.T) {
		checkHelloWorld(t, runner(MustServer(t)), " [*] Waiting for messages in hello", " [x] Sent Hello World!",
			" [x] Received Hello World!")
	})
	t.Run("WorkQueues", func(t *testing.T) {
		checkWorkQueues(t, runner(MustServer(t)), " [*] Waiting for messages in task_queue",
			func(task string) string { return " [x] Received " + task + "\n" }, " [x] Done\n")
	})
}

// issue 13: the Python tutorials (pika), with host="127.0.0.1", port=N in
// place of host="localhost", run through testdata/python/pika_compat.py.
func TestTutorialsPython(t *testing.T) {
	python := clienttest.Python(t, "pika")
	compat, err := filepath.Abs(filepath.Join("testdata", "python", "pika_compat.py"))
	if err != nil {
		t.Fatal(err)
	}
	runner := func(f *fixture) tutorialRun {
		dir := t.TempDir()
		_, port, _ := splitHostPort(f.ln.Addr().String())
		return func(t *testing.T, name string, args ...string) *program {
			t.Helper()
			cp := tutorialCopy(t, dir, "python", name+".py", `host="localhost"`, `host="127.0.0.1", port=`+port)
			return startProgram(t, dir, []string{"PYTHONUNBUFFERED=1"}, python, append([]string{compat, cp}, args...)...)
		}
	}
	t.Run("HelloWorld", func(t *testing.T) {
		checkHelloWorld(t, runner(MustServer(t)), " [*] Waiting for messages", " [x] Sent 'Hello World!'",
			" [x] Received Hello World!")
	})
	t.Run("WorkQueues", func(t *testing.T) {
		checkWorkQueues(t, runner(MustServer(t)), " [*] Waiting for messages",
			func(task string) string { return " [x] Received " + task + "\n" }, " [x] Done\n")
	})
}
