package core

import (
	"context"
	"sync"
)

// OpKind is the kind of a store operation.
type OpKind uint8

// The operations the engine sends to the Store, in the order it made them.
const (
	OpPutEntity    OpKind = iota + 1 // create or replace Entity (items stay)
	OpDeleteEntity                   // delete the entity Key and all its items
	OpPutItem                        // create or replace Item (at its row, RowOf)
	OpDeleteItem                     // delete item Seq of entity Key, kept at its row
	OpReset                          // delete every entity and item
	// OpPutSessionState creates or replaces the state of session Group of
	// entity Key (State; empty is a state too, not none).
	OpPutSessionState
	// OpDeleteSessionState deletes the state of session Group of entity Key.
	OpDeleteSessionState
)

// Op is one change to persist.
type Op struct {
	Kind   OpKind
	Key    EntityKey
	Entity *Entity // OpPutEntity
	Item   *Item   // OpPutItem
	Seq    uint64  // OpDeleteItem
	Row    uint64  // OpDeleteItem: the item's Row (Item.Row)
	Group  string  // OpPutSessionState, OpDeleteSessionState
	State  []byte  // OpPutSessionState
}

// ItemRow is the row an OpPutItem or OpDeleteItem names (RowOf); ok is
// false for the other ops.
func (op Op) ItemRow() (row uint64, ok bool) {
	switch op.Kind {
	case OpPutItem:
		return RowOf(op.Item.Seq, op.Item.Row), true
	case OpDeleteItem:
		return RowOf(op.Seq, op.Row), true
	}
	return 0, false
}

// SessionState is the state one session of an entity keeps (Service Bus
// session state, SS-4): opaque bytes, kept until cleared, whatever becomes
// of the session's items and lock.
type SessionState struct {
	Group string
	State []byte
}

// Store is what the engine needs from persistence.
//
// Append queues ops to be applied in the order of Append calls and returns a
// Commit that completes once they are durable. It must not wait for I/O: the
// engine calls it inside its critical section, which is how the order of
// ops matches the order of changes. A store may commit the ops of many
// Append calls together (group commit).
//
// Load calls entity for every stored entity before any of its items or
// session states, item for each entity's items in ascending Seq order, and
// session for each session state of an entity (OpPutSessionState), in any
// order; an error from a callback ends Load, which returns it. An entity's
// LastSeq is at least the highest Seq of any item ever put for it, even if
// that item was deleted. Times come back in UTC truncated to the
// millisecond; a nil and an empty Body, Meta, Settings or State are the
// same (a session state that is stored is a state, even an empty one).
//
// An entity's items are kept at rows: an item's Row, or its Seq when Row
// is 0 (RowOf). A put of an item writes its row, replacing the item kept
// there if any: the engine's replace of a keyed item deletes the old item
// and puts the new one at the old one's row, which a store may write as
// one change of that row. A delete deletes what its row (RowOf(Seq, Row))
// keeps; the engine names items as it put them, so that is the item of
// that Seq. An item put again with its Seq keeps its Row.
//
// Deleting an entity (OpDeleteEntity, OpReset) deletes its items and
// session states. Deleting what is not stored does nothing, and so does
// putting a session state of an entity that is not stored. When a Commit
// is done, the ops of every earlier Append are applied too. A store may
// hold on to ops and what they point to until their Commit is done: the
// caller must not change them. Seqs are at most MaxSeq.
type Store interface {
	Load(ctx context.Context, entity func(Entity) error, item func(EntityKey, Item) error, session func(EntityKey, SessionState) error) error
	Append(ops []Op) *Commit
}

// MaxSeq is the largest item sequence number a Store takes: 2^43 - 1, so
// that a store can make one integer of an item's entity and Seq (lapse's
// SQLite store does). An entity that took a hundred thousand items a
// second would reach it in almost three years.
const MaxSeq = 1<<43 - 1

// Commit completes when the ops of one Append are durable, or failed.
type Commit struct {
	done chan struct{}
	once sync.Once
	err  error
	lead func()
}

// NewCommit returns a Commit that is not yet done.
func NewCommit() *Commit { return &Commit{done: make(chan struct{})} }

// NewLedCommit returns a Commit that is not yet done and whose Wait calls
// lead before it blocks, on the waiter's goroutine: a store whose writer
// is idle commits the queued writes there, rather than waking a writer
// goroutine and being woken by it (two hand-offs, the most of a lone
// writer's wait on two cores). lead may return before the Commit is done
// (another goroutine is committing); Wait then blocks as usual. It must
// not block on anything but the store's own work, and it ignores the
// waiter's context: a commit is never interrupted half way.
func NewLedCommit(lead func()) *Commit { return &Commit{done: make(chan struct{}), lead: lead} }

// Done completes the Commit with err (nil for success); later calls do nothing.
func (c *Commit) Done(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
	})
}

// Wait returns when the Commit is done, with its error, or ctx's error when
// ctx ends first. A nil Commit is done and succeeded.
func (c *Commit) Wait(ctx context.Context) error {
	if c == nil {
		return nil
	}
	if c.lead != nil {
		select {
		case <-c.done:
			return c.err
		default:
			c.lead()
		}
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DoneChan returns a channel closed when the Commit is done.
func (c *Commit) DoneChan() <-chan struct{} {
	if c == nil {
		return closedChan
	}
	return c.done
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// committed is a Commit that is done already.
func committed(err error) *Commit {
	c := NewCommit()
	c.Done(err)
	return c
}
