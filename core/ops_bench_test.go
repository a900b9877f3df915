package core_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// BenchmarkOps measures one call of the engine's hottest operations on an
// entity that holds a few items, with no store: what the engine's lock,
// catch-up and commit cost around each (docs/architecture.md, "The engine's
// operations").
func BenchmarkOps(b *testing.B) {
	body := make([]byte, 100)
	newEngine := func(b *testing.B) (*core.Engine, core.EntityKey) {
		e := core.NewEngine(core.Config{})
		k := core.EntityKey{Protocol: "bench", Name: "q"}
		if _, _, err := e.Create(t0, core.Entity{EntityKey: k, Policy: core.Policy{DefaultTTL: core.After(time.Hour)}}); err != nil {
			b.Fatal(err)
		}
		return e, k
	}
	b.Run("Enqueue+Take", func(b *testing.B) {
		e, k := newEngine(b)
		b.ReportAllocs()
		for range b.N {
			if _, _, err := e.Enqueue(t0, k, core.Item{Body: body}); err != nil {
				b.Fatal(err)
			}
			if _, ok, _, err := e.Take(t0, k); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("Receive+Unlock", func(b *testing.B) {
		e, k := newEngine(b)
		for range 1000 {
			e.Enqueue(t0, k, core.Item{Body: body})
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			it, ok, err := e.Receive(t0, k, t0.Add(time.Minute))
			if err != nil || !ok {
				b.Fatal(ok, err)
			}
			// Back to the head, without counting the delivery: the
			// entity keeps its items for the next round.
			if err := e.Unlock(t0, k, it.Seq); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Put+Get", func(b *testing.B) {
		e, k := newEngine(b)
		keys := make([]string, 100)
		for i := range keys {
			keys[i] = "key-" + strconv.Itoa(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			key := keys[i%len(keys)]
			if _, _, err := e.Put(t0, k, core.Item{Key: key, Body: body}); err != nil {
				b.Fatal(err)
			}
			if _, ok, err := e.Get(t0, k, key); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("NotFound", func(b *testing.B) {
		e, _ := newEngine(b)
		missing := core.EntityKey{Protocol: "bench", Name: "missing"}
		b.ReportAllocs()
		for range b.N {
			if _, err := e.Complete(t0, missing, 1); err == nil {
				b.Fatal("no error")
			}
		}
	})
}
