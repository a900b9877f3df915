package core

import "time"

// The rule for the engine's operations (issue 25.1, docs/architecture.md,
// "The engine's operations"): an exported method of the Engine (or of a
// Holder) never takes the engine's lock itself. It hands its work, as a
// function, to run or to one of its scoped variants below, which own the
// steps every operation needs, in order:
//
//  1. take the lock and apply everything that fell due up to now
//     (catch-up: no operation ever sees an item whose due time passed);
//  2. arm the panic guard (guard.go), so that a panic of the engine's own
//     code releases the lock;
//  3. look the target up (an entity, a live item, a locked item, a held
//     session, a locked item of a held session), failing as the engine
//     always has (ENOTFOUND, ELOCKLOST, EPRECONDITION, ESESSIONLOCKLOST);
//  4. run the operation;
//  5. flush (apply what the operation made due now, hand its changes to
//     the Store), release the lock and queue the hooks (hooks.go), on
//     every path, an error's included: what an operation changed before
//     it failed is flushed all the same;
//  6. hand back the operation's Commit, or none when it failed.
//
// TestIssue25_1_OperationsRunThroughTheWrapper checks that no exported
// method of the Engine or of a Holder calls lock, unlock, guard, catchUp,
// flush or mu.Lock itself. What takes the lock without catching up (a
// read of the event log, NextDue, Register) goes through locked.
//
// The functions are generic rather than methods, and take their operation
// as a closure that does not escape: no operation allocates for them. An
// operation that hands back an Item sets its method's named result from
// inside the closure rather than returning it through the wrapper, where
// each level would copy the Item's 288 bytes.

// none is the result of an operation that returns nothing but its error.
type none = struct{}

// lock takes the engine's lock and applies everything due up to now. It
// notes where the event log stood, for Advance's count.
func (e *Engine) lock(now time.Time) {
	e.mu.Lock()
	e.opEvents = e.events.next
	e.catchUp(now)
}

// run runs fn as one operation of the engine at now (steps 1, 2, 4, 5
// and 6 above). It returns what fn returned, and the Commit of the
// operation's changes unless fn failed.
func run[T any](e *Engine, now time.Time, fn func() (T, error)) (out T, c *Commit, err error) {
	e.lock(now)
	defer e.guard()
	out, err = fn()
	return out, e.end(err), err
}

// end ends an operation that took the lock (steps 5 and 6): it flushes,
// unlocks and returns the operation's Commit, nil when it failed with err.
func (e *Engine) end(err error) *Commit {
	c := e.unlock()
	if err != nil {
		return nil
	}
	return c
}

// The scoped variants look their target up (step 3) and hand it to fn;
// when the lookup fails, they end the operation with its error and a zero
// T. Each is written out rather than as a run of a closure, which would
// cost every operation a second indirect call.

// runEntity is run for an operation on entity k: ENOTFOUND when there is
// none.
func runEntity[T any](e *Engine, now time.Time, k EntityKey, fn func(*entity) (T, error)) (out T, c *Commit, err error) {
	e.lock(now)
	defer e.guard()
	var ent *entity
	if ent, err = e.entityLocked(k); err == nil {
		out, err = fn(ent)
	}
	return out, e.end(err), err
}

// runItem is run for an operation on live item seq of entity k, in any
// state: ENOTFOUND when there is no such entity or item.
func runItem[T any](e *Engine, now time.Time, k EntityKey, seq uint64, fn func(*item) (T, error)) (out T, c *Commit, err error) {
	e.lock(now)
	defer e.guard()
	var x *item
	if x, err = e.itemLocked(k, seq); err == nil {
		out, err = fn(x)
	}
	return out, e.end(err), err
}

// runLocked is run for a settlement of item seq of entity k: ENOTFOUND
// when there is no such entity, ELOCKLOST when the item is not locked.
func runLocked[T any](e *Engine, now time.Time, k EntityKey, seq uint64, fn func(*item) (T, error)) (out T, c *Commit, err error) {
	e.lock(now)
	defer e.guard()
	var x *item
	if x, err = e.lockedItem(k, seq); err == nil {
		out, err = fn(x)
	}
	return out, e.end(err), err
}

// runSessions is runEntity for an entity that must have sessions:
// EPRECONDITION when it has none.
func runSessions[T any](e *Engine, now time.Time, k EntityKey, fn func(*entity) (T, error)) (out T, c *Commit, err error) {
	e.lock(now)
	defer e.guard()
	var ent *entity
	if ent, err = e.sessionsLocked(k); err == nil {
		out, err = fn(ent)
	}
	return out, e.end(err), err
}

// runHeld is runSessions for an operation of holder on session group,
// which holder must hold: ESESSIONLOCKLOST when it does not (the lock ran
// out, was released, or another holder has it now, SS-3).
func runHeld[T any](e *Engine, now time.Time, k EntityKey, group, holder string, fn func(*session) (T, error)) (out T, c *Commit, err error) {
	e.lock(now)
	defer e.guard()
	var s *session
	if s, err = e.heldLocked(k, group, holder); err == nil {
		out, err = fn(s)
	}
	return out, e.end(err), err
}

// runHeldItem is runHeld for a settlement of item seq of the session:
// ELOCKLOST when it is not a locked item of that session.
func runHeldItem[T any](e *Engine, now time.Time, k EntityKey, group, holder string, seq uint64, fn func(*item) (T, error)) (out T, c *Commit, err error) {
	e.lock(now)
	defer e.guard()
	var x *item
	if x, err = e.heldItemLocked(k, group, holder, seq); err == nil {
		out, err = fn(x)
	}
	return out, e.end(err), err
}

// locked runs fn with the engine's lock held and no catch-up: for what
// reads the engine as it stands (the event log, NextDue, an entity's
// record) or sets what no due time depends on (Register, Unsubscribe). fn
// must not change entities or items: nothing is flushed.
func locked[T any](e *Engine, fn func() T) T {
	e.mu.Lock()
	defer e.mu.Unlock()
	return fn()
}
