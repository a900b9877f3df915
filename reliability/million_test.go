//go:build reliability

package reliability

import (
	"bytes"
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lapse-emulator/lapse/internal/gcfloor"
)

// millionPending is how many messages TestMillionPendingExpireInOneAdvance
// keeps pending.
const millionPending = 1_000_000

// rule: RB-2 (a queue's x-message-ttl), RB-3 (expired at the head),
// RB-5 (dead-lettered with reason expired). issue 16: a million pending
// messages of 100 B with a 1 h TTL expire with one clock advance of 61
// min into a dead-letter queue, which is then purged: the time of the
// advance, and lapse's memory at start, with the million pending, and
// after, which must come back near its start (issue 16.5: within 2x of
// the start's heap after a GC, + 4 MiB; RSS within 64 MiB of the start's
// and the floor the binary's GC keeps above the live heap).
func TestMillionPendingExpireInOneAdvance_RB2_RB3_RB5(t *testing.T) {
	l := Start(t, "")
	l.Freeze()
	start := l.Memory()

	conn, ch := l.RabbitMQChannel()
	defer conn.Close()
	_, err := ch.QueueDeclare("dead", false, false, false, false, nil)
	l.Must(err)
	_, err = ch.QueueDeclare("pending", false, false, false, false, amqp.Table{
		"x-message-ttl": int32(time.Hour / time.Millisecond), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"})
	l.Must(err)
	l.Must(ch.Confirm(false))
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 4096))

	body := bytes.Repeat([]byte("x"), 100)
	began := time.Now()
	acked := make(chan int, 1)
	go func() {
		n := 0
		for c := range confirms {
			if !c.Ack {
				t.Errorf("publish %d nacked", c.DeliveryTag)
			}
			if n++; n == millionPending {
				break
			}
		}
		acked <- n
	}()
	ctx := context.Background()
	for range millionPending {
		l.Must(ch.PublishWithContext(ctx, "", "pending", false, false, amqp.Publishing{Body: body}))
	}
	select {
	case <-acked:
	case <-time.After(5 * time.Minute):
		t.Fatal("the million publishes were not all confirmed within 5 minutes")
	}
	published := time.Since(began)
	q, err := ch.QueueDeclarePassive("pending", false, false, false, false, amqp.Table{
		"x-message-ttl": int32(time.Hour / time.Millisecond), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"})
	l.Must(err)
	if q.Messages != millionPending {
		t.Fatalf("queue pending holds %d messages, want %d", q.Messages, millionPending)
	}
	loaded := l.Memory()

	began = time.Now()
	l.Advance(61 * time.Minute)
	advanced := time.Since(began)
	for name, want := range map[string]int{"pending": 0, "dead": millionPending} {
		q, err := ch.QueueInspect(name)
		l.Must(err)
		if q.Messages != want {
			t.Errorf("after the advance queue %s holds %d messages, want %d", name, q.Messages, want)
		}
	}
	purged, err := ch.QueuePurge("dead", false)
	l.Must(err)
	if purged != millionPending {
		t.Errorf("purged %d dead letters, want %d", purged, millionPending)
	}
	after := l.Memory()
	// Go gives freed pages back to the system in the background: RSS comes
	// down within seconds of the GC, not at once, to the heap goal, which
	// the binary keeps gcfloor.Floor above the live heap at least.
	const rssMargin = 64<<20 + gcfloor.Floor
	rssLimit := start.RSS + rssMargin
	var rssBack time.Duration
	for began := time.Now(); ; {
		rss := int64(l.Metrics()["process_resident_memory_bytes"])
		if rss <= rssLimit {
			rssBack = time.Since(began)
			after.RSS = rss
			break
		}
		if time.Since(began) > 2*time.Minute {
			t.Errorf("RSS still %.1f MiB two minutes after the purge, more than the start's %.1f MiB + %d MiB", mib(rss), mib(start.RSS), rssMargin>>20)
			break
		}
		time.Sleep(time.Second)
	}
	t.Logf("published %d messages of 100 B with confirms in %v (%.0f msg/s)", millionPending, published.Round(time.Millisecond), millionPending/published.Seconds())
	t.Logf("one advance of 61 min expired and dead-lettered them in %v", advanced.Round(time.Millisecond))
	t.Logf("memory at start: %v", start)
	t.Logf("memory with %d pending: %v", millionPending, loaded)
	t.Logf("memory after they expired and were purged: %v (RSS back under start + %d MiB %v after the GC)", after, rssMargin>>20, rssBack.Round(time.Second))
	if limit := 2*start.HeapInuse + 4<<20; after.HeapInuse > limit {
		t.Errorf("heap in use after a GC is %.1f MiB, more than 2x the start's %.1f MiB + 4 MiB: the emptied queues kept their memory",
			mib(after.HeapInuse), mib(start.HeapInuse))
	}
	if after.Goroutines > start.Goroutines+10 {
		t.Errorf("%d goroutines after, %d at start", after.Goroutines, start.Goroutines)
	}
}
