package servicebus_test

import (
	"context"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// BenchmarkExpireToDeadLetter100k measures how long the engine and the
// front-end's dead-letter hook take to move 100 k messages whose TTL runs
// out at the same instant to the dead-letter queue (SB-8): the issue's
// target is 20 ms.
func BenchmarkExpireToDeadLetter100k(b *testing.B) {
	const n = 100_000
	ttl := uint32(60_000)
	raw, err := (&amqp.Message{Header: &amqp.Header{TTL: &ttl}, Data: [][]byte{make([]byte, 100)}}).MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		f := MustServer(b)
		f.MustQueue("q", func(p *atom.QueueProperties) { p.DeadLetteringOnMessageExpiration = true })
		k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
		for i := 0; i < n; i++ {
			if _, _, err := f.e.Enqueue(f.clock.Now(), k, core.Item{Body: raw, TTL: core.After(time.Minute), Persistent: true}); err != nil {
				b.Fatal(err)
			}
		}
		now, _ := f.clock.Advance(time.Minute)
		start := time.Now()
		moved, c := f.e.Advance(now)
		c.Wait(context.Background())
		total += time.Since(start)
		if moved < n {
			b.Fatalf("advance applied %d, want %d", moved, n)
		}
		counts, _, _ := f.e.Counts(now, core.EntityKey{Protocol: core.ServiceBus, Name: "q/$DeadLetterQueue"})
		if counts.Active != n {
			b.Fatalf("dead-letter queue has %d", counts.Active)
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/expiry")
}
