package core_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// TestExpiryChainAppliesEachItemAtItsDueTime drives an entity whose items
// mostly share one TTL (they expire through the entity's expiry chain, with
// no timer of their own) and sometimes carry a shorter or longer one (they
// need their own timer), with receives, releases and completes, and
// dead-letters expiries into an entity that expires them again after its
// own TTL. Whatever the clock jumps over, every expiry is applied at its
// own due time, in due-time order, and a dead letter is enqueued at the
// expiry that made it, so its own expiry counts from then (EM-1).
func TestExpiryChainAppliesEachItemAtItsDueTime(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		e := core.NewEngine(core.Config{Store: core.NewMemStore()})
		k := core.EntityKey{Protocol: "test", Name: "q"}
		dlq := core.EntityKey{Protocol: "test", Name: "q/dlq"}
		dlqTTL := 700 * time.Millisecond
		e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
			it.TTL = core.NoTTL
			if _, err := tx.Enqueue(dlq, it); err != nil {
				t.Fatal(err)
			}
		}})
		e.Create(t0, core.Entity{EntityKey: k, Durable: true, DeadLetterQueue: dlq.Name,
			Policy: core.Policy{DefaultTTL: core.After(time.Second), OnExpire: core.DeadLetter,
				Rules: core.RuleIDs{Expire: "X", LockLost: "L"}}})
		e.Create(t0, core.Entity{EntityKey: dlq, Durable: true, Policy: core.Policy{DefaultTTL: core.After(dlqTTL)}})
		due := map[core.EntityKey]map[uint64]time.Time{k: {}, dlq: {}}
		var locked []uint64
		now := t0
		last, dlqSeq := uint64(0), uint64(0)
		check := func(step int) {
			t.Helper()
			evs := e.Events(core.EventQuery{Since: last})
			for i, ev := range evs {
				last = ev.ID
				ek := core.EntityKey{Protocol: ev.Protocol, Name: ev.Entity}
				want, ok := due[ek][ev.Item]
				if !ok {
					t.Fatalf("seed %d step %d: event for unknown or gone item %s %d", seed, step, ek, ev.Item)
				}
				delete(due[ek], ev.Item)
				if !ev.Due.Equal(want) {
					t.Fatalf("seed %d step %d: %s item %d applied as due %v, want %v", seed, step, ek, ev.Item, ev.Due, want)
				}
				if i > 0 && ev.Due.Before(evs[i-1].Due) {
					t.Fatalf("seed %d step %d: event %d due %v applied after one due %v", seed, step, ev.ID, ev.Due, evs[i-1].Due)
				}
				if ek == k {
					// The dead letter is enqueued when the expiry happens: at
					// its due time when a timer applied it, now when a
					// release found it expired.
					at := ev.Due
					if ev.Rule == "L" {
						at = ev.Time
					}
					dlqSeq++
					due[dlq][dlqSeq] = at.Add(dlqTTL)
				}
			}
		}
		for step := 0; step < 3000; step++ {
			switch op := rng.IntN(10); {
			case op < 5:
				it := core.Item{Persistent: true}
				if rng.IntN(4) == 0 {
					it.TTL = core.After(time.Duration(rng.IntN(2000)) * time.Millisecond)
				}
				got, _, err := e.Enqueue(now, k, it)
				if err != nil {
					t.Fatal(err)
				}
				if !got.DueAt.IsZero() {
					due[k][got.Seq] = got.DueAt
				}
			case op < 6:
				if got, ok, _ := e.Receive(now, k, time.Time{}); ok {
					locked = append(locked, got.Seq)
				}
			case op < 7 && len(locked) > 0:
				i := rng.IntN(len(locked))
				seq := locked[i]
				locked = append(locked[:i], locked[i+1:]...)
				if rng.IntN(3) == 0 {
					e.Complete(now, k, seq)
					delete(due[k], seq)
				} else if err := e.Release(now, k, seq); err != nil {
					t.Fatal(err)
				}
			default:
				d := time.Duration(rng.IntN(300)) * time.Millisecond
				if rng.IntN(20) == 0 {
					d = time.Duration(rng.IntN(5000)) * time.Millisecond
				}
				now = now.Add(d)
				e.Advance(now)
			}
			check(step)
		}
		now = now.Add(time.Hour)
		e.Advance(now)
		check(-1)
		for ek, m := range due {
			for seq := range m {
				if !(ek == k && contains(locked, seq)) {
					t.Fatalf("seed %d: %s item %d never expired", seed, ek, seq)
				}
			}
		}
	}
}

func contains(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
