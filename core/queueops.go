package core

import "time"

// This file holds the calls a broker's queue needs beyond receiving and
// settling one item: its figures without a walk over its items, purge, and
// dropping its head when it is over a length limit.

// Counts returns entity k's counts (without NextDue or the dead-letter
// queue's figures) and its consumer count, in constant time: what a
// queue.declare-ok or basic.get-ok reports.
func (e *Engine) Counts(now time.Time, k EntityKey) (Counts, int, error) {
	n := 0
	c, _, err := runEntity(e, now, k, func(ent *entity) (Counts, error) {
		n = ent.consumers
		return ent.ownCounts(), nil
	})
	return c, n, err
}

// Purge removes every active item of entity k, leaving locked, scheduled
// and deferred ones, and returns how many it removed (RabbitMQ's
// queue.purge, which leaves unacknowledged messages to their consumers).
// Purged items are neither expired nor dead-lettered. The sessions of an
// entity with sessions lose their active items and keep their states
// (SS-4) and holders. PurgeAll removes the other states too.
func (e *Engine) Purge(now time.Time, k EntityKey) (int, *Commit, error) {
	return runEntity(e, now, k, func(ent *entity) (int, error) { return e.purge(ent), nil })
}

// purge is Purge's operation on ent.
func (e *Engine) purge(ent *entity) int {
	n := 0
	for x := e.takeReady(ent); x != nil; x = e.takeReady(ent) {
		e.removeItem(x)
		n++
	}
	// An entity with sessions keeps its active items in its sessions,
	// which keep their states (SS-4): a purge removes messages only.
	var ss []*session
	for _, s := range ent.sessions {
		ss = append(ss, s)
	}
	for _, s := range ss {
		for x := e.takeSessionReady(s); x != nil; x = e.takeSessionReady(s) {
			e.removeItem(x)
			n++
		}
	}
	return n
}

// PurgeAll removes every item of entity k in every state, active,
// scheduled, locked and deferred, and returns how many it removed. A
// locked item's holder then finds its lock lost: settling it is ELOCKLOST,
// as after Remove. Purged items are neither expired nor dead-lettered. The
// sessions of an entity with sessions keep their states (SS-4) and
// holders.
func (e *Engine) PurgeAll(now time.Time, k EntityKey) (int, *Commit, error) {
	return runEntity(e, now, k, func(ent *entity) (int, error) { return e.purgeAll(ent), nil })
}

// purgeAll is PurgeAll's operation on ent.
func (e *Engine) purgeAll(ent *entity) int {
	// Removing tombstones the entity's list as it goes: collect first.
	xs := make([]*item, 0, ent.all.length())
	for i, n := 0, ent.all.length(); i < n; i++ {
		if x := ent.all.at(i); !x.removed {
			xs = append(xs, x)
		}
	}
	for _, x := range xs {
		e.removeItem(x)
	}
	return len(xs)
}

// DropHead removes the head of entity k's active items while there are more
// than maxCount of them or their bodies hold more than maxBytes (a negative
// limit is no limit), handing each to the protocol's DeadLetterFunc with why
// (RabbitMQ's x-max-length with overflow drop-head, reason maxlen). It
// returns how many it removed.
func (e *Engine) DropHead(now time.Time, k EntityKey, maxCount int, maxBytes int64, why DeadLetterReason) (int, *Commit, error) {
	return runEntity(e, now, k, func(ent *entity) (int, error) {
		return e.dropHead(ent, maxCount, maxBytes, why), nil
	})
}

// dropHead is DropHead's operation on ent.
func (e *Engine) dropHead(ent *entity, maxCount int, maxBytes int64, why DeadLetterReason) int {
	n := 0
	for (maxCount >= 0 && ent.counts[Active] > maxCount) || (maxBytes >= 0 && ent.bytes[Active] > maxBytes) {
		x := e.takeReady(ent)
		if x == nil {
			break
		}
		e.deadLetter(x, why)
		n++
	}
	return n
}

// Handoff says what EnqueueHanded does with an item no other waits ahead of.
type Handoff uint8

// The handoffs.
const (
	// HandLocked enqueues the item locked, delivered to a consumer that
	// settles it later (a RabbitMQ delivery to be acked).
	HandLocked Handoff = iota + 1
	// HandTaken hands the item over without keeping it (auto-ack).
	HandTaken
)

// EnqueueHanded enqueues an item for a consumer that is ready for it. When
// entity k has no active item, so none waits ahead of this one, the item
// goes straight to the consumer, as h says, and handed is true: one call
// instead of Enqueue then Receive or Take, and an item with a TTL of 0 is
// delivered rather than expired (RB-4). Otherwise, and always for an
// entity with sessions, it is enqueued as Enqueue does and handed is false.
func (e *Engine) EnqueueHanded(now time.Time, k EntityKey, it Item, h Handoff) (out Item, handed bool, c *Commit, err error) {
	_, c, err = runEntity(e, now, k, func(ent *entity) (none, error) {
		var err error
		out, handed, err = e.enqueueHanded(ent, it, h)
		return none{}, err
	})
	return out, handed, c, err
}

// enqueueHanded is EnqueueHanded's operation on ent.
func (e *Engine) enqueueHanded(ent *entity, it Item, h Handoff) (out Item, handed bool, err error) {
	if ent.Policy.Sessions || readyFront(ent) != nil || it.State != Active || it.Key != "" {
		out, err = e.enqueueLocked(ent, it)
		if err != nil {
			return Item{}, false, err
		}
		e.touch(ent, UseSend)
		return out, false, nil
	}
	e.touch(ent, UseSend)
	e.touch(ent, UseReceive)
	switch h {
	case HandTaken:
		if err := e.admit(ent, &it); err != nil {
			return Item{}, false, err
		}
		ent.LastSeq++
		it.Seq = ent.LastSeq
		it.EnqueuedAt, it.ModifiedAt = e.now, e.now
		it.DeliveryCount++
		ent.stats.Received++
		ent.stats.Delivered++
		return it, true, nil
	default:
		it.State = Locked
		out, err = e.enqueueLocked(ent, it)
		if err != nil {
			return Item{}, false, err
		}
		return out, true, nil
	}
}

// DeadLetterRefused hands an item that entity k refused to take (RabbitMQ's
// x-overflow reject-publish-dlx) straight to the protocol's DeadLetterFunc
// with why, as if it had been enqueued and dead-lettered at once.
func (e *Engine) DeadLetterRefused(now time.Time, k EntityKey, it Item, why DeadLetterReason) (*Commit, error) {
	_, c, err := runEntity(e, now, k, func(ent *entity) (none, error) {
		e.refuseLocked(ent, it, why)
		return none{}, nil
	})
	return c, err
}

// Unlock returns a locked item to its place in entity k as Release does,
// but takes back the delivery it counted: the client gave the item back
// without looking at it (an AMQP 1.0 released outcome for a prefetched
// message), so it must not bring the item closer to a delivery limit.
func (e *Engine) Unlock(now time.Time, k EntityKey, seq uint64) error {
	_, _, err := runLocked(e, now, k, seq, func(x *item) (none, error) {
		if x.DeliveryCount > 0 {
			x.DeliveryCount--
		}
		e.unlockItem(x, e.now)
		return none{}, nil
	})
	return err
}

// SetMeta replaces the Meta of live item seq of entity k, whatever its
// state (Service Bus's properties-to-modify on abandon, defer or
// dead-letter). meta belongs to the engine afterwards.
func (e *Engine) SetMeta(now time.Time, k EntityKey, seq uint64, meta []byte) (*Commit, error) {
	_, c, err := runItem(e, now, k, seq, func(x *item) (none, error) {
		x.Meta = meta
		x.ModifiedAt = e.now
		e.putOp(x.ent, x)
		return none{}, nil
	})
	return c, err
}
