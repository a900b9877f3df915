package core

import "time"

// This file holds the settlements of a session's items by the holder of the
// session: each does what its plain namesake does (Complete, Release,
// Unlock, Defer, DeadLetter, RenewLock, SetMeta), once it has checked, in
// the same critical section, that holder holds session group of entity k
// (else ESESSIONLOCKLOST: the session's lock ran out, was released, or
// another holder has it now, SS-3) and that item seq is a locked item of
// that session (else ELOCKLOST).

// CompleteHeld removes a locked item of holder's session, as Complete does.
func (e *Engine) CompleteHeld(now time.Time, k EntityKey, group, holder string, seq uint64) (*Commit, error) {
	_, c, err := runHeldItem(e, now, k, group, holder, seq, func(x *item) (none, error) {
		e.removeItem(x)
		return none{}, nil
	})
	return c, err
}

// ReleaseHeld returns a locked item of holder's session to its place
// (abandon), as Release does: it is the next the session hands out.
func (e *Engine) ReleaseHeld(now time.Time, k EntityKey, group, holder string, seq uint64) error {
	_, _, err := runHeldItem(e, now, k, group, holder, seq, func(x *item) (none, error) {
		e.unlockItem(x, e.now)
		return none{}, nil
	})
	return err
}

// UnlockHeld returns a locked item of holder's session to its place
// without counting the delivery, as Unlock does.
func (e *Engine) UnlockHeld(now time.Time, k EntityKey, group, holder string, seq uint64) error {
	_, _, err := runHeldItem(e, now, k, group, holder, seq, func(x *item) (none, error) {
		if x.DeliveryCount > 0 {
			x.DeliveryCount--
		}
		e.unlockItem(x, e.now)
		return none{}, nil
	})
	return err
}

// DeferHeld sets a locked item of holder's session aside, as Defer does;
// TakeDeferredSession takes it back.
func (e *Engine) DeferHeld(now time.Time, k EntityKey, group, holder string, seq uint64) (*Commit, error) {
	_, c, err := runHeldItem(e, now, k, group, holder, seq, func(x *item) (none, error) {
		e.deferItem(x)
		return none{}, nil
	})
	return c, err
}

// DeadLetterHeld dead-letters a locked item of holder's session, as
// DeadLetter does.
func (e *Engine) DeadLetterHeld(now time.Time, k EntityKey, group, holder string, seq uint64, why DeadLetterReason) (*Commit, error) {
	_, c, err := runHeldItem(e, now, k, group, holder, seq, func(x *item) (none, error) {
		e.deadLetter(x, why)
		return none{}, nil
	})
	return c, err
}

// RenewLockHeld renews the lock of a locked item of holder's session. An
// item of a session has no lock of its own, only its session's: this
// renews the session's lock to until, as RenewSession does, and returns
// the item with it.
func (e *Engine) RenewLockHeld(now time.Time, k EntityKey, group, holder string, seq uint64, until time.Time) (Item, error) {
	it, _, err := runHeldItem(e, now, k, group, holder, seq, func(x *item) (Item, error) {
		e.lockSession(itemSession(x), holder, until)
		return x.Item, nil
	})
	return it, err
}

// SetMetaHeld replaces the Meta of a locked item of holder's session, as
// SetMeta does (properties-to-modify before an abandon, defer or
// dead-letter).
func (e *Engine) SetMetaHeld(now time.Time, k EntityKey, group, holder string, seq uint64, meta []byte) (*Commit, error) {
	_, c, err := runHeldItem(e, now, k, group, holder, seq, func(x *item) (none, error) {
		x.Meta = meta
		x.ModifiedAt = e.now
		e.putOp(x.ent, x)
		return none{}, nil
	})
	return c, err
}

// heldItemLocked returns item seq of session group of entity k, once it
// has checked that holder holds the session (else ESESSIONLOCKLOST) and
// that the item is a locked item of it (else ELOCKLOST).
func (e *Engine) heldItemLocked(k EntityKey, group, holder string, seq uint64) (*item, error) {
	s, err := e.heldLocked(k, group, holder)
	if err != nil {
		return nil, err
	}
	x := s.ent.find(seq)
	if x == nil || x.State != Locked || x.Group != group {
		return nil, Errorf(ELOCKLOST, "the lock on item %d of session %q of %q is lost or was never held", seq, group, k.Name)
	}
	return x, nil
}
