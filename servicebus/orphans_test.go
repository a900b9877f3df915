package servicebus_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// failingStore is a MemStore whose commits fail while failing is set: a
// disk that refuses writes.
type failingStore struct {
	*core.MemStore
	failing atomic.Bool
}

func (s *failingStore) Append(ops []core.Op) *core.Commit {
	c := s.MemStore.Append(ops)
	if !s.failing.Load() {
		return c
	}
	failed := core.NewCommit()
	failed.Done(errors.New("the disk is full"))
	return failed
}

// Issue 25.5: a create that fails leaves nothing behind, in the engine or
// in the front-end: once the store takes writes again, the same create
// succeeds, rather than finding an entity nobody can see or delete.
func TestFailedCreateLeavesNoOrphan(t *testing.T) {
	st := &failingStore{MemStore: core.NewMemStore()}
	f := MustServerOnStore(t, st, t0)
	f.MustTopic("t", nil)
	creates := map[string]func() error{
		"queue":        func() error { return f.s.CreateQueue("q", atom.DefaultQueue()) },
		"topic":        func() error { return f.s.CreateTopic("t2", atom.DefaultTopic()) },
		"subscription": func() error { return f.s.CreateSubscription("t", "s", atom.DefaultSubscription()) },
	}
	st.failing.Store(true)
	for what, create := range creates {
		if err := create(); err == nil {
			t.Errorf("the %s was created on a store that fails", what)
		}
	}
	st.failing.Store(false)
	for what, create := range creates {
		if err := create(); err != nil {
			t.Errorf("the %s, once the store takes writes: %v", what, err)
		}
	}
}
