package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// model is the Store contract written as the simplest code that keeps it:
// the suite applies the same ops to a model and to the store under test,
// and compares what the store loads with the model.
type model struct {
	entities map[core.EntityKey]*modelEntity
}

type modelEntity struct {
	entity     core.Entity          // as last put
	minLastSeq uint64               // the least LastSeq Load may return
	items      map[uint64]core.Item // by row (core.RowOf)
	states     map[string][]byte    // session states, by session
}

func newModel() *model {
	return &model{entities: map[core.EntityKey]*modelEntity{}}
}

// apply applies ops in order, as the store must.
func (m *model) apply(ops ...core.Op) {
	for _, op := range ops {
		switch op.Kind {
		case core.OpPutEntity:
			e := *op.Entity
			me := m.entities[e.EntityKey]
			if me == nil {
				me = &modelEntity{items: map[uint64]core.Item{}, states: map[string][]byte{}}
				m.entities[e.EntityKey] = me
			}
			me.entity = e
			me.minLastSeq = max(me.minLastSeq, e.LastSeq)
		case core.OpDeleteEntity:
			delete(m.entities, op.Key)
		case core.OpPutItem:
			me := m.entities[op.Key]
			if me == nil {
				panic(fmt.Sprintf("storetest: the suite put item %d of %v, which is not stored", op.Item.Seq, op.Key))
			}
			row, _ := op.ItemRow()
			me.items[row] = *op.Item
			me.minLastSeq = max(me.minLastSeq, op.Item.Seq)
		case core.OpDeleteItem:
			if me := m.entities[op.Key]; me != nil {
				row, _ := op.ItemRow()
				delete(me.items, row)
			}
		case core.OpReset:
			clear(m.entities)
		case core.OpPutSessionState:
			if me := m.entities[op.Key]; me != nil {
				me.states[op.Group] = op.State
			}
		case core.OpDeleteSessionState:
			if me := m.entities[op.Key]; me != nil {
				delete(me.states, op.Group)
			}
		default:
			panic(fmt.Sprintf("storetest: unknown op kind %d", op.Kind))
		}
	}
}

// check fails the test where snap, what the store loaded, differs from the
// model.
func (m *model) check(tb testing.TB, snap Snapshot) {
	tb.Helper()
	var want, got []core.Entity
	for _, me := range m.entities {
		e := Stored(me.entity)
		e.LastSeq = 0
		want = append(want, e)
	}
	for _, e := range snap.Entities {
		me := m.entities[e.EntityKey]
		if me != nil && e.LastSeq < me.minLastSeq {
			tb.Errorf("entity %v: LastSeq %d, want at least %d", e.EntityKey, e.LastSeq, me.minLastSeq)
		}
		e.LastSeq = 0
		got = append(got, e)
	}
	byKey := func(a, b core.Entity) int {
		return cmp.Or(cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Name, b.Name))
	}
	slices.SortFunc(want, byKey)
	slices.SortFunc(got, byKey)
	if diff := gocmp.Diff(want, got, CmpOptions()); diff != "" {
		tb.Errorf("loaded entities differ from those put (-want +got, LastSeq not compared):\n%s", diff)
	}
	for k, me := range m.entities {
		var want []core.Item
		for _, it := range me.items {
			want = append(want, StoredItem(it))
		}
		slices.SortFunc(want, func(a, b core.Item) int { return cmp.Compare(a.Seq, b.Seq) })
		if diff := gocmp.Diff(want, snap.Items[k], CmpOptions()); diff != "" {
			tb.Errorf("loaded items of %v differ from those put (-want +got):\n%s", k, diff)
		}
	}
	for k, items := range snap.Items {
		if m.entities[k] == nil && len(items) > 0 {
			tb.Errorf("Load returned %d items of %v, which is not stored", len(items), k)
		}
	}
	for k, me := range m.entities {
		got := snap.States[k]
		if got == nil {
			got = map[string][]byte{}
		}
		if diff := gocmp.Diff(me.states, got, CmpOptions()); diff != "" {
			tb.Errorf("loaded session states of %v differ from those put (-want +got):\n%s", k, diff)
		}
	}
	for k, states := range snap.States {
		if m.entities[k] == nil && len(states) > 0 {
			tb.Errorf("Load returned %d session states of %v, which is not stored", len(states), k)
		}
	}
}

// harness runs one subtest's store and model side by side.
type harness struct {
	t      *testing.T
	s      core.Store
	reopen func() core.Store
	m      *model
}

func newHarness(t *testing.T, open Opener) *harness {
	s, reopen := open(t)
	return &harness{t: t, s: s, reopen: reopen, m: newModel()}
}

// append appends ops as one Append call, applies them to the model, and
// returns the Commit without waiting for it.
func (h *harness) append(ops ...core.Op) *core.Commit {
	h.m.apply(ops...)
	return h.s.Append(ops)
}

// mustAppend appends ops as one Append call and waits for its Commit.
func (h *harness) mustAppend(ops ...core.Op) {
	h.t.Helper()
	MustWait(h.t, h.append(ops...))
}

// check loads the store and compares it with the model.
func (h *harness) check() Snapshot {
	h.t.Helper()
	snap := MustLoad(h.t, h.s)
	h.m.check(h.t, snap)
	return snap
}

// checkReopened checks the store, reopens it, and checks it again.
func (h *harness) checkReopened() Snapshot {
	h.t.Helper()
	h.check()
	h.s = h.reopen()
	return h.check()
}
