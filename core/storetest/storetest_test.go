package storetest

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/lapse-emulator/lapse/core"
)

// mapStore is the plainest Store that keeps the contract, to test the
// suite itself. Its reopen returns the same store, as an in-memory store's
// does.
type mapStore struct {
	mu       sync.Mutex
	entities map[core.EntityKey]*mapEntity
	// keepTimes skips the truncation of times, which the suite must notice.
	keepTimes bool
}

type mapEntity struct {
	e      core.Entity
	items  map[uint64]core.Item
	states map[string][]byte
}

func (s *mapStore) Append(ops []core.Op) *core.Commit {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, op := range ops {
		switch op.Kind {
		case core.OpPutEntity:
			me := s.entities[op.Entity.EntityKey]
			if me == nil {
				me = &mapEntity{items: map[uint64]core.Item{}, states: map[string][]byte{}}
				s.entities[op.Entity.EntityKey] = me
			}
			last := me.e.LastSeq
			me.e = *op.Entity
			me.e.LastSeq = max(last, op.Entity.LastSeq)
		case core.OpDeleteEntity:
			delete(s.entities, op.Key)
		case core.OpPutItem:
			if me := s.entities[op.Key]; me != nil {
				row, _ := op.ItemRow()
				me.items[row] = *op.Item
				me.e.LastSeq = max(me.e.LastSeq, op.Item.Seq)
			}
		case core.OpDeleteItem:
			if me := s.entities[op.Key]; me != nil {
				row, _ := op.ItemRow()
				delete(me.items, row)
			}
		case core.OpReset:
			clear(s.entities)
		case core.OpPutSessionState:
			if me := s.entities[op.Key]; me != nil {
				me.states[op.Group] = op.State
			}
		case core.OpDeleteSessionState:
			if me := s.entities[op.Key]; me != nil {
				delete(me.states, op.Group)
			}
		}
	}
	c := core.NewCommit()
	c.Done(nil)
	return c
}

func (s *mapStore) Load(ctx context.Context, entity func(core.Entity) error, item func(core.EntityKey, core.Item) error, session func(core.EntityKey, core.SessionState) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []*mapEntity
	for _, me := range s.entities {
		all = append(all, me)
	}
	slices.SortFunc(all, func(a, b *mapEntity) int {
		return cmp.Or(cmp.Compare(a.e.Protocol, b.e.Protocol), cmp.Compare(a.e.Name, b.e.Name))
	})
	for _, me := range all {
		e := me.e
		if !s.keepTimes {
			e = Stored(e)
		}
		if err := entity(e); err != nil {
			return err
		}
	}
	for _, me := range all {
		for _, it := range storedItems(me.items) {
			if !s.keepTimes {
				it = StoredItem(it)
			}
			if err := item(me.e.EntityKey, it); err != nil {
				return err
			}
		}
		for g, st := range me.states {
			if err := session(me.e.EntityKey, core.SessionState{Group: g, State: st}); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

func newMapStore() *mapStore {
	return &mapStore{entities: map[core.EntityKey]*mapEntity{}}
}

func TestRunOnMapStore(t *testing.T) {
	Run(t, func(t *testing.T) (core.Store, func() core.Store) {
		s := newMapStore()
		return s, func() core.Store { return s }
	})
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, format)
}

// TestModelNoticesDifferences checks that the suite's comparison is not
// vacuous: a lost item, an extra entity, untruncated times and a lost or
// stray session state all fail it.
func TestModelNoticesDifferences(t *testing.T) {
	k := key(core.ServiceBus, "q")
	cases := []struct {
		name  string
		store func(s *mapStore)
		model func(m *model)
	}{
		{"LostItem", func(s *mapStore) {
			s.Append([]core.Op{putEntity(newEntity(k))})
		}, func(m *model) {
			m.apply(putEntity(newEntity(k)), putItem(k, newItem(1, "x")))
		}},
		{"ExtraEntity", func(s *mapStore) {
			s.Append([]core.Op{putEntity(newEntity(k)), putEntity(newEntity(key(core.Cosmos, "x")))})
		}, func(m *model) {
			m.apply(putEntity(newEntity(k)))
		}},
		{"UntruncatedTimes", func(s *mapStore) {
			s.keepTimes = true
			s.Append([]core.Op{putEntity(newEntity(k)), putItem(k, newItem(1, "x"))})
		}, func(m *model) {
			m.apply(putEntity(newEntity(k)), putItem(k, newItem(1, "x")))
		}},
		{"LowLastSeq", func(s *mapStore) {
			s.Append([]core.Op{putEntity(newEntity(k))})
		}, func(m *model) {
			m.apply(putEntity(newEntity(k)), putItem(k, newItem(9, "x")), deleteItem(k, 9))
		}},
		{"ItemFieldDiffers", func(s *mapStore) {
			it := fullItem(1)
			it.TTL = core.Forever
			s.Append([]core.Op{putEntity(newEntity(k)), putItem(k, it)})
		}, func(m *model) {
			m.apply(putEntity(newEntity(k)), putItem(k, fullItem(1)))
		}},
		{"LostSessionState", func(s *mapStore) {
			s.Append([]core.Op{putEntity(newEntity(k))})
		}, func(m *model) {
			m.apply(putEntity(newEntity(k)), putState(k, "s", nil))
		}},
		{"SessionStateDiffers", func(s *mapStore) {
			s.Append([]core.Op{putEntity(newEntity(k)), putState(k, "s", []byte("a"))})
		}, func(m *model) {
			m.apply(putEntity(newEntity(k)), putState(k, "s", []byte("b")))
		}},
		{"StateOfDeletedEntity", func(s *mapStore) {
			s.Append([]core.Op{putEntity(newEntity(k)), putState(k, "s", []byte("a"))})
		}, func(m *model) {
			m.apply(putEntity(newEntity(k)), putState(k, "s", []byte("a")), deleteEntity(k))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, m := newMapStore(), newModel()
			tc.store(s)
			tc.model(m)
			r := &recorder{TB: t}
			m.check(r, MustLoad(r, s))
			if len(r.errors) == 0 {
				t.Error("the model found no difference")
			}
		})
	}
}
