package servicebus

import (
	"context"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// lockedItem finds the item a lock token names and checks that the token's
// lock is still held: the item is locked and was delivered as many times
// as when the token was made. Anything else is a lost lock (SB-7).
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
		return nil, core.Item{}, errLockLost()
	}
	return n, its[0], nil
}

func errLockLost() error {
	return core.Errorf(core.ELOCKLOST, "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.")
}

// settleToken settles the message a lock token names: "completed",
// "abandoned", "defered" (sic, as the SDKs spell it) or "suspended"
// (dead-letter), with properties-to-modify. wait waits for the commit.
func (s *Server) settleToken(tok amqp.UUID, op string, props amqp.Map, reason, desc string, wait bool) error {
	now := s.now()
	n, it, err := s.lockedItem(now, tok)
	if err != nil {
		return err
	}
	if len(props) > 0 && op != "completed" {
		m := readItemMeta(it.Meta)
		if err := m.modify(props); err != nil {
			return err
		}
		if _, err := s.e.SetMeta(now, n.key, it.Seq, m.marshal()); err != nil {
			return err
		}
	}
	var c *core.Commit
	switch op {
	case "completed":
		c, err = s.e.Complete(now, n.key, it.Seq)
	case "abandoned":
		if max := n.maxDeliveryCount(); max > 0 && it.DeliveryCount >= uint32(max) {
			c, err = s.e.DeadLetter(now, n.key, it.Seq, maxDeliveryReason(max))
		} else {
			err = s.e.Release(now, n.key, it.Seq)
		}
	case "defered":
		c, err = s.e.Defer(now, n.key, it.Seq)
	case "suspended":
		c, err = s.e.DeadLetter(now, n.key, it.Seq, core.DeadLetterReason{Code: reason, Description: desc})
	default:
		return core.Errorf(core.EINVALID, "The disposition status '%s' is not valid.", op)
	}
	if err != nil {
		return err
	}
	if wait {
		return c.Wait(context.Background())
	}
	return nil
}

// releaseToken gives a message back without counting the delivery (the
// released outcome of a prefetched message the client never looked at).
func (s *Server) releaseToken(tok amqp.UUID) error {
	now := s.now()
	n, it, err := s.lockedItem(now, tok)
	if err != nil {
		return err
	}
	return s.e.Unlock(now, n.key, it.Seq)
}

// renewToken renews the lock a token names, for the node's lock duration.
func (s *Server) renewToken(tok amqp.UUID) (time.Time, error) {
	now := s.now()
	n, it, err := s.lockedItem(now, tok)
	if err != nil {
		return time.Time{}, err
	}
	got, err := s.e.RenewLock(now, n.key, it.Seq, now.Add(n.lockDuration()))
	if err != nil {
		return time.Time{}, err
	}
	return got.LockedUntil, nil
}
