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
	entities map[EntityKey]Entity
	items    map[EntityKey]map[uint64]Item
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{entities: make(map[EntityKey]Entity), items: make(map[EntityKey]map[uint64]Item)}
}

// Append applies ops at once; the Commit is already done.
func (s *MemStore) Append(ops []Op) *Commit {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, op := range ops {
		switch op.Kind {
		case OpPutEntity:
			en := *op.Entity
			en.Created = storedTime(en.Created)
			if old, ok := s.entities[op.Key]; ok && old.LastSeq > en.LastSeq {
				en.LastSeq = old.LastSeq
			}
			s.entities[op.Key] = en
		case OpDeleteEntity:
			delete(s.entities, op.Key)
			delete(s.items, op.Key)
		case OpPutItem:
			m := s.items[op.Key]
			if m == nil {
				m = make(map[uint64]Item)
				s.items[op.Key] = m
			}
			it := *op.Item
			for _, t := range []*time.Time{&it.EnqueuedAt, &it.ModifiedAt, &it.ScheduledAt, &it.DueAt, &it.LockedUntil} {
				*t = storedTime(*t)
			}
			m[op.Item.Seq] = it
			if en, ok := s.entities[op.Key]; ok && en.LastSeq < op.Item.Seq {
				en.LastSeq = op.Item.Seq
				s.entities[op.Key] = en
			}
		case OpDeleteItem:
			delete(s.items[op.Key], op.Seq)
		case OpReset:
			clear(s.entities)
			clear(s.items)
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

// Load calls entity and item for what the store holds, in key and Seq order.
func (s *MemStore) Load(ctx context.Context, entity func(Entity) error, item func(EntityKey, Item) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]EntityKey, 0, len(s.entities))
	for k := range s.entities {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		if err := entity(s.entities[k]); err != nil {
			return err
		}
	}
	for _, k := range keys {
		m := s.items[k]
		seqs := make([]uint64, 0, len(m))
		for q := range m {
			seqs = append(seqs, q)
		}
		sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
		for _, q := range seqs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := item(k, m[q]); err != nil {
				return err
			}
		}
	}
	return nil
}
