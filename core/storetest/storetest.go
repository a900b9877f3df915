// Package storetest is the contract test suite of core.Store. Every Store
// implementation runs it from its own tests:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) (core.Store, func() core.Store) {
//			dir := t.TempDir()
//			s := MustOpen(t, dir)
//			return s, func() core.Store {
//				MustClose(t, s)
//				s = MustOpen(t, dir)
//				return s
//			}
//		})
//	}
//
// Besides what the core.Store doc comment says, the suite holds a store to
// these promises, which every implementation keeps so that lapse behaves the
// same whichever store it runs on:
//   - Load returns every time truncated to the millisecond, in UTC (the zero
//     time stays zero); TTLs, strings and every other field come back
//     exactly, except that a nil and an empty slice (Body, Meta, Settings)
//     are the same.
//   - An entity's LastSeq is at least the larger of the LastSeq of its
//     latest OpPutEntity and the highest Seq put for it since it was
//     created, and exactly the LastSeq put if no item ever was. A deleted
//     entity (OpDeleteEntity, OpReset) is forgotten, LastSeq too.
//   - Once the Commit of an Append is done, the ops of every earlier Append
//     are applied too.
//   - Load calls entity for an entity before item for any of its items;
//     whether all entities come first is not checked.
//   - Deleting an item or an entity that is not stored does nothing.
//   - Append with no ops returns a Commit that succeeds.
//   - An error returned by a Load callback ends Load, which returns it.
//   - OpPutEntity stores the entity under its own key (Entity.EntityKey).
//   - A session state is stored per entity and session (Group), whatever
//     its size or bytes; nil and empty are the same, and both are a state.
//     Deleting an entity deletes its states; putting a state of an entity
//     that is not stored does nothing.
//
// The suite never puts an item of an entity that is not stored, and keeps
// Seqs at most core.MaxSeq.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// Opener opens a new, empty store for one test and returns it with reopen.
// reopen returns the store as a restart of lapse would find it: it ends the
// store last handed out and opens the same data again. The suite calls it
// only once every Commit it made is done. A store that lives in memory only
// may return the same store. Cleanup at the end of the test (t.Cleanup) is
// the Opener's.
type Opener func(t *testing.T) (s core.Store, reopen func() core.Store)

// Run runs the contract tests of core.Store against the stores open makes,
// one for each subtest.
func Run(t *testing.T, open Opener) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, open Opener)
	}{
		{"EmptyStore", testEmptyStore},
		{"AppendOrderAcrossCalls", testAppendOrderAcrossCalls},
		{"AppendOrderWithinCall", testAppendOrderWithinCall},
		{"WaitOnLastCommitCoversEarlierOnes", testWaitOnLastCoversEarlier},
		{"PutItemReplaces", testPutItemReplaces},
		{"PutEntityReplacesAndKeepsItems", testPutEntityKeepsItems},
		{"DeleteEntityDeletesItems", testDeleteEntityDeletesItems},
		{"DeleteMissingDoesNothing", testDeleteMissing},
		{"Reset", testReset},
		{"KeyIsProtocolAndName", testKeyIsProtocolAndName},
		{"LoadOrder", testLoadOrder},
		{"LastSeqOutlivesDeletedItems", testLastSeq},
		{"EntityFieldsRoundTrip", testEntityRoundTrip},
		{"ItemFieldsRoundTrip", testItemRoundTrip},
		{"LoadReturnsCallbackError", testLoadCallbackError},
		{"CommitDoneChan", testCommitDoneChan},
		{"ConcurrentAppends", testConcurrentAppends},
		{"SessionStatesRoundTrip", testSessionStatesRoundTrip},
		{"SessionStatesGoWithTheirEntity", testSessionStatesGoWithTheirEntity},
		{"RandomOpsMatchModel", testRandomOps},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open) })
	}
}

// waitTimeout bounds every wait of the suite, so that a store that never
// completes a Commit fails the test instead of hanging it.
const waitTimeout = 30 * time.Second

// MustWait waits for c and fails the test if it fails or takes longer than
// half a minute.
func MustWait(tb testing.TB, c *core.Commit) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := c.Wait(ctx); err != nil {
		tb.Fatalf("Commit.Wait: %v", err)
	}
}

// MustAppend appends ops to s as one Append call and waits for its Commit.
func MustAppend(tb testing.TB, s core.Store, ops ...core.Op) {
	tb.Helper()
	MustWait(tb, s.Append(ops))
}

// Snapshot is what Load returned, in the order it returned it, but for
// session states, which are by entity and session.
type Snapshot struct {
	Entities []core.Entity
	Items    map[core.EntityKey][]core.Item
	States   map[core.EntityKey]map[string][]byte
}

// Entity returns the entity of key k and whether Load returned it.
func (s Snapshot) Entity(k core.EntityKey) (core.Entity, bool) {
	for _, e := range s.Entities {
		if e.EntityKey == k {
			return e, true
		}
	}
	return core.Entity{}, false
}

// MustLoad loads s and checks the order the Store promises: each entity
// once, each item after its entity, an entity's items in ascending Seq.
func MustLoad(tb testing.TB, s core.Store) Snapshot {
	tb.Helper()
	snap := Snapshot{Items: map[core.EntityKey][]core.Item{}, States: map[core.EntityKey]map[string][]byte{}}
	seen := map[core.EntityKey]bool{}
	var orderErr error
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	err := s.Load(ctx,
		func(e core.Entity) error {
			if seen[e.EntityKey] {
				orderErr = fmt.Errorf("entity %v loaded twice", e.EntityKey)
				return orderErr
			}
			seen[e.EntityKey] = true
			snap.Entities = append(snap.Entities, e)
			return nil
		},
		func(k core.EntityKey, it core.Item) error {
			if !seen[k] {
				orderErr = fmt.Errorf("item %d of %v loaded before its entity", it.Seq, k)
				return orderErr
			}
			items := snap.Items[k]
			if n := len(items); n > 0 && items[n-1].Seq >= it.Seq {
				orderErr = fmt.Errorf("item %d of %v loaded after item %d: want ascending Seq", it.Seq, k, items[n-1].Seq)
				return orderErr
			}
			snap.Items[k] = append(items, it)
			return nil
		},
		func(k core.EntityKey, st core.SessionState) error {
			if !seen[k] {
				orderErr = fmt.Errorf("state of session %q of %v loaded before its entity", st.Group, k)
				return orderErr
			}
			m := snap.States[k]
			if m == nil {
				m = map[string][]byte{}
				snap.States[k] = m
			}
			if _, dup := m[st.Group]; dup {
				orderErr = fmt.Errorf("state of session %q of %v loaded twice", st.Group, k)
				return orderErr
			}
			m[st.Group] = st.State
			return nil
		})
	if orderErr != nil {
		tb.Fatalf("Load: %v", orderErr)
	}
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	checkUTC(tb, snap)
	return snap
}

// checkUTC fails the test for a loaded time that is not in UTC. (cmp
// compares times with Equal, which ignores the location.)
func checkUTC(tb testing.TB, snap Snapshot) {
	tb.Helper()
	check := func(what string, t time.Time) {
		if t.Location() != time.UTC {
			tb.Errorf("Load returned %s %v in %v, want UTC", what, t, t.Location())
		}
	}
	for _, e := range snap.Entities {
		check(e.String()+" Created", e.Created)
	}
	for k, items := range snap.Items {
		for _, it := range items {
			where := fmt.Sprintf("%v item %d ", k, it.Seq)
			check(where+"EnqueuedAt", it.EnqueuedAt)
			check(where+"ModifiedAt", it.ModifiedAt)
			check(where+"ScheduledAt", it.ScheduledAt)
			check(where+"DueAt", it.DueAt)
			check(where+"LockedUntil", it.LockedUntil)
		}
	}
}

// Stored returns e as Load returns it: times truncated to the millisecond
// in UTC.
func Stored(e core.Entity) core.Entity {
	e.Created = storedTime(e.Created)
	return e
}

// StoredItem returns it as Load returns it: times truncated to the
// millisecond in UTC.
func StoredItem(it core.Item) core.Item {
	it.EnqueuedAt = storedTime(it.EnqueuedAt)
	it.ModifiedAt = storedTime(it.ModifiedAt)
	it.ScheduledAt = storedTime(it.ScheduledAt)
	it.DueAt = storedTime(it.DueAt)
	it.LockedUntil = storedTime(it.LockedUntil)
	return it
}

func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Truncate(time.Millisecond).UTC()
}

// CmpOptions returns the options the suite compares loaded values with:
// TTLs by value, and nil slices equal to empty ones.
func CmpOptions() cmp.Options {
	return cmp.Options{
		cmp.Comparer(func(a, b core.TTL) bool { return a == b }),
		// bytes.Equal, not cmp's element by element walk, which takes
		// seconds over a megabyte; it holds nil equal to empty.
		cmp.Comparer(bytes.Equal),
		cmp.Comparer(func(a, b []core.Setting) bool { return slices.Equal(a, b) }),
	}
}
