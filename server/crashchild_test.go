package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childDirEnv names the data folder of a child lapse: the kill -9 tests
// run their own test again in a child process with it set, and there the
// test calls serveChild instead.
const childDirEnv = "LAPSE_TEST_CHILD_DIR"

// childLapse is lapse running in a child process of the test binary, which
// a kill -9 test kills with SIGKILL.
type childLapse struct {
	t     *testing.T
	cmd   *exec.Cmd
	addrs map[string]string // listener name -> dialable address
	done  bool
}

// startChild runs test, the running test's name, again in a child process
// on the data folder dir, and returns once the child printed the addresses
// of its listeners. The child is killed at the end of the test if it is
// still running.
func startChild(t *testing.T, dir string) *childLapse {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &childLapse{t: t, cmd: cmd, addrs: map[string]string{}}
	t.Cleanup(func() {
		if !c.done {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
		if name, addr, ok := strings.Cut(sc.Text(), " "); ok {
			c.addrs[name] = dialable(addr)
		}
	}
	if len(c.addrs) == 0 {
		t.Fatal("the child lapse did not report its listeners")
	}
	go io.Copy(io.Discard, stdout)
	return c
}

// killWhen kills the child with SIGKILL once count() reaches n, or after
// 30 s, and waits for it to end.
func (c *childLapse) killWhen(n int, count func() int) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for count() < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	_ = c.cmd.Wait()
	c.done = true
}

// serveChild is the child's side: it runs lapse on dir, prints the address
// of each listener ("amqp 127.0.0.1:5672") and "ready", and serves until it
// is killed.
func serveChild(dir string) {
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags(serveArgs(dir), noEnv); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := m.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("amqp %s\nservicebusAdmin %s\ncosmos %s\nready\n", m.amqp.Addr(), m.sbAdmin.Addr(), m.Cosmos.Addr())
	select {}
}
