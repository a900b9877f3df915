package core_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

// rowOps returns the item ops of the latest Append as "put SEQ@ROW" and
// "delete SEQ@ROW".
func (s *recordingStore) rowOps() []string {
	return s.lastAs(func(op core.Op) string {
		switch op.Kind {
		case core.OpPutItem:
			return fmt.Sprintf("put %d@%d", op.Item.Seq, op.Item.Row)
		case core.OpDeleteItem:
			return fmt.Sprintf("delete %d@%d", op.Seq, op.Row)
		}
		return ""
	})
}

// A keyed item that replaces another takes the row the store keeps the
// old one at (Item.Row), through Put and Change and across a restart, so
// that the store can write a replace over the old item; an item that
// replaces none, or is enqueued, has a row of its own.
func TestReplacedKeyedItemsKeepTheirRow(t *testing.T) {
	st := &recordingStore{MemStore: core.NewMemStore()}
	open := func() *core.Engine {
		e := core.NewEngine(core.Config{Store: st})
		if err := e.Recover(context.Background(), t0); err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	k := core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}
	if _, c, err := e.Create(t0, core.Entity{EntityKey: k, Kind: "container", Durable: true, Policy: docPolicy()}); err != nil {
		t.Fatal(err)
	} else {
		storetest.MustWait(t, c)
	}
	put := func(key string) {
		t.Helper()
		_, c, err := e.Put(t0, k, core.Item{Key: key, Body: []byte("{}"), Persistent: true, Row: 99}) // a Row from outside is not taken
		if err != nil {
			t.Fatal(err)
		}
		storetest.MustWait(t, c)
	}
	change := func(fn core.ChangeFunc) {
		t.Helper()
		_, c, err := e.Change(t0, k, fn)
		if err != nil {
			t.Fatal(err)
		}
		storetest.MustWait(t, c)
	}
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"a is created at its own row", func() { put("a") }, []string{"put 1@0"}},
		{"a replaced by Put takes its row", func() { put("a") }, []string{"delete 1@0", "put 2@1"}},
		{"a replaced again keeps the first row", func() { change(replaceIfThere("a", "3")) }, []string{"delete 2@1", "put 3@1"}},
		{"b is created at its own row", func() { put("b") }, []string{"put 4@0"}},
		{"a written twice in one change ends at its row", func() {
			change(func(func(string) (core.Item, bool)) ([]string, []core.Item, error) {
				return nil, []core.Item{{Key: "a", Body: []byte("5"), Persistent: true}, {Key: "a", Body: []byte("6"), Persistent: true}}, nil
			})
		}, []string{"delete 3@1", "put 5@1", "delete 5@1", "put 6@1"}},
		{"b removed and written again has a row of its own", func() {
			change(func(func(string) (core.Item, bool)) ([]string, []core.Item, error) {
				return []string{"b"}, []core.Item{{Key: "b", Body: []byte("7"), Persistent: true}}, nil
			})
		}, []string{"delete 4@0", "put 7@0"}},
		{"after a restart, a replace still takes the stored row", func() {
			e = open()
			put("a")
		}, []string{"delete 6@1", "put 8@1"}},
		{"an enqueued item has a row of its own", func() {
			_, c, err := e.Enqueue(t0, k, core.Item{Key: "c", Body: []byte("{}"), Persistent: true, State: core.Active, Row: 2})
			if err != nil {
				t.Fatal(err)
			}
			storetest.MustWait(t, c)
		}, []string{"put 9@0"}},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, st.rowOps()); diff != "" {
			t.Fatalf("%s: item ops (-want +got):\n%s", s.name, diff)
		}
	}
	got, found, err := e.Get(t0, k, "a")
	if err != nil || !found || got.Seq != 8 || got.Row != 1 {
		t.Fatalf("Get(a) = Seq %d Row %d, %v, %v; want Seq 8 at row 1", got.Seq, got.Row, found, err)
	}
}
