package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// docPolicy is a Cosmos container's: a TTL of 10 s from the last write.
func docPolicy() core.Policy {
	return core.Policy{Base: core.FromModified, Retroactive: true, DefaultTTL: core.After(10 * time.Second),
		OnExpire: core.Drop, Rules: core.RuleIDs{DefaultTTL: "CO-4", Expire: "CO-6"}}
}

// replaceIfThere is a replace: key gets body if it is there, else
// ENOTFOUND.
func replaceIfThere(key, body string) core.ChangeFunc {
	return func(read func(string) (core.Item, bool)) ([]string, []core.Item, error) {
		if _, ok := read(key); !ok {
			return nil, nil, core.Errorf(core.ENOTFOUND, "%s not found", key)
		}
		return nil, []core.Item{{Key: key, Body: []byte(body), Persistent: true}}, nil
	}
}

// issue 16.4: Change reads, decides and writes at one instant, under the
// engine's lock, so that what it decided on is what it writes over.
func TestChangeDecidesOnTheItemsAtItsInstant(t *testing.T) {
	for _, tc := range []struct {
		name string
		// at is when the change happens; item a, written at t0, expires
		// at 10 s.
		at         time.Duration
		fn         core.ChangeFunc
		wantErr    string
		want       map[string]string // the items after, key: body
		wantEvents []string
	}{{
		name: "FoundIsReplaced_CO1",
		at:   9 * time.Second,
		fn:   replaceIfThere("a", "2"),
		want: map[string]string{"a": "2"},
	}, {
		name:    "NotFoundIsRefused",
		at:      time.Second,
		fn:      replaceIfThere("b", "2"),
		wantErr: core.ENOTFOUND,
		want:    map[string]string{"a": "1"},
	}, {
		name:       "ExpiredAtThatInstantIsNotFound_CO6",
		at:         10 * time.Second,
		fn:         replaceIfThere("a", "2"),
		wantErr:    core.ENOTFOUND,
		want:       map[string]string{},
		wantEvents: []string{"expired CO-6 1 10s"},
	}, {
		name: "AnErrorWritesNothing",
		at:   time.Second,
		fn: func(read func(string) (core.Item, bool)) ([]string, []core.Item, error) {
			return []string{"a"}, []core.Item{{Key: "b", Body: []byte("2")}}, core.Errorf(core.EPRECONDITION, "no")
		},
		wantErr: core.EPRECONDITION,
		want:    map[string]string{"a": "1"},
	}, {
		name: "RemovesAndPutsAreOneChange",
		at:   time.Second,
		fn: func(read func(string) (core.Item, bool)) ([]string, []core.Item, error) {
			a, _ := read("a")
			return []string{"a"}, []core.Item{{Key: "b", Body: a.Body}, {Key: "c", Body: []byte("3")}}, nil
		},
		want: map[string]string{"b": "1", "c": "3"},
	}, {
		name: "AKeylessItemIsInvalidAndNothingIsWritten",
		at:   time.Second,
		fn: func(read func(string) (core.Item, bool)) ([]string, []core.Item, error) {
			return []string{"a"}, []core.Item{{Key: "b"}, {Body: []byte("no key")}}, nil
		},
		wantErr: core.EINVALID,
		want:    map[string]string{"a": "1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustFixture(t)
			c := f.MustCreate("db/c", docPolicy())
			if _, _, err := f.e.Put(f.now(), c, core.Item{Key: "a", Body: []byte("1"), Persistent: true}); err != nil {
				t.Fatal(err)
			}
			// The change comes first at its instant: no Advance before it.
			at := t0.Add(tc.at)
			out, commit, err := f.e.Change(at, c, tc.fn)
			if got := core.ErrorCode(err); got != tc.wantErr {
				t.Fatalf("error %v (code %q), want code %q", err, got, tc.wantErr)
			}
			if err == nil {
				if err := commit.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				for _, it := range out {
					if !it.ModifiedAt.Equal(at) {
						t.Errorf("item %s written with ModifiedAt %v, want the change's instant %v", it.Key, it.ModifiedAt, at)
					}
				}
			}
			got := map[string]string{}
			items, err := f.e.Items(at, c, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				got[it.Key] = string(it.Body)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("items after (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantEvents, f.events(c)); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// issue 16.4: an item Change writes restarts its TTL from the change's
// instant (CO-1).
func TestChangeRestartsTTL_CO1(t *testing.T) {
	f := MustFixture(t)
	c := f.MustCreate("db/c", docPolicy())
	f.e.Put(f.now(), c, core.Item{Key: "a", Body: []byte("1")})
	f.advance(9 * time.Second)
	if _, _, err := f.e.Change(f.now(), c, replaceIfThere("a", "2")); err != nil {
		t.Fatal(err)
	}
	f.advance(9 * time.Second)
	if it, ok, _ := f.e.Get(f.now(), c, "a"); !ok || string(it.Body) != "2" {
		t.Fatalf("9 s after the change: %q, %v; want the change's item", it.Body, ok)
	}
	f.advance(time.Second)
	if _, ok, _ := f.e.Get(f.now(), c, "a"); ok {
		t.Fatal("the item outlived its TTL from the change")
	}
}

// issue 16.4: Change on an entity that is not there is ENOTFOUND, and its
// func is not called.
func TestChangeOfAMissingEntityIsNotFound(t *testing.T) {
	f := MustFixture(t)
	_, _, err := f.e.Change(f.now(), core.EntityKey{Protocol: "test", Name: "none"}, func(func(string) (core.Item, bool)) ([]string, []core.Item, error) {
		t.Error("the func ran for a missing entity")
		return nil, nil, nil
	})
	if core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("error %v, want ENOTFOUND", err)
	}
}

// issue 16.4: a ChangeFunc that panics leaves the engine unlocked and
// unchanged; the panic goes on to the caller.
func TestChangeFuncPanicReleasesTheLock(t *testing.T) {
	f := MustFixture(t)
	c := f.MustCreate("db/c", docPolicy())
	f.e.Put(f.now(), c, core.Item{Key: "a", Body: []byte("1")})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach Change's caller")
			}
		}()
		f.e.Change(f.now(), c, func(func(string) (core.Item, bool)) ([]string, []core.Item, error) {
			panic("a bug in a ChangeFunc")
		})
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if it, ok, _ := f.e.Get(f.now(), c, "a"); !ok || string(it.Body) != "1" {
			t.Errorf("after the panic: %q, %v; want item a unchanged", it.Body, ok)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the engine stayed locked after a ChangeFunc panicked")
	}
}
