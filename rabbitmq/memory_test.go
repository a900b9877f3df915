package rabbitmq_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// heapInUse returns the heap in use after a forced collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// burstMessages is how many messages TestExpiredBurstGivesItsMemoryBack
// publishes: enough that what the emptied queues would keep shows well
// above the test's own heap (the client's included), few enough for CI.
const burstMessages = 200_000

// rule: RB-1, RB-9
// issue 16.5: a queue filled with a burst of messages (100 B, x-message-ttl
// of an hour) that all expire into their dead-letter queue (RB-9), which is
// then purged, gives its memory back: with the client still connected, the
// heap in use after a GC keeps at most a tenth of what the burst added.
// (Twice the start was the bound before; run alone without -race the start
// is under 2 MiB, and a few MiB of the runtime's own made it fail.)
func TestExpiredBurstGivesItsMemoryBack_RB1_RB9(t *testing.T) {
	n := burstMessages
	f := MustServer(t)
	ch := f.MustChannel()
	MustDeclare(t, ch, "burst.dlq", nil)
	MustDeclare(t, ch, "burst", amqp.Table{"x-message-ttl": int32(time.Hour / time.Millisecond),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "burst.dlq"})
	body := make([]byte, 100)
	// One message before the start figure, so that what a first publish
	// sets up on either side is in it.
	MustPublish(t, ch, "", "burst", amqp.Publishing{Body: body})
	start := heapInUse()
	for i := 1; i < n; i++ {
		if err := ch.PublishWithContext(context.Background(), "", "burst", false, false, amqp.Publishing{Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	sync(t, ch)
	if got := count(t, ch, "burst"); got != n {
		t.Fatalf("%d messages in the queue, want %d", got, n)
	}
	peak := heapInUse()
	f.advance(61 * time.Minute)
	if got := count(t, ch, "burst.dlq"); got != n {
		t.Fatalf("%d dead letters, want %d", got, n)
	}
	if got, err := ch.QueuePurge("burst.dlq", false); err != nil || got != n {
		t.Fatalf("purged %d (%v), want %d", got, err, n)
	}
	after := heapInUse()
	t.Logf("heap in use: %.1f MiB at start, %.1f MiB full, %.1f MiB emptied", mib(start), mib(peak), mib(after))
	if peak < start+(burstMessages*100) {
		t.Fatalf("the full queue added %.1f MiB, less than its bodies", mib(peak-start))
	}
	if after > start && (after-start)*10 > peak-start {
		t.Errorf("the emptied queues keep their memory: heap in use %.1f MiB after, %.1f MiB at start, %.1f MiB full; want at most a tenth of the burst's %.1f MiB kept",
			mib(after), mib(start), mib(peak), mib(peak-start))
	}
	// The queue still works.
	MustPublish(t, ch, "", "burst", amqp.Publishing{Body: body})
	if got := count(t, ch, "burst"); got != 1 {
		t.Errorf("%d messages after one more publish, want 1", got)
	}
}
