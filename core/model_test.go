package core_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// TestEngineAgainstModel drives the engine with random operations and checks
// it against a naive model: a list of items with due times, scanned in full.
// It exercises the timer heap and the sequence queues (tombstones,
// compaction, insertion at the place by Seq) far beyond the scenario tests.
func TestEngineAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed))
		e := core.NewEngine(core.Config{})
		k := core.EntityKey{Protocol: "test", Name: "q"}
		e.Create(t0, core.Entity{EntityKey: k})
		type mitem struct {
			seq    uint64
			due    time.Time // zero: never
			locked bool
		}
		var model []mitem
		now := t0
		expireModel := func() int {
			n := 0
			model = slices.DeleteFunc(model, func(m mitem) bool {
				if !m.locked && !m.due.IsZero() && !now.Before(m.due) {
					n++
					return true
				}
				return false
			})
			return n
		}
		for step := 0; step < 3000; step++ {
			switch op := rng.IntN(10); {
			case op < 4: // enqueue
				it := core.Item{}
				if rng.IntN(4) > 0 {
					it.TTL = core.After(time.Duration(rng.IntN(1000)) * time.Millisecond)
				}
				got, _, err := e.Enqueue(now, k, it)
				if err != nil {
					t.Fatal(err)
				}
				model = append(model, mitem{seq: got.Seq, due: got.DueAt})
			case op < 6: // receive the head
				expireModel()
				got, ok, _ := e.Receive(now, k, time.Time{})
				i := slices.IndexFunc(model, func(m mitem) bool { return !m.locked })
				if ok != (i >= 0) || ok && got.Seq != model[i].seq {
					t.Fatalf("seed %d step %d: receive got %d/%v, model %d", seed, step, got.Seq, ok, i)
				}
				if ok {
					model[i].locked = true
				}
			case op < 8: // settle a random locked item
				var locked []int
				for i, m := range model {
					if m.locked {
						locked = append(locked, i)
					}
				}
				if len(locked) == 0 {
					continue
				}
				i := locked[rng.IntN(len(locked))]
				if rng.IntN(2) == 0 {
					if _, err := e.Complete(now, k, model[i].seq); err != nil {
						t.Fatal(err)
					}
					model = slices.Delete(model, i, i+1)
				} else {
					if err := e.Release(now, k, model[i].seq); err != nil {
						t.Fatal(err)
					}
					model[i].locked = false
				}
			default: // time passes
				now = now.Add(time.Duration(rng.IntN(300)) * time.Millisecond)
				e.Advance(now)
			}
			expireModel()
			in, _ := e.Info(now, k)
			var active, locked int
			for _, m := range model {
				if m.locked {
					locked++
				} else {
					active++
				}
			}
			if in.Counts.Active != active || in.Counts.Locked != locked {
				t.Fatalf("seed %d step %d: counts %+v, model active %d locked %d", seed, step, in.Counts, active, locked)
			}
		}
		items, _ := e.Items(now, k, 0)
		if len(items) != len(model) {
			t.Fatalf("seed %d: %d items, model %d", seed, len(items), len(model))
		}
		for i := range items {
			if items[i].Seq != model[i].seq {
				t.Fatalf("seed %d: item %d is seq %d, model %d", seed, i, items[i].Seq, model[i].seq)
			}
		}
	}
}
