package storetest

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/lapse-emulator/lapse/core"
)

// Failing is a MemStore whose commits fail while Fail(true) is in force:
// a disk that refuses writes. The ops are applied all the same, as a write
// may be half done when its commit fails.
type Failing struct {
	*core.MemStore
	failing atomic.Bool
}

// NewFailing returns an empty Failing store that takes writes.
func NewFailing() *Failing { return &Failing{MemStore: core.NewMemStore()} }

// Fail makes the commits of later Appends fail, or succeed again.
func (s *Failing) Fail(on bool) { s.failing.Store(on) }

// Append applies ops and returns a Commit, failed while the store fails.
func (s *Failing) Append(ops []core.Op) *core.Commit {
	c := s.MemStore.Append(ops)
	if !s.failing.Load() {
		return c
	}
	failed := core.NewCommit()
	failed.Done(errors.New("the disk is full"))
	return failed
}

// Held is a MemStore whose commits, while held, are not done until
// released: a disk that has not written yet.
type Held struct {
	*core.MemStore
	mu   sync.Mutex
	hold bool
	held []*core.Commit
}

// NewHeld returns an empty Held store that does not hold.
func NewHeld() *Held { return &Held{MemStore: core.NewMemStore()} }

// Append applies ops and returns a Commit, which is not done until Hold(false)
// while the store holds.
func (s *Held) Append(ops []core.Op) *core.Commit {
	c := s.MemStore.Append(ops)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hold {
		return c
	}
	h := core.NewCommit()
	s.held = append(s.held, h)
	return h
}

// Hold makes the commits of later Appends wait, or, with false, completes
// those held and stops holding.
func (s *Held) Hold(hold bool) {
	s.mu.Lock()
	s.hold = hold
	held := s.held
	s.held = nil
	s.mu.Unlock()
	if !hold {
		for _, c := range held {
			c.Done(nil)
		}
	}
}
