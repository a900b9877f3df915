package core_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// issue 16 (found by the reliability suite's random clock steps): a
// protocol reads the clock, stamps the item's body with it (a Cosmos _ts)
// and calls Enqueue or Change with that instant; when an advance runs in
// between, the item is still written at the caller's instant, and its TTL
// counts from the _ts the client was given (CO-1): it is gone 10 s after
// it, not 10 s after the advance; one whose TTL ran out by then expires at
// once.
func TestAWriteBehindAnAdvanceCountsItsTTLFromItsCallersInstant_CO1(t *testing.T) {
	writes := []struct {
		name  string
		write func(f *fixture, c core.EntityKey, at time.Time, key string) (core.Item, error)
	}{{
		name: "Enqueue",
		write: func(f *fixture, c core.EntityKey, at time.Time, key string) (core.Item, error) {
			it, _, err := f.e.Enqueue(at, c, core.Item{Key: key, Body: []byte("1")})
			return it, err
		},
	}, {
		name: "Change",
		write: func(f *fixture, c core.EntityKey, at time.Time, key string) (core.Item, error) {
			out, _, err := f.e.Change(at, c, func(func(string) (core.Item, bool)) ([]string, []core.Item, error) {
				return nil, []core.Item{{Key: key, Body: []byte("1")}}, nil
			})
			if len(out) != 1 {
				return core.Item{}, err
			}
			return out[0], err
		},
	}}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			f := MustFixture(t)
			c := f.MustCreate("db/c", docPolicy()) // a TTL of 10 s
			at := f.now()
			f.advance(4 * time.Second) // between the caller's clock read and its call
			it, err := w.write(f, c, at, "a")
			if err != nil {
				t.Fatal(err)
			}
			if !it.ModifiedAt.Equal(at) || !it.DueAt.Equal(at.Add(10*time.Second)) {
				t.Errorf("written with ModifiedAt %v, due %v; want the caller's instant %v and 10 s after it", it.ModifiedAt, it.DueAt, at)
			}
			f.advance(5 * time.Second)
			if _, ok, _ := f.e.Get(f.now(), c, "a"); !ok {
				t.Fatal("9 s after the caller's instant: gone, want there")
			}
			f.advance(time.Second)
			if _, ok, _ := f.e.Get(f.now(), c, "a"); ok {
				t.Fatal("10 s after the caller's instant: there, want gone (CO-1, CO-6)")
			}

			// A write whose TTL ran out before the call expires at once.
			at = f.now()
			f.advance(11 * time.Second)
			if _, err := w.write(f, c, at, "b"); err != nil {
				t.Fatal(err)
			}
			if _, ok, _ := f.e.Get(f.now(), c, "b"); ok {
				t.Fatal("written 11 s behind an advance with a TTL of 10 s: there, want expired")
			}
			if d := cmp.Diff([]string{"expired CO-6 1 10s", "expired CO-6 2 21s"}, f.events(c)); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}
