package servicebus

import (
	"context"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// lockedItem finds the item a lock token names and checks that the token's
// lock is still held: the item is locked and was delivered as many times
// as when the token was made. Anything else is a lost lock (SB-7), or, in
// an entity that requires sessions, where a message's lock is its
// session's, a lost session lock (SS-3).
func (s *Server) lockedItem(now time.Time, tok amqp.UUID) (*node, core.Item, error) {
	id, seq, count := parseLockToken(tok)
	s.mu.RLock()
	n := s.byID[id]
	s.mu.RUnlock()
	if n == nil {
		return nil, core.Item{}, errLockLost()
	}
	its, err := s.e.Peek(now, n.key, seq, 1)
	if err != nil || len(its) == 0 || its[0].Seq != seq || its[0].State != core.Locked || its[0].DeliveryCount != count {
		if n.requiresSession() {
			return nil, core.Item{}, errSessionLockLost()
		}
		return nil, core.Item{}, errLockLost()
	}
	return n, its[0], nil
}

func errLockLost() error {
	return core.Errorf(core.ELOCKLOST, "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.")
}

// settleToken settles the message a lock token names: "completed",
// "abandoned", "defered" (sic, as the SDKs spell it) or "suspended"
// (dead-letter), with properties-to-modify. A message of a session is
// settled only by the holder of its session (holder). wait waits for the
// commit.
func (s *Server) settleToken(tok amqp.UUID, holder, op string, props amqp.Map, reason, desc string, wait bool) error {
	now := s.now()
	n, it, err := s.lockedItem(now, tok)
	if err != nil {
		return err
	}
	h := s.held(n, &it, holder)
	if len(props) > 0 && op != "completed" {
		m := readItemMeta(it.Meta)
		if err := m.modify(props); err != nil {
			return err
		}
		if _, err := h.setMeta(now, m.marshal()); err != nil {
			return sessionError(err, it.Group)
		}
	}
	// An abandon and a defer count the delivery: the one that reaches
	// MaxDeliveryCount dead-letters the message instead (for a defer,
	// azure-service-bus issue 375, by design).
	max := n.maxDeliveryCount()
	atLimit := max > 0 && it.DeliveryCount >= uint32(max)
	var c *core.Commit
	switch {
	case op == "completed":
		c, err = h.complete(now)
	case (op == "abandoned" || op == "defered") && atLimit:
		c, err = h.deadLetter(now, maxDeliveryReason(max))
	case op == "abandoned":
		err = h.release(now)
	case op == "defered":
		c, err = h.deferIt(now)
	case op == "suspended":
		c, err = h.deadLetter(now, core.DeadLetterReason{Code: reason, Description: desc})
	default:
		return core.Errorf(core.EINVALID, "The disposition status '%s' is not valid.", op)
	}
	if err != nil {
		return sessionError(err, it.Group)
	}
	if wait && c != nil {
		return c.Wait(context.Background())
	}
	return nil
}

// releaseToken gives a message back without counting the delivery (the
// released outcome of a prefetched message the client never looked at).
func (s *Server) releaseToken(tok amqp.UUID, holder string) error {
	now := s.now()
	n, it, err := s.lockedItem(now, tok)
	if err != nil {
		return err
	}
	return sessionError(s.held(n, &it, holder).unlock(now), it.Group)
}

// renewToken renews the lock a token names, for the node's lock duration;
// a session's message has its session's lock, which this renews.
func (s *Server) renewToken(tok amqp.UUID, holder string) (time.Time, error) {
	now := s.now()
	n, it, err := s.lockedItem(now, tok)
	if err != nil {
		return time.Time{}, err
	}
	got, err := s.held(n, &it, holder).renew(now, now.Add(n.lockDuration()))
	if err != nil {
		return time.Time{}, sessionError(err, it.Group)
	}
	return got.LockedUntil, nil
}

// heldItem is a locked message to settle: in an entity that requires
// sessions through the holder's handle (core.Holder), else the plain ones.
type heldItem struct {
	e       *core.Engine
	k       core.EntityKey
	seq     uint64
	session bool
	group   string
	holder  string
}

func (s *Server) held(n *node, it *core.Item, holder string) heldItem {
	return heldItem{e: s.e, k: n.key, seq: it.Seq, session: n.requiresSession(), group: it.Group, holder: holder}
}

func (h heldItem) complete(now time.Time) (*core.Commit, error) {
	if h.session {
		return h.e.Holder(h.k, h.group, h.holder).Complete(now, h.seq)
	}
	return h.e.Complete(now, h.k, h.seq)
}

func (h heldItem) release(now time.Time) error {
	if h.session {
		return h.e.Holder(h.k, h.group, h.holder).Release(now, h.seq)
	}
	return h.e.Release(now, h.k, h.seq)
}

func (h heldItem) unlock(now time.Time) error {
	if h.session {
		return h.e.Holder(h.k, h.group, h.holder).Unlock(now, h.seq)
	}
	return h.e.Unlock(now, h.k, h.seq)
}

func (h heldItem) deferIt(now time.Time) (*core.Commit, error) {
	if h.session {
		return h.e.Holder(h.k, h.group, h.holder).Defer(now, h.seq)
	}
	return h.e.Defer(now, h.k, h.seq)
}

func (h heldItem) deadLetter(now time.Time, why core.DeadLetterReason) (*core.Commit, error) {
	if h.session {
		return h.e.Holder(h.k, h.group, h.holder).DeadLetter(now, h.seq, why)
	}
	return h.e.DeadLetter(now, h.k, h.seq, why)
}

func (h heldItem) renew(now, until time.Time) (core.Item, error) {
	if h.session {
		return h.e.Holder(h.k, h.group, h.holder).RenewLock(now, h.seq, until)
	}
	return h.e.RenewLock(now, h.k, h.seq, until)
}

func (h heldItem) setMeta(now time.Time, meta []byte) (*core.Commit, error) {
	if h.session {
		return h.e.Holder(h.k, h.group, h.holder).SetMeta(now, h.seq, meta)
	}
	return h.e.SetMeta(now, h.k, h.seq, meta)
}
