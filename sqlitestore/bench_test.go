package sqlitestore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

// benchItem returns an item as the engine puts one: a 100-byte body, times,
// a TTL and its rule.
func benchItem(seq uint64, body []byte, at time.Time) *core.Item {
	return &core.Item{
		Seq:          seq,
		Body:         body,
		Meta:         []byte(`{"messageId":"m"}`),
		EnqueuedAt:   at,
		ModifiedAt:   at,
		TTL:          core.After(time.Minute),
		EffectiveTTL: core.After(time.Minute),
		DueAt:        at.Add(time.Minute),
		Rule:         "SB-1",
		Persistent:   true,
	}
}

// BenchmarkAcknowledgedWrites measures acknowledged writes per second: each
// of n writers appends one OpPutItem of a 100-byte item to a shared queue
// and waits for its Commit, over and over.
func BenchmarkAcknowledgedWrites(b *testing.B) {
	for _, writers := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := MustOpen(b, b.TempDir())
			k := core.EntityKey{Protocol: core.ServiceBus, Name: "bench"}
			storetest.MustAppend(b, s, core.Op{Kind: core.OpPutEntity, Key: k, Entity: &core.Entity{EntityKey: k, Kind: "queue", Durable: true}})
			body := make([]byte, 100)
			at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			var next atomic.Uint64
			n := uint64(b.N)
			var failed atomic.Value

			b.ReportAllocs()
			b.ResetTimer()
			s.txs.Store(0)
			start := time.Now()
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					ctx := context.Background()
					for {
						seq := next.Add(1)
						if seq > n {
							return
						}
						op := core.Op{Kind: core.OpPutItem, Key: k, Item: benchItem(seq, body, at)}
						if err := s.Append([]core.Op{op}).Wait(ctx); err != nil {
							failed.Store(err)
							return
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if err := failed.Load(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "writes/s")
			b.ReportMetric(float64(b.N)/float64(s.txs.Load()), "writes/tx")
		})
	}
}

// BenchmarkEngineAcknowledgedEnqueue is BenchmarkAcknowledgedWrites through
// the engine, as a front-end acknowledges a persistent message (a publisher
// confirm, an accepted transfer): Enqueue into a durable entity, then wait
// for the Commit. It adds the engine's lock and its copy of each item.
func BenchmarkEngineAcknowledgedEnqueue(b *testing.B) {
	for _, writers := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := MustOpen(b, b.TempDir())
			e := core.NewEngine(core.Config{Store: s})
			at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			k := core.EntityKey{Protocol: core.RabbitMQ, Name: "/bench"}
			_, c, err := e.Create(at, core.Entity{EntityKey: k, Kind: "queue", Durable: true,
				Policy: core.Policy{DefaultTTL: core.After(time.Hour), MaxTTL: core.After(time.Hour), HeadOnly: true}})
			if err != nil {
				b.Fatal(err)
			}
			storetest.MustWait(b, c)
			body := make([]byte, 100)
			var left atomic.Int64
			left.Store(int64(b.N))
			var failed atomic.Value
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					ctx := context.Background()
					for left.Add(-1) >= 0 {
						_, c, err := e.Enqueue(at, k, core.Item{Body: body, Persistent: true})
						if err == nil {
							err = c.Wait(ctx)
						}
						if err != nil {
							failed.Store(err)
							return
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if err := failed.Load(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "acks/s")
		})
	}
}
