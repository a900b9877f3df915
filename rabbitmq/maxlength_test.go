package rabbitmq_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

// confirmed is what one publisher saw: the bodies the broker acked and
// nacked.
type confirmed struct {
	acked, nacked []string
}

// publishAtOnce runs publishers connections, each in confirm mode,
// publishing each messages to queue q as fast as it can, bodies
// "p<publisher>-<n>", and returns what each saw confirmed. watch runs in a
// loop meanwhile, until every confirm is in.
func publishAtOnce(t *testing.T, f *fixture, q string, publishers, each int, watch func()) []confirmed {
	t.Helper()
	out := make([]confirmed, publishers)
	chs := make([]*amqp.Channel, publishers)
	for p := range publishers {
		chs[p] = f.MustChannel()
		if err := chs[p].Confirm(false); err != nil {
			t.Fatal(err)
		}
	}
	var (
		wg    gosync.WaitGroup
		done  atomic.Bool
		start = make(chan struct{})
	)
	for p, ch := range chs {
		wg.Go(func() {
			confirms := ch.NotifyPublish(make(chan amqp.Confirmation, each))
			<-start
			for n := range each {
				b := fmt.Sprintf("p%d-%02d", p, n)
				if err := ch.PublishWithContext(context.Background(), "", q, false, false, amqp.Publishing{Body: []byte(b)}); err != nil {
					t.Error(err)
					return
				}
			}
			for range each {
				select {
				case c := <-confirms:
					b := fmt.Sprintf("p%d-%02d", p, c.DeliveryTag-1)
					if c.Ack {
						out[p].acked = append(out[p].acked, b)
					} else {
						out[p].nacked = append(out[p].nacked, b)
					}
				case <-time.After(10 * time.Second):
					t.Errorf("publisher %d: a confirm is missing", p)
					return
				}
			}
		})
	}
	var ww gosync.WaitGroup
	if watch != nil {
		ww.Go(func() {
			for !done.Load() {
				watch()
			}
		})
	}
	close(start)
	wg.Wait()
	done.Store(true)
	ww.Wait()
	return out
}

// drainBodies takes every message of queue q with basic.get.
func drainBodies(t *testing.T, ch *amqp.Channel, q string) []string {
	t.Helper()
	var out []string
	for {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, string(d.Body))
	}
}

// maxLengthWatcher returns a watch func that fails the test once when a
// passive declare shows queue q over max messages.
func maxLengthWatcher(t *testing.T, f *fixture, q string, max int) func() {
	ch := f.MustChannel()
	var once gosync.Once
	return func() {
		st, err := ch.QueueDeclarePassive(q, false, false, false, false, nil)
		if err != nil {
			t.Error(err)
			return
		}
		if st.Messages > max {
			once.Do(func() { t.Errorf("queue %s holds %d messages, over its x-max-length %d", q, st.Messages, max) })
		}
	}
}

// rule: RB-9
func TestMaxLengthRejectPublishConcurrentConfirms_RB9(t *testing.T) {
	const max, publishers, each = 20, 8, 50
	f := MustServer(t)
	ch := f.MustChannel()
	MustDeclare(t, ch, "q", amqp.Table{"x-max-length": int32(max), "x-overflow": "reject-publish"})
	got := publishAtOnce(t, f, "q", publishers, each, maxLengthWatcher(t, f, "q", max))
	var acked []string
	nacks := 0
	for _, c := range got {
		acked = append(acked, c.acked...)
		nacks += len(c.nacked)
	}
	if len(acked) != max || nacks != publishers*each-max {
		t.Errorf("%d acks and %d nacks, want %d and %d", len(acked), nacks, max, publishers*each-max)
	}
	// Exactly the acked messages are stored: no ack for a message the
	// queue refused, no nack for one it took.
	stored := drainBodies(t, ch, "q")
	slices.Sort(stored)
	slices.Sort(acked)
	if d := cmp.Diff(acked, stored); d != "" {
		t.Errorf("stored messages are not the acked ones (-acked +stored):\n%s", d)
	}
}

// rule: RB-9
func TestMaxLengthRejectPublishWhileDrained_RB9(t *testing.T) {
	const max, publishers, each = 5, 8, 100
	f := MustServer(t)
	ch := f.MustChannel()
	MustDeclare(t, ch, "q", amqp.Table{"x-max-length": int32(max), "x-overflow": "reject-publish"})
	// A getter takes one message at a time while the publishers fill
	// the queue again: every get makes room for one publish, which they
	// race for; a passive declare after each get shows the queue within
	// its limit. (basic.get-ok's message count is read after the get, so
	// a publish in between shows in it: it proves nothing here.)
	getter := f.MustChannel()
	watch := maxLengthWatcher(t, f, "q", max)
	var gotten []string
	got := publishAtOnce(t, f, "q", publishers, each, func() {
		d, ok, err := getter.Get("q", true)
		if err != nil {
			t.Error(err)
			return
		}
		if ok {
			gotten = append(gotten, string(d.Body))
		}
		watch()
	})
	var acked, nacked []string
	for _, c := range got {
		acked = append(acked, c.acked...)
		nacked = append(nacked, c.nacked...)
	}
	stored := append(gotten, drainBodies(t, ch, "q")...)
	slices.Sort(stored)
	slices.Sort(acked)
	if d := cmp.Diff(acked, stored); d != "" {
		t.Errorf("stored messages are not the acked ones (-acked +stored):\n%s", d)
	}
	if len(acked)+len(nacked) != publishers*each || len(nacked) == 0 {
		t.Errorf("%d acks and %d nacks for %d publishes, want some nacks", len(acked), len(nacked), publishers*each)
	}
}

// rule: RB-9
func TestMaxLengthDropHeadConcurrent_RB9(t *testing.T) {
	const max, publishers, each = 20, 16, 50
	f := MustServer(t)
	ch := f.MustChannel()
	dlq := withDLQ(t, ch, "q", amqp.Table{"x-max-length": int32(max)})
	got := publishAtOnce(t, f, "q", publishers, each, maxLengthWatcher(t, f, "q", max))
	for p, c := range got {
		if len(c.acked) != each || len(c.nacked) != 0 {
			t.Errorf("publisher %d: %d acks and %d nacks, want %d acks", p, len(c.acked), len(c.nacked), each)
		}
	}
	kept := drainBodies(t, ch, "q")
	if len(kept) != max {
		t.Fatalf("queue holds %d messages, want %d: %q", len(kept), max, kept)
	}
	// The queue keeps the newest: what each publisher has left in it is
	// the end of what it sent, in its order.
	byPublisher := map[string][]string{}
	for _, b := range kept {
		p := b[:len(b)-3]
		byPublisher[p] = append(byPublisher[p], b)
	}
	for p, bs := range byPublisher {
		var want []string
		for n := each - len(bs); n < each; n++ {
			want = append(want, fmt.Sprintf("%s-%02d", p, n))
		}
		if d := cmp.Diff(want, bs); d != "" {
			t.Errorf("publisher %s's messages kept are not its newest (-want +got):\n%s", p, d)
		}
	}
	if n := len(drainBodies(t, ch, dlq)); n != publishers*each-max {
		t.Errorf("%d dead-lettered (maxlen), want %d", n, publishers*each-max)
	}
}

// rule: RB-10, RB-9
func TestMaxLengthPolicyTrimsQueue_RB10(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	MustDeclare(t, ch, "plain", nil)
	MustDeclare(t, ch, "refusing", amqp.Table{"x-overflow": "reject-publish"})
	for _, b := range []string{"m1", "m2", "m3", "m4", "m5"} {
		MustPublish(t, ch, "", "plain", amqp.Publishing{Body: []byte(b)})
		MustPublish(t, ch, "", "refusing", amqp.Publishing{Body: []byte(b)})
	}
	// Even with overflow reject-publish in the policy, the queue whose
	// overflow was drop-head is trimmed, as RabbitMQ 3.10 does; the one
	// that refused already keeps what it has.
	a.must(http.MethodPut, "/api/policies/%2F/limit", map[string]any{"pattern": ".*", "apply-to": "queues",
		"definition": map[string]any{"max-length": 2, "overflow": "reject-publish"}}, http.StatusCreated)
	if got := drainBodies(t, ch, "plain"); !cmp.Equal(got, []string{"m4", "m5"}) {
		t.Errorf("plain holds %q, want m4 m5", got)
	}
	if got := drainBodies(t, ch, "refusing"); len(got) != 5 {
		t.Errorf("refusing holds %q, want all 5", got)
	}
}
