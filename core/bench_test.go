package core_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// BenchmarkExpireMillion schedules 1,000,000 items with random TTLs (up to
// an hour) in one entity, then applies them all with one Advance. It reports
// expiries per second of that Advance, the schedule cost per item, the
// allocations per item and the peak heap.
func BenchmarkExpireMillion(b *testing.B) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	ttls := make([]core.TTL, n)
	for i := range ttls {
		ttls[i] = core.After(time.Duration(rng.Int64N(int64(time.Hour))) + time.Millisecond)
	}
	var advance, schedule time.Duration
	var allocs, peak uint64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var m0, m1, m2 runtime.MemStats
		runtime.ReadMemStats(&m0)
		e := core.NewEngine(core.Config{})
		k := core.EntityKey{Protocol: "bench", Name: "q"}
		e.Create(t0, core.Entity{EntityKey: k, Policy: core.Policy{Rules: core.RuleIDs{Expire: "B"}}})
		start := time.Now()
		for j := 0; j < n; j++ {
			e.Enqueue(t0, k, core.Item{TTL: ttls[j]})
		}
		schedule += time.Since(start)
		runtime.ReadMemStats(&m1)
		start = time.Now()
		got, _ := e.Advance(t0.Add(2 * time.Hour))
		advance += time.Since(start)
		runtime.ReadMemStats(&m2)
		if got != n {
			b.Fatalf("%d expiries, want %d", got, n)
		}
		allocs += m2.Mallocs - m0.Mallocs
		if h := m1.HeapAlloc - m0.HeapAlloc; h > peak {
			peak = h
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/advance.Seconds(), "expiries/s")
	b.ReportMetric(float64(schedule.Nanoseconds())/float64(n*b.N), "ns/schedule")
	b.ReportMetric(float64(allocs)/float64(n*b.N), "allocs/item")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkCostPerItem measures one schedule plus one expiry with 10 k,
// 100 k and 1 M items pending: it must grow like log n.
func BenchmarkCostPerItem(b *testing.B) {
	for _, pending := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			e := core.NewEngine(core.Config{})
			k := core.EntityKey{Protocol: "bench", Name: "q"}
			e.Create(t0, core.Entity{EntityKey: k})
			// Pending items far in the future, spread over a day.
			for j := 0; j < pending; j++ {
				e.Enqueue(t0, k, core.Item{TTL: core.After(24*time.Hour + time.Duration(rng.Int64N(int64(24*time.Hour))))})
			}
			now := t0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// One item due after 1 µs, then an advance that expires it.
				e.Enqueue(now, k, core.Item{TTL: core.After(time.Microsecond)})
				now = now.Add(time.Microsecond)
				if n, _ := e.Advance(now); n != 1 {
					b.Fatal("not expired")
				}
			}
		})
	}
}

// BenchmarkDeadLetter100kAtOnce enqueues 100 k items with the same TTL in
// one entity, then applies them with one Advance that expires them all at
// the same instant and dead-letters each through a DeadLetterFunc into a
// dead-letter entity that never expires its items (SB-8). It reports the
// milliseconds of that Advance (with the durable variant, until its Commit
// is done) and the allocations per item it made.
func BenchmarkDeadLetter100kAtOnce(b *testing.B) {
	for _, durable := range []bool{false, true} {
		b.Run(fmt.Sprintf("durable=%t", durable), func(b *testing.B) {
			const n = 100_000
			body := make([]byte, 100)
			meta := []byte(`{"messageId":"0123456789abcdef"}`)
			var advance time.Duration
			var allocs uint64
			for i := 0; i < b.N; i++ {
				var store core.Store
				if durable {
					store = core.NewMemStore()
				}
				e := core.NewEngine(core.Config{Store: store})
				e.Register("bench", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
					it.TTL = core.NoTTL
					it.DeliveryCount = 0
					if _, err := tx.Enqueue(core.EntityKey{Protocol: from.Protocol, Name: from.DeadLetterQueue}, it); err != nil {
						b.Error(err)
					}
				}})
				k := core.EntityKey{Protocol: "bench", Name: "q"}
				dlq := core.EntityKey{Protocol: "bench", Name: "q/$DeadLetterQueue"}
				e.Create(t0, core.Entity{EntityKey: k, DeadLetterQueue: dlq.Name, Durable: durable, Policy: core.Policy{
					DefaultTTL: core.Forever, OnExpire: core.DeadLetter,
					Rules: core.RuleIDs{ItemTTL: "B-1", Expire: "B-8"}}})
				e.Create(t0, core.Entity{EntityKey: dlq, Parent: k.Name, Durable: durable})
				for j := 0; j < n; j++ {
					e.Enqueue(t0, k, core.Item{Body: body, Meta: meta, TTL: core.After(time.Minute), Persistent: true})
				}
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				start := time.Now()
				got, c := e.Advance(t0.Add(time.Minute))
				if err := c.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
				advance += time.Since(start)
				runtime.ReadMemStats(&m1)
				allocs += m1.Mallocs - m0.Mallocs
				if got != n {
					b.Fatalf("%d events, want %d", got, n)
				}
				if c, _, _ := e.Counts(t0.Add(time.Minute), dlq); c.Active != n {
					b.Fatalf("dead-letter entity holds %d, want %d", c.Active, n)
				}
			}
			b.ReportMetric(float64(advance.Microseconds())/1000/float64(b.N), "ms/advance")
			b.ReportMetric(float64(allocs)/float64(n*b.N), "allocs/item")
			b.ReportMetric(0, "ns/op")
		})
	}
}
