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
	return nil, Errorf(EUNAVAILABLE, "not implemented yet")
}

// ReleaseHeld returns a locked item of holder's session to its place
// (abandon), as Release does: it is the next the session hands out.
func (e *Engine) ReleaseHeld(now time.Time, k EntityKey, group, holder string, seq uint64) error {
	return Errorf(EUNAVAILABLE, "not implemented yet")
}

// UnlockHeld returns a locked item of holder's session to its place
// without counting the delivery, as Unlock does.
func (e *Engine) UnlockHeld(now time.Time, k EntityKey, group, holder string, seq uint64) error {
	return Errorf(EUNAVAILABLE, "not implemented yet")
}

// DeferHeld sets a locked item of holder's session aside, as Defer does;
// TakeDeferredSession takes it back.
func (e *Engine) DeferHeld(now time.Time, k EntityKey, group, holder string, seq uint64) (*Commit, error) {
	return nil, Errorf(EUNAVAILABLE, "not implemented yet")
}

// DeadLetterHeld dead-letters a locked item of holder's session, as
// DeadLetter does.
func (e *Engine) DeadLetterHeld(now time.Time, k EntityKey, group, holder string, seq uint64, why DeadLetterReason) (*Commit, error) {
	return nil, Errorf(EUNAVAILABLE, "not implemented yet")
}

// RenewLockHeld renews the lock of a locked item of holder's session. An
// item of a session has no lock of its own, only its session's: this
// renews the session's lock to until, as RenewSession does, and returns
// the item with it.
func (e *Engine) RenewLockHeld(now time.Time, k EntityKey, group, holder string, seq uint64, until time.Time) (Item, error) {
	return Item{}, Errorf(EUNAVAILABLE, "not implemented yet")
}

// SetMetaHeld replaces the Meta of a locked item of holder's session, as
// SetMeta does (properties-to-modify before an abandon, defer or
// dead-letter).
func (e *Engine) SetMetaHeld(now time.Time, k EntityKey, group, holder string, seq uint64, meta []byte) (*Commit, error) {
	return nil, Errorf(EUNAVAILABLE, "not implemented yet")
}
