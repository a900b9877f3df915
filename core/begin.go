package core

import "time"

// begin takes the engine's lock for a call on entity k and returns it; when
// there is no such entity it releases the lock and returns ENOTFOUND.
// (Being replaced by the operations of op.go.)
func (e *Engine) begin(now time.Time, k EntityKey) (*entity, error) {
	e.lock(now)
	ent, err := e.entityLocked(k)
	if err != nil {
		e.unlock()
		return nil, err
	}
	return ent, nil
}

// beginItem is begin for a call on live item seq of entity k.
func (e *Engine) beginItem(now time.Time, k EntityKey, seq uint64) (*item, error) {
	e.lock(now)
	x, err := e.itemLocked(k, seq)
	if err != nil {
		e.unlock()
		return nil, err
	}
	return x, nil
}

// beginHeld takes the engine's lock for a call by holder on session group
// of entity k, which holder must hold, else ESESSIONLOCKLOST.
func (e *Engine) beginHeld(now time.Time, k EntityKey, group, holder string) (*entity, *session, error) {
	e.lock(now)
	s, err := e.heldLocked(k, group, holder)
	if err != nil {
		e.unlock()
		return nil, nil, err
	}
	return s.ent, s, nil
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
