package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// rule: EM-3. A child process runs lapse; amqp091-go clients publish
// persistent messages to a durable queue with publisher confirms from
// several connections; the child is killed with SIGKILL under that load and
// lapse is started again on its data folder: every message whose publish
// was confirmed must be there.
func TestKillNineKeepsConfirmedPublishes_EM3(t *testing.T) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		serveChild(dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "data")
	child := startChild(t, dir)
	url := "amqp://guest:guest@" + child.addrs["amqp"] + "/"

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
	child.killWhen(2000, func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(confirmed)
	})
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
