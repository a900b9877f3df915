package core

import (
	"slices"
	"strings"
	"time"
)

// This file holds the sessions of an entity with Policy.Sessions (Service
// Bus sessions): a session is the set of an entity's items with one Group,
// its session id. A receiver, named by an opaque holder id its front-end
// chooses (one per receiver link), accepts one session and holds its lock:
// it alone gets the session's items, in Seq order (SS-1), until it releases
// the session or the lock runs out (SS-2, SS-3). A session also keeps a
// state, durable until cleared (SS-4). Everything else an item does, it does
// inside its session too: TTL and dead-lettering, scheduling, deferral
// (SS-5).

// SessionInfo is one session of an entity, for the front-end and for people
// (Sessions).
type SessionInfo struct {
	// ID is the session id, the Group of its items.
	ID string `json:"id"`
	// Holder is the holder of the session's lock, "" when it is free.
	Holder string `json:"holder,omitempty"`
	// LockedUntil is when the lock runs out; zero when free, or for a lock
	// without expiry.
	LockedUntil time.Time `json:"lockedUntil,omitzero"`
	// HasState is true when the session keeps a state (SS-4), StateSize
	// its length.
	HasState  bool `json:"hasState"`
	StateSize int  `json:"stateSize"`
	// Counts are the session's items by state (InDeadLetterQueue is 0:
	// dead letters leave their session).
	Counts Counts `json:"counts"`
}

// AcceptSession gives holder the lock of session group of entity k until
// lockUntil (zero: until released), or, when group is "", of the next
// session that is free and has an available item, in the order sessions
// became so. A named session need not have items yet (a reply's session is
// accepted before the reply arrives). Accepting a session the holder holds
// already renews it. It counts as a receive (UseReceive).
//
// Errors: ENOTFOUND for no entity k; EPRECONDITION when k has no sessions;
// EINVALID for an empty holder; ERESOURCELOCKED when another holder holds
// the session; ENOSESSION when group is "" and no session is available.
func (e *Engine) AcceptSession(now time.Time, k EntityKey, group, holder string, lockUntil time.Time) (SessionInfo, error) {
	info, _, err := runSessions(e, now, k, func(ent *entity) (SessionInfo, error) {
		if holder == "" {
			return SessionInfo{}, Errorf(EINVALID, "a session needs a holder")
		}
		var s *session
		if group == "" {
			if s = ent.avail.head; s == nil {
				return SessionInfo{}, Errorf(ENOSESSION, "no session of %q is available", k.Name)
			}
		} else {
			s = e.sessionFor(ent, group)
			if s.holder != "" && s.holder != holder {
				return SessionInfo{}, Errorf(ERESOURCELOCKED, "session %q of %q is locked by another receiver", group, k.Name)
			}
		}
		e.lockSession(s, holder, lockUntil)
		e.touch(ent, UseReceive)
		return s.info(), nil
	})
	return info, err
}

// RenewSession extends holder's lock on session group of entity k to until
// (SS-2), and the locks of the session's locked items with it: they are
// the session's lock. ESESSIONLOCKLOST when holder does not hold it.
func (e *Engine) RenewSession(now time.Time, k EntityKey, group, holder string, until time.Time) (SessionInfo, error) {
	info, _, err := runHeld(e, now, k, group, holder, func(s *session) (SessionInfo, error) {
		e.lockSession(s, holder, until)
		return s.info(), nil
	})
	return info, err
}

// ReleaseSession ends holder's lock on session group of entity k: the
// holder closed its receiver. The session is free again, and the items it
// held locked are available again at once, in their places, with their
// delivery counted back: the service counts a delivery of a session's
// message when the session lock runs out, not when the session is closed
// (SS-3). An item whose expiry passed while it was locked expires then
// (SB-7). Releasing a session the holder does not hold (any more) does
// nothing.
func (e *Engine) ReleaseSession(now time.Time, k EntityKey, group, holder string) error {
	_, _, err := runSessions(e, now, k, func(ent *entity) (none, error) {
		if s := ent.sessions[group]; s != nil && holder != "" && s.holder == holder {
			e.freeSession(s, false, e.now)
		}
		return none{}, nil
	})
	return err
}

// ReceiveSession hands out the next available item of session group of
// entity k, in Seq order (SS-1), locked under the session's lock: its
// LockedUntil is the session's, and moves with it. found is false when the
// session has no available item. ESESSIONLOCKLOST when holder does not
// hold the session. It counts a delivery and a receive (UseReceive).
func (e *Engine) ReceiveSession(now time.Time, k EntityKey, group, holder string) (it Item, found bool, err error) {
	_, _, err = runHeld(e, now, k, group, holder, func(s *session) (none, error) {
		e.touch(s.ent, UseReceive)
		x := e.takeSessionReady(s)
		if x == nil {
			return none{}, nil
		}
		e.lockSessionItem(s, x)
		it, found = x.Item, true
		return none{}, nil
	})
	return it, found, err
}

// TakeSession removes and returns the next available item of session group
// of entity k (receive-and-delete), as ReceiveSession finds it.
func (e *Engine) TakeSession(now time.Time, k EntityKey, group, holder string) (it Item, found bool, c *Commit, err error) {
	_, c, err = runHeld(e, now, k, group, holder, func(s *session) (none, error) {
		ent := s.ent
		e.touch(ent, UseReceive)
		x := e.takeSessionReady(s)
		if x == nil {
			return none{}, nil
		}
		x.DeliveryCount++
		ent.stats.Delivered++
		e.removeItem(x)
		it, found = x.Item, true
		return none{}, nil
	})
	return it, found, c, err
}

// TakeDeferredSession hands out deferred item seq of session group of
// entity k locked under the session's lock, as TakeDeferred does (SB-9):
// an expired one is dead-lettered or dropped and not returned. found is
// false when the session has no such deferred item. ESESSIONLOCKLOST when
// holder does not hold the session.
func (e *Engine) TakeDeferredSession(now time.Time, k EntityKey, group, holder string, seq uint64) (it Item, found bool, c *Commit, err error) {
	_, c, err = runHeld(e, now, k, group, holder, func(s *session) (none, error) {
		x := e.deferredToTake(s.ent, seq, group)
		if x == nil {
			return none{}, nil
		}
		e.lockSessionItem(s, x)
		x.fromDeferred = true
		it, found = x.Item, true
		return none{}, nil
	})
	return it, found, c, err
}

// PeekSession returns up to max live items of session group of entity k
// from sequence number from on, in every state, without locking them
// (browse). It needs no lock on the session.
func (e *Engine) PeekSession(now time.Time, k EntityKey, group string, from uint64, max int) ([]Item, error) {
	out, _, err := runSessions(e, now, k, func(ent *entity) ([]Item, error) {
		e.touch(ent, UseBrowse)
		g := ent.groupQueue(group)
		if g == nil {
			return nil, nil
		}
		var out []Item
		for i, n := g.search(from), g.length(); i < n && len(out) < max; i++ {
			if x := g.at(i); !x.removed {
				out = append(out, x.Item)
			}
		}
		return out, nil
	})
	return out, err
}

// GetSessionState returns the state of session group of entity k (SS-4):
// nil when it has none, non-nil (maybe empty) when it has one. The caller
// must not modify it. ESESSIONLOCKLOST when holder does not hold the
// session.
func (e *Engine) GetSessionState(now time.Time, k EntityKey, group, holder string) ([]byte, error) {
	state, _, err := runHeld(e, now, k, group, holder, func(s *session) ([]byte, error) {
		if !s.hasState {
			return nil, nil
		}
		if s.state == nil {
			return []byte{}, nil
		}
		return s.state, nil
	})
	return state, err
}

// SetSessionState sets the state of session group of entity k (SS-4); nil
// clears it. It is kept in the Store for a durable entity, and outlives
// the session's lock and items. state belongs to the engine afterwards.
// ESESSIONLOCKLOST when holder does not hold the session.
func (e *Engine) SetSessionState(now time.Time, k EntityKey, group, holder string, state []byte) (*Commit, error) {
	_, c, err := runHeld(e, now, k, group, holder, func(s *session) (none, error) {
		ent := s.ent
		s.state, s.hasState = state, state != nil
		if ent.Durable {
			if state != nil {
				e.ops = append(e.ops, Op{Kind: OpPutSessionState, Key: ent.EntityKey, Group: group, State: state})
			} else {
				e.ops = append(e.ops, Op{Kind: OpDeleteSessionState, Key: ent.EntityKey, Group: group})
			}
		}
		return none{}, nil
	})
	return c, err
}

// Sessions returns the sessions of entity k, ordered by id: those with
// items, a holder or a state. It takes time in the number of sessions, not
// of items. EPRECONDITION when k has no sessions.
func (e *Engine) Sessions(now time.Time, k EntityKey) ([]SessionInfo, error) {
	out, _, err := runSessions(e, now, k, func(ent *entity) ([]SessionInfo, error) {
		out := make([]SessionInfo, 0, len(ent.sessions))
		for _, s := range ent.sessions {
			out = append(out, s.info())
		}
		slices.SortFunc(out, func(a, b SessionInfo) int { return strings.Compare(a.ID, b.ID) })
		return out, nil
	})
	return out, err
}

// loadSessionState is Recover's callback for a stored session state.
func (e *Engine) loadSessionState(k EntityKey, st SessionState) error {
	ent := e.entities[k]
	if ent == nil {
		return Errorf(EINTERNAL, "store holds the state of session %q of unknown entity %s", st.Group, k)
	}
	s := e.sessionFor(ent, st.Group)
	s.state, s.hasState = st.State, true
	return nil
}

// sessionsLocked returns entity k, which must have sessions: ENOTFOUND
// when there is none, EPRECONDITION when it has no sessions.
func (e *Engine) sessionsLocked(k EntityKey) (*entity, error) {
	ent, err := e.entityLocked(k)
	if err != nil {
		return nil, err
	}
	if !ent.Policy.Sessions {
		return nil, errNoSessions(ent)
	}
	return ent, nil
}

// heldLocked is sessionsLocked for a call by holder on session group,
// which holder must hold, else ESESSIONLOCKLOST; it returns the session.
func (e *Engine) heldLocked(k EntityKey, group, holder string) (*session, error) {
	ent, err := e.sessionsLocked(k)
	if err != nil {
		return nil, err
	}
	return heldSession(ent, group, holder)
}

// heldSession returns session group of ent if holder holds it, else
// ESESSIONLOCKLOST.
func heldSession(ent *entity, group, holder string) (*session, error) {
	s := ent.sessions[group]
	if s == nil || holder == "" || s.holder != holder {
		return nil, Errorf(ESESSIONLOCKLOST, "the lock on session %q of %q is lost: it ran out, was released, or is held by another receiver", group, ent.Name)
	}
	return s, nil
}

func errNoSessions(ent *entity) error {
	return Errorf(EPRECONDITION, "%s %q has no sessions", kindOrEntity(ent.Kind), ent.Name)
}

func errNeedsSession(ent *entity) error {
	return Errorf(EPRECONDITION, "%s %q requires sessions: accept a session to receive from it", kindOrEntity(ent.Kind), ent.Name)
}
