package server

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/internal/testdeadline"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Issue 25.0, as a new user found it: eight connections declare queues
// with a short x-expires on lapse's real clock, so that idle deletions
// (RB-8) fall due all the time, applied by the expiry runner and by the
// declares' own engine calls alike. lapse used to stop answering
// queue.declare after a few dozen: the engine ran the Deleted hook of a
// queue that fell due on the goroutine of a declare that held the
// topology's lock, and the hook waited for that lock. Every declare must
// be answered, and the server must still answer afterwards.
func TestConcurrentDeclaresWhileQueuesExpire_RB8(t *testing.T) {
	m := MustStart(t)
	url := "amqp://guest:guest@" + dialable(m.amqp.Addr().String()) + "/"
	const conns, declares = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	testdeadline.Within(t, 90*time.Second, fmt.Sprintf("%d declares on each of %d connections", declares, conns), func() {
		for c := range conns {
			wg.Go(func() {
				conn, err := amqp.Dial(url)
				if err != nil {
					errs <- err
					return
				}
				defer conn.Close()
				ch, err := conn.Channel()
				if err != nil {
					errs <- err
					return
				}
				for i := range declares {
					// Names of their own, and a few shared ones that are
					// declared anew while they fall due.
					name, expires := fmt.Sprintf("c%d-q%d", c, i), int32(1+i%20)
					if i%5 == 0 {
						name, expires = fmt.Sprintf("shared-%d", i%3), 5
					}
					if _, err := ch.QueueDeclare(name, false, false, false, false, amqp.Table{"x-expires": expires}); err != nil {
						errs <- fmt.Errorf("connection %d, declare %d (%s): %w", c, i, name, err)
						return
					}
				}
			})
		}
		wg.Wait()
	})
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	testdeadline.Within(t, 10*time.Second, "a declare after the load", func() {
		conn, err := amqp.Dial(url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDeclare("after", false, false, false, false, nil); err != nil {
			t.Error(err)
		}
	})
}
