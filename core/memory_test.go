package core_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// heapInUse returns the heap in use after a forced collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// mustGiveBack fails tb unless the heap in use after is within twice the
// start figure.
func mustGiveBack(tb testing.TB, start, peak, after uint64) {
	tb.Helper()
	tb.Logf("heap in use: %.1f MiB at start, %.1f MiB full, %.1f MiB emptied",
		mib(start), mib(peak), mib(after))
	if after > 2*start {
		tb.Errorf("an emptied entity keeps its memory: heap in use %.1f MiB after, %.1f MiB at start (full: %.1f MiB); want within 2x",
			mib(after), mib(start), mib(peak))
	}
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// burstBody is the 100 B body of every item of a burst.
var burstBody = make([]byte, 100)

// newBurstEngine returns an engine without a store whose "test" protocol
// dead-letters into entity "dlq". Its event log is small: the log is
// bounded, a fixed cost that is not the entities' to give back.
func newBurstEngine(tb testing.TB) *core.Engine {
	tb.Helper()
	e := core.NewEngine(core.Config{EventLogSize: 16})
	dlq := core.EntityKey{Protocol: "test", Name: "dlq"}
	e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		if _, err := tx.Enqueue(dlq, it); err != nil {
			tb.Error(err)
		}
	}})
	if _, _, err := e.Create(t0, core.Entity{EntityKey: dlq, Kind: "queue"}); err != nil {
		tb.Fatal(err)
	}
	return e
}

// issue 16.5: an entity filled with a burst of items and emptied by their
// expiry (dead-lettered, then the dead-letter entity purged) gives its
// memory back: the heap in use comes back within twice its start figure
// after a GC, whatever structures held the items (the expiry chain of
// one TTL, the timer heap of TTLs of their own, the keys of a container,
// the groups and sessions of a queue). So does one drained to a few
// items: within twice what the same few take in a twin entity.
func TestEmptiedEntityGivesItsMemoryBack(t *testing.T) {
	for _, c := range []struct {
		name   string
		policy core.Policy
		item   func(i int, rng *rand.Rand) core.Item
	}{{
		// The case: one TTL, so the items wait in the entity's
		// expiry chain, and dead-letter on expiry (SB-8).
		name:   "ChainDeadLettered_SB8",
		policy: core.Policy{DefaultTTL: core.After(time.Hour), OnExpire: core.DeadLetter, Rules: core.RuleIDs{Expire: "SB-8"}},
		item:   func(int, *rand.Rand) core.Item { return core.Item{Body: burstBody} },
	}, {
		// TTLs of their own, in any order: the items wait in the timer heap
		// (SB-2).
		name:   "OwnTTLsInTheHeap_SB2",
		policy: core.Policy{Rules: core.RuleIDs{Expire: "SB-2"}},
		item: func(_ int, rng *rand.Rand) core.Item {
			return core.Item{Body: burstBody, TTL: core.After(time.Minute + time.Duration(rng.Int64N(int64(time.Hour)-int64(time.Minute))))}
		},
	}, {
		// Keyed items (Cosmos documents, CO-1).
		name:   "KeyedItems_CO1",
		policy: core.Policy{DefaultTTL: core.After(time.Hour), Base: core.FromModified, Rules: core.RuleIDs{Expire: "CO-1"}},
		item:   func(i int, _ *rand.Rand) core.Item { return core.Item{Key: fmt.Sprintf("doc-%d", i), Body: burstBody} },
	}, {
		// Items of many groups in a queue without sessions.
		name:   "Groups_SB1",
		policy: core.Policy{DefaultTTL: core.After(time.Hour), Rules: core.RuleIDs{Expire: "SB-1"}},
		item: func(i int, _ *rand.Rand) core.Item {
			return core.Item{Group: fmt.Sprintf("g%d", i%(burstItems/10)), Body: burstBody}
		},
	}, {
		// A session per item (a reply's, SS-1), each ending with its item.
		name:   "Sessions_SS1",
		policy: core.Policy{DefaultTTL: core.After(time.Hour), Sessions: true, Rules: core.RuleIDs{Expire: "SB-1"}},
		item:   func(i int, _ *rand.Rand) core.Item { return core.Item{Group: fmt.Sprintf("s%d", i), Body: burstBody} },
	}} {
		// Emptied: every item expires. DrainedToAFew: a few items that
		// expire later stay, so the structures hold far less than their
		// room rather than nothing.
		for _, kept := range []int{0, burstItems / 200} {
			name := c.name + "/Emptied"
			if kept > 0 {
				name = c.name + "/DrainedToAFew"
			}
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(16, 5))
				k := core.EntityKey{Protocol: "test", Name: "q"}
				c.policy.Rules.Never = "N"
				newEntity := func() *core.Engine {
					e := newBurstEngine(t)
					if _, _, err := e.Create(t0, core.Entity{EntityKey: k, Kind: "queue", DeadLetterQueue: "dlq", Policy: c.policy}); err != nil {
						t.Fatal(err)
					}
					return e
				}
				enqueue := func(e *core.Engine, from, to int) {
					for i := from; i < to; i++ {
						it := c.item(i, rng)
						if i >= burstItems {
							it.TTL = core.After(3 * time.Hour)
						}
						if _, _, err := e.Enqueue(t0, k, it); err != nil {
							t.Fatal(err)
						}
					}
				}
				// The start figure counts the items kept, as a twin entity
				// that never saw the burst holds them.
				e, twin := newEntity(), newEntity()
				enqueue(twin, burstItems, burstItems+kept)
				start := heapInUse()
				runtime.KeepAlive(twin)
				enqueue(e, 0, burstItems+kept)
				peak := heapInUse()
				now := t0.Add(61 * time.Minute)
				if n, _ := e.Advance(now); n != burstItems {
					t.Fatalf("%d expiries, want %d", n, burstItems)
				}
				if _, _, err := e.PurgeAll(now, core.EntityKey{Protocol: "test", Name: "dlq"}); err != nil {
					t.Fatal(err)
				}
				after := heapInUse()
				mustGiveBack(t, start, peak, after)
				// The entity still works and holds what it should.
				if _, _, err := e.Enqueue(now, k, c.item(burstItems+kept, rng)); err != nil {
					t.Fatal(err)
				}
				if in, err := e.Info(now, k); err != nil || in.Counts.Active != kept+1 {
					t.Errorf("%d active items (%v), want %d", in.Counts.Active, err, kept+1)
				}
				runtime.KeepAlive(e)
			})
		}
	}
}
