package core

import (
	"context"
	"sort"
	"sync"
	"time"
)

// MemStore is a Store that keeps everything in memory: a reference for the
// store contract tests and a store for tests that restart an engine.
type MemStore struct {
	mu       sync.Mutex
	entities map[EntityKey]*Entity
	items    map[EntityKey]map[uint64]*Item // by row (RowOf)
	sessions map[EntityKey]map[string][]byte
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{entities: make(map[EntityKey]*Entity), items: make(map[EntityKey]map[uint64]*Item),
		sessions: make(map[EntityKey]map[string][]byte)}
}

// Append applies ops at once; the Commit is already done.
func (s *MemStore) Append(ops []Op) *Commit {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Ops come in runs on one entity (100 k dead letters are 100 k
	// deletes from one entity and 100 k writes to another): its maps are
	// looked up once per run.
	var (
		cur   EntityKey
		ok    bool
		items map[uint64]*Item
		en    *Entity
	)
	entity := func(k EntityKey) {
		if !ok || k != cur {
			cur, ok = k, true
			items, en = s.items[k], s.entities[k]
		}
	}
	for _, op := range ops {
		switch op.Kind {
		case OpPutEntity:
			en := *op.Entity
			en.Created = storedTime(en.Created)
			if old := s.entities[op.Key]; old != nil && old.LastSeq > en.LastSeq {
				en.LastSeq = old.LastSeq
			}
			s.entities[op.Key] = &en
			ok = false
		case OpDeleteEntity:
			delete(s.entities, op.Key)
			delete(s.items, op.Key)
			delete(s.sessions, op.Key)
			ok = false
		case OpPutItem:
			entity(op.Key)
			if items == nil {
				items = make(map[uint64]*Item)
				s.items[op.Key] = items
			}
			it := new(Item)
			*it = *op.Item
			// Unique values are not kept, as sqlitestore keeps none: the
			// protocol's Unique hook derives them again at Recover.
			it.Unique = nil
			for _, t := range []*time.Time{&it.EnqueuedAt, &it.ModifiedAt, &it.ScheduledAt, &it.DueAt, &it.LockedUntil} {
				*t = storedTime(*t)
			}
			row, _ := op.ItemRow()
			items[row] = it
			if en != nil && en.LastSeq < it.Seq {
				en.LastSeq = it.Seq
			}
		case OpDeleteItem:
			entity(op.Key)
			row, _ := op.ItemRow()
			delete(items, row)
		case OpReset:
			clear(s.entities)
			clear(s.items)
			clear(s.sessions)
			ok = false
		case OpPutSessionState:
			if s.entities[op.Key] == nil {
				continue
			}
			m := s.sessions[op.Key]
			if m == nil {
				m = make(map[string][]byte)
				s.sessions[op.Key] = m
			}
			m[op.Group] = append([]byte{}, op.State...)
		case OpDeleteSessionState:
			delete(s.sessions[op.Key], op.Group)
		}
	}
	return committed(nil)
}

// storedTime is t as stores keep it: UTC, to the millisecond.
func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Truncate(time.Millisecond).UTC()
}

// Load calls entity, item and session for what the store holds, in key,
// Seq and session order.
func (s *MemStore) Load(ctx context.Context, entity func(Entity) error, item func(EntityKey, Item) error, session func(EntityKey, SessionState) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]EntityKey, 0, len(s.entities))
	for k := range s.entities {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		if err := entity(*s.entities[k]); err != nil {
			return err
		}
	}
	for _, k := range keys {
		m := s.items[k]
		items := make([]*Item, 0, len(m))
		for _, it := range m {
			items = append(items, it)
		}
		sort.Slice(items, func(i, j int) bool { return items[i].Seq < items[j].Seq })
		for _, it := range items {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := item(k, *it); err != nil {
				return err
			}
		}
	}
	for _, k := range keys {
		m := s.sessions[k]
		groups := make([]string, 0, len(m))
		for g := range m {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			if err := session(k, SessionState{Group: g, State: m[g]}); err != nil {
				return err
			}
		}
	}
	return nil
}
