package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// amqpCrashDirEnv names the data folder of the child lapse that
// TestKillNineKeepsConfirmedPublishes_EM3 kills.
const amqpCrashDirEnv = "LAPSE_TEST_AMQP_CRASH_DIR"

// rule: EM-3. A child process runs lapse; amqp091-go clients publish
// persistent messages to a durable queue with publisher confirms from
// several connections; the child is killed with SIGKILL under that load and
// lapse is started again on its data folder: every message whose publish
// was confirmed must be there.
func TestKillNineKeepsConfirmedPublishes_EM3(t *testing.T) {
	if dir := os.Getenv(amqpCrashDirEnv); dir != "" {
		amqpCrashChild(dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillNineKeepsConfirmedPublishes_EM3$", "-test.count=1")
	cmd.Env = append(os.Environ(), amqpCrashDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var addr string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "amqp "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("the child did not report its AMQP address")
	}
	go io.Copy(io.Discard, stdout)
	url := "amqp://guest:guest@" + dialable(addr) + "/"

	setup, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := setup.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sch.QueueDeclare("crash", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}

	var (
		mu        sync.Mutex
		confirmed = map[string]bool{}
		wg        sync.WaitGroup
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := amqp.Dial(url)
			if err != nil {
				return
			}
			defer conn.Close()
			ch, err := conn.Channel()
			if err != nil || ch.Confirm(false) != nil {
				return
			}
			for i := 0; ; i++ {
				id := fmt.Sprintf("w%d-%d", w, i)
				dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "crash", false, false,
					amqp.Publishing{Body: []byte(id), DeliveryMode: amqp.Persistent})
				if err != nil {
					return
				}
				if ok, err := dc.WaitContext(context.Background()); err != nil || !ok {
					return
				}
				mu.Lock()
				confirmed[id] = true
				mu.Unlock()
			}
		}()
	}
	// Kill once a good number of publishes are confirmed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(confirmed)
		mu.Unlock()
		if n >= 2000 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
	setup.Close()
	wg.Wait()
	mu.Lock()
	want := confirmed
	mu.Unlock()
	if len(want) == 0 {
		t.Fatal("nothing was confirmed before the kill")
	}

	m := MustStart(t, "--data", dir)
	conn, err := amqp.Dial("amqp://guest:guest@" + dialable(m.amqp.Addr().String()) + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for {
		d, ok, err := ch.Get("crash", true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got[string(d.Body)] = true
	}
	lost := 0
	for id := range want {
		if !got[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d confirmed publishes lost after kill -9", lost, len(want))
	}
	t.Logf("%d confirmed publishes all kept (%d messages in the queue)", len(want), len(got))
}

// amqpCrashChild runs lapse on dir until it is killed.
func amqpCrashChild(dir string) {
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
	fmt.Printf("amqp %s\n", m.amqp.Addr())
	select {}
}
