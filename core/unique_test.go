package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// doc is a keyed item holding the unique values u.
func doc(key, body string, u ...string) core.Item {
	return core.Item{Key: key, Body: []byte(body), Persistent: true, Unique: u}
}

// writes returns a ChangeFunc that removes remove and writes put.
func writes(remove []string, put ...core.Item) core.ChangeFunc {
	return func(func(string) (core.Item, bool)) ([]string, []core.Item, error) { return remove, put, nil }
}

// issue 28.3: no two live keyed items of an entity hold one unique value,
// whichever way they are written; a refused write changes nothing.
func TestUniqueValuesHoldThroughEveryWrite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		write   func(e *core.Engine, now time.Time, c core.EntityKey) error
		wantErr string
		want    map[string]string // key: body
	}{{
		name: "EnqueueOfAHeldValueIsRefused",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			_, _, err := e.Enqueue(now, c, doc("c", "3", "x"))
			return err
		},
		wantErr: core.EUNIQUE,
		want:    map[string]string{"a": "1", "b": "2"},
	}, {
		name: "PutOfAHeldValueIsRefusedAndKeepsTheOldItem",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			_, _, err := e.Put(now, c, doc("b", "2'", "x"))
			return err
		},
		wantErr: core.EUNIQUE,
		want:    map[string]string{"a": "1", "b": "2"},
	}, {
		name: "PutKeepsItsOwnValue",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			_, _, err := e.Put(now, c, doc("a", "1'", "x"))
			return err
		},
		want: map[string]string{"a": "1'", "b": "2"},
	}, {
		name: "ChangeOfAHeldValueIsRefused",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			_, _, err := e.Change(now, c, writes(nil, doc("c", "3", "z"), doc("b", "2'", "x")))
			return err
		},
		wantErr: core.EUNIQUE,
		want:    map[string]string{"a": "1", "b": "2"},
	}, {
		name: "TwoItemsOfOneChangeCannotShareAValue",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			_, _, err := e.Change(now, c, writes(nil, doc("c", "3", "z"), doc("d", "4", "z")))
			return err
		},
		wantErr: core.EUNIQUE,
		want:    map[string]string{"a": "1", "b": "2"},
	}, {
		name: "AChangeMaySwapValues",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			_, _, err := e.Change(now, c, writes(nil, doc("a", "1'", "y"), doc("b", "2'", "x")))
			return err
		},
		want: map[string]string{"a": "1'", "b": "2'"},
	}, {
		name: "AChangeMayTakeTheValueOfAnItemItRemoves",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			_, _, err := e.Change(now, c, writes([]string{"a"}, doc("c", "3", "x")))
			return err
		},
		want: map[string]string{"b": "2", "c": "3"},
	}, {
		name: "ARemovedItemFreesItsValue",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			if _, err := e.RemoveKey(now, c, "a"); err != nil {
				return err
			}
			_, _, err := e.Enqueue(now, c, doc("c", "3", "x"))
			return err
		},
		want: map[string]string{"b": "2", "c": "3"},
	}, {
		name: "AnExpiredItemFreesItsValueAtTheInstantItExpires_CO6",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			// No read or advance first: the write's catch-up expires a
			// and b (10 s), and c takes x at that instant.
			_, _, err := e.Enqueue(now.Add(10*time.Second), c, doc("c", "3", "x"))
			return err
		},
		want: map[string]string{"c": "3"},
	}, {
		name: "EnqueueBatchOfAHeldValueIsRefused",
		write: func(e *core.Engine, now time.Time, c core.EntityKey) error {
			_, _, err := e.EnqueueBatch(now, []core.Target{{Key: c, Item: doc("c", "3", "z")}, {Key: c, Item: doc("d", "4", "z")}})
			return err
		},
		wantErr: core.EUNIQUE,
		want:    map[string]string{"a": "1", "b": "2"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustFixture(t)
			c := f.MustCreate("db/c", docPolicy())
			for _, it := range []core.Item{doc("a", "1", "x"), doc("b", "2", "y")} {
				if _, _, err := f.e.Enqueue(f.now(), c, it); err != nil {
					t.Fatal(err)
				}
			}
			err := tc.write(f.e, f.now(), c)
			if got := core.ErrorCode(err); got != tc.wantErr {
				t.Fatalf("error %v (code %q), want code %q", err, got, tc.wantErr)
			}
			at := f.now()
			if strings.Contains(tc.name, "Expired") {
				at = at.Add(10 * time.Second)
			}
			items, err := f.e.Items(at, c, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, it := range items {
				got[it.Key] = string(it.Body)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("items after (-want +got):\n%s", d)
			}
		})
	}
}

// issue 28.3: the store does not keep unique values; at Recover the
// protocol's Unique hook derives them again, and they hold as before.
func TestUniqueValuesAreDerivedAgainAtRecover(t *testing.T) {
	f := MustFixture(t)
	c := f.MustCreate("db/c", docPolicy())
	if _, commit, err := f.e.Enqueue(f.now(), c, doc("a", "x", "x")); err != nil {
		t.Fatal(err)
	} else if err := commit.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	hooks := core.ProtocolHooks{Unique: func(_ *core.Entity, it *core.Item) []string {
		return []string{string(it.Body)} // the body is the value, in this test
	}}
	// A front-end registered before Recover, and one registered after it
	// (Cosmos DB's, which starts once its certificate is ready).
	for _, before := range []bool{true, false} {
		e := core.NewEngine(core.Config{Store: f.store})
		if before {
			e.Register("test", hooks)
		}
		if err := e.Recover(context.Background(), f.now()); err != nil {
			t.Fatal(err)
		}
		if !before {
			e.Register("test", hooks)
		}
		_, _, err := e.Enqueue(f.now(), c, doc("b", "x", "x"))
		if got := core.ErrorCode(err); got != core.EUNIQUE {
			t.Fatalf("registered before Recover %v: a second item with the value: %v, want %s", before, err, core.EUNIQUE)
		}
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Key != "b" {
			t.Errorf("the refusal names key %q, want b", ce.Key)
		}
	}
}
