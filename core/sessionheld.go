package core

import "time"

// Holder is what the holder of a session may do with the items it
// received from that session: settle them, renew their lock (the
// session's) and change their Meta. Each method does what the Engine's
// method of the same name does (Complete, Release, Unlock, Defer,
// DeadLetter, RenewLock, SetMeta), once it has checked, in the same
// critical section, that the holder holds the session (else
// ESESSIONLOCKLOST: the session's lock ran out, was released, or another
// holder has it now, SS-3) and that item seq is a locked item of that
// session (else ELOCKLOST). A Holder is a value: making one takes no lock
// and checks nothing, and it stays valid as long as the Engine.
type Holder struct {
	e      *Engine
	k      EntityKey
	group  string
	holder string
}

// Holder returns the handle of holder on session group of entity k.
func (e *Engine) Holder(k EntityKey, group, holder string) Holder {
	return Holder{e: e, k: k, group: group, holder: holder}
}

// Complete removes a locked item of the session, as Engine.Complete does.
func (h Holder) Complete(now time.Time, seq uint64) (*Commit, error) {
	_, c, err := runHeldItem(h.e, now, h.k, h.group, h.holder, seq, func(x *item) (none, error) {
		h.e.removeItem(x)
		return none{}, nil
	})
	return c, err
}

// Release returns a locked item of the session to its place (abandon), as
// Engine.Release does: it is the next the session hands out.
func (h Holder) Release(now time.Time, seq uint64) error {
	_, _, err := runHeldItem(h.e, now, h.k, h.group, h.holder, seq, func(x *item) (none, error) {
		h.e.unlockItem(x, h.e.now)
		return none{}, nil
	})
	return err
}

// Unlock returns a locked item of the session to its place without
// counting the delivery, as Engine.Unlock does.
func (h Holder) Unlock(now time.Time, seq uint64) error {
	_, _, err := runHeldItem(h.e, now, h.k, h.group, h.holder, seq, func(x *item) (none, error) {
		if x.DeliveryCount > 0 {
			x.DeliveryCount--
		}
		h.e.unlockItem(x, h.e.now)
		return none{}, nil
	})
	return err
}

// Defer sets a locked item of the session aside, as Engine.Defer does;
// TakeDeferredSession takes it back.
func (h Holder) Defer(now time.Time, seq uint64) (*Commit, error) {
	_, c, err := runHeldItem(h.e, now, h.k, h.group, h.holder, seq, func(x *item) (none, error) {
		h.e.deferItem(x)
		return none{}, nil
	})
	return c, err
}

// DeadLetter dead-letters a locked item of the session, as
// Engine.DeadLetter does.
func (h Holder) DeadLetter(now time.Time, seq uint64, why DeadLetterReason) (*Commit, error) {
	_, c, err := runHeldItem(h.e, now, h.k, h.group, h.holder, seq, func(x *item) (none, error) {
		h.e.deadLetter(x, why)
		return none{}, nil
	})
	return c, err
}

// RenewLock renews the lock of a locked item of the session. An item of a
// session has no lock of its own, only its session's: this renews the
// session's lock to until, as RenewSession does, and returns the item
// with it.
func (h Holder) RenewLock(now time.Time, seq uint64, until time.Time) (it Item, err error) {
	_, _, err = runHeldItem(h.e, now, h.k, h.group, h.holder, seq, func(x *item) (none, error) {
		h.e.lockSession(itemSession(x), h.holder, until)
		it = x.Item
		return none{}, nil
	})
	return it, err
}

// SetMeta replaces the Meta of a locked item of the session, as
// Engine.SetMeta does (properties-to-modify before an abandon, defer or
// dead-letter).
func (h Holder) SetMeta(now time.Time, seq uint64, meta []byte) (*Commit, error) {
	_, c, err := runHeldItem(h.e, now, h.k, h.group, h.holder, seq, func(x *item) (none, error) {
		x.Meta = meta
		x.ModifiedAt = h.e.now
		h.e.putOp(x.ent, x)
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
