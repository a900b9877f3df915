package core

import "time"

// SettleAction is what a Settlement does to its locked item.
type SettleAction uint8

const (
	// SettleComplete removes the item, as Complete does.
	SettleComplete SettleAction = iota + 1
	// SettleRelease gives the item back, as Release does.
	SettleRelease
	// SettleDefer sets the item aside, as Defer does.
	SettleDefer
	// SettleDeadLetter hands the item to its DeadLetterFunc with Why, as
	// DeadLetter does.
	SettleDeadLetter
)

// Settlement is one settlement of a locked item in a Transact.
type Settlement struct {
	// Key and Seq name the item.
	Key EntityKey
	Seq uint64
	// DeliveryCount is the item's delivery count when it was locked: a
	// lock taken again since (the first one lost) is not the one the
	// settlement is for, which is ELOCKLOST.
	DeliveryCount uint32
	// Group and Holder, for an item of an entity with sessions, are its
	// session and the holder that must hold it (SS-3), as for a Holder.
	Group, Holder string
	// Action is what to do with the item.
	Action SettleAction
	// Meta, if not nil, replaces the item's Meta first, as SetMeta does.
	Meta []byte
	// Why is the reason of a SettleDeadLetter.
	Why DeadLetterReason
}

// Transact applies settlements of locked items and stores a batch of new
// items, all in one critical section and with one Commit, or changes
// nothing: it checks every settlement (the item is still locked by the
// same lock, in an entity with sessions by the same holder of its
// session) and every target (as EnqueueBatch does) before it changes
// anything. It is the commit of a Service Bus transaction. It returns the
// items stored as EnqueueBatch does.
func (e *Engine) Transact(now time.Time, ss []Settlement, ts []Target) ([]Item, *Commit, error) {
	return run(e, now, func() ([]Item, error) {
		xs := make([]*item, len(ss))
		type itemKey struct {
			k   EntityKey
			seq uint64
		}
		seen := make(map[itemKey]bool, len(ss))
		for i, s := range ss {
			var x *item
			var err error
			if s.Holder != "" {
				x, err = e.heldItemLocked(s.Key, s.Group, s.Holder, s.Seq)
			} else {
				x, err = e.lockedItem(s.Key, s.Seq)
				if err == nil && x.ent.Policy.Sessions {
					err = errNeedsSession(x.ent)
				}
			}
			if err != nil {
				return nil, err
			}
			if x.DeliveryCount != s.DeliveryCount {
				return nil, Errorf(ELOCKLOST, "the lock on item %d of %q is lost: it was locked again", s.Seq, s.Key.Name)
			}
			if s.Action < SettleComplete || s.Action > SettleDeadLetter {
				return nil, Errorf(EINVALID, "settlement %d has no action", i)
			}
			ik := itemKey{s.Key, s.Seq}
			if seen[ik] {
				return nil, Errorf(ECONFLICT, "item %d of %q is settled twice", s.Seq, s.Key.Name)
			}
			seen[ik] = true
			xs[i] = x
		}
		ents, err := e.checkBatch(ts)
		if err != nil {
			return nil, err
		}
		for i, s := range ss {
			x := xs[i]
			if s.Meta != nil {
				x.Meta = s.Meta
				x.ModifiedAt = e.now
				e.putOp(x.ent, x)
			}
			switch s.Action {
			case SettleComplete:
				e.removeItem(x)
			case SettleRelease:
				e.unlockItem(x, e.now)
			case SettleDefer:
				e.deferItem(x)
			case SettleDeadLetter:
				e.deadLetter(x, s.Why)
			}
		}
		e.written = now
		out := e.enqueueChecked(ts, ents, true)
		e.written = time.Time{}
		for i, t := range ts {
			if ents[i] != nil && t.Refused != nil {
				e.refuseLocked(ents[i], t.Item, *t.Refused)
			}
		}
		return out, nil
	})
}
