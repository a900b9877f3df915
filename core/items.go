package core

import "time"

// Enqueue adds an item to entity k and returns it as stored. The caller sets
// Key, Body, Meta, TTL, Persistent and State: Active; Scheduled with
// ScheduledAt (SB-4; a time not after now enqueues at once); or Locked with
// LockedUntil (zero for no lock expiry), for an item handed to a consumer on
// arrival (RB-4). The engine sets Seq, the times, the due time and the rule.
// Body and Meta belong to the engine afterwards: do not modify them.
func (e *Engine) Enqueue(now time.Time, k EntityKey, it Item) (out Item, c *Commit, err error) {
	_, c, err = runEntity(e, now, k, func(ent *entity) (none, error) {
		e.written = now
		w, err := e.enqueueLocked(ent, it)
		e.written = time.Time{}
		if err != nil {
			return none{}, err
		}
		if w.Key != "" {
			e.noteChange(ent, nil, &w, false)
		}
		if w.State == Scheduled {
			e.touch(ent, UseSchedule)
		} else {
			e.touch(ent, UseSend)
		}
		out = w
		return none{}, nil
	})
	return out, c, err
}

func (e *Engine) enqueueLocked(ent *entity, it Item) (Item, error) {
	return e.enqueueAt(ent, it, 0)
}

// enqueueAt is enqueueLocked for an item that replaces one of its key,
// whose row (RowOf) it takes; 0 for none.
func (e *Engine) enqueueAt(ent *entity, it Item, row uint64) (Item, error) {
	if err := enqueueable(ent, it); err != nil {
		return Item{}, err
	}
	if err := e.admit(ent, &it); err != nil {
		return Item{}, err
	}
	x := e.newItem()
	x.Item = Item{
		Key: it.Key, Group: it.Group, Body: it.Body, Meta: it.Meta, TTL: it.TTL, Persistent: it.Persistent,
		State: it.State, ScheduledAt: it.ScheduledAt, LockedUntil: it.LockedUntil,
		DeliveryCount: it.DeliveryCount, Unique: it.Unique,
	}
	now := e.applying()
	switch x.State {
	case Active, Locked:
		x.ScheduledAt = time.Time{}
		x.EnqueuedAt = now
	case Scheduled:
		if x.ScheduledAt.IsZero() {
			return Item{}, Errorf(EINVALID, "a scheduled item needs a scheduled enqueue time")
		}
		if !x.ScheduledAt.After(now) {
			// A time already past (a client's clock behind lapse's) enqueues
			// the message now, as the service does.
			x.State, x.ScheduledAt = Active, time.Time{}
			x.EnqueuedAt = now
		} else {
			x.EnqueuedAt = x.ScheduledAt
		}
	default:
		return Item{}, Errorf(EINVALID, "an item cannot be enqueued in state %s", x.State)
	}
	if x.State == Locked {
		x.DeliveryCount++
		ent.stats.Delivered++
	}
	x.ModifiedAt = now
	if w := e.written; ent.Policy.Base == FromModified && e.at.IsZero() && !w.IsZero() && w.Before(now) {
		// An advance ran between the caller's reading of the clock and
		// its call: the item was written at the caller's instant, which
		// its body may already show (a Cosmos _ts), and its TTL counts
		// from there (CO-1); one that ran out since expires at once.
		x.ModifiedAt = w
	}
	ent.LastSeq++
	x.Seq, x.Row = ent.LastSeq, row
	computeDue(ent, x)
	e.add(ent, x)
	ent.stats.Received++
	e.putOp(ent, x)
	out := x.Item // makeRoom may drop x itself and reuse it
	if ent.Policy.Overflow == DropHead {
		e.makeRoom(ent)
	}
	return out, nil
}

// RowOf is the row an item of Seq seq and Row row is kept at (Item.Row):
// row, or seq when row is 0.
func RowOf(seq, row uint64) uint64 {
	if row != 0 {
		return row
	}
	return seq
}

// Receive hands out the head of entity k locked until lockUntil (zero: until
// its holder settles it) and counts a delivery. found is false when no item
// is available. Expired items are never handed out (SB-6, RB-3). An entity
// with sessions is EPRECONDITION: ReceiveSession serves it.
func (e *Engine) Receive(now time.Time, k EntityKey, lockUntil time.Time) (it Item, found bool, err error) {
	_, _, err = runEntity(e, now, k, func(ent *entity) (none, error) {
		if ent.Policy.Sessions {
			return none{}, errNeedsSession(ent)
		}
		e.touch(ent, UseReceive)
		x := e.takeReady(ent)
		if x == nil {
			return none{}, nil
		}
		e.lockItem(x, lockUntil)
		if ent.Policy.HeadOnly {
			e.armHead(ent)
		}
		it, found = x.Item, true
		return none{}, nil
	})
	return it, found, err
}

// Take removes and returns the head of entity k (receive-and-delete,
// auto-ack), counting a delivery. An entity with sessions is
// EPRECONDITION: TakeSession serves it.
func (e *Engine) Take(now time.Time, k EntityKey) (it Item, found bool, c *Commit, err error) {
	_, c, err = runEntity(e, now, k, func(ent *entity) (none, error) {
		if ent.Policy.Sessions {
			return none{}, errNeedsSession(ent)
		}
		e.touch(ent, UseReceive)
		x := e.takeReady(ent)
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

// lockItem hands an item out locked until until, counting a delivery.
func (e *Engine) lockItem(x *item, until time.Time) {
	e.setState(x, Locked)
	x.LockedUntil = until
	x.DeliveryCount++
	x.ent.stats.Delivered++
	e.armLock(x)
}

// itemLocked returns live item seq of entity k, or ENOTFOUND.
func (e *Engine) itemLocked(k EntityKey, seq uint64) (*item, error) {
	ent, err := e.entityLocked(k)
	if err != nil {
		return nil, err
	}
	x := ent.find(seq)
	if x == nil {
		return nil, Errorf(ENOTFOUND, "item %d of %q not found", seq, k.Name)
	}
	return x, nil
}

// lockedItem returns item seq of entity k if it is locked, else ELOCKLOST.
func (e *Engine) lockedItem(k EntityKey, seq uint64) (*item, error) {
	ent, err := e.entityLocked(k)
	if err != nil {
		return nil, err
	}
	x := ent.find(seq)
	if x == nil || x.State != Locked {
		return nil, Errorf(ELOCKLOST, "the lock on item %d of %q is lost or was never held", seq, k.Name)
	}
	return x, nil
}

// Complete removes a locked item: it is gone and never dead-lettered, even
// if its expiry passed while it was locked (SB-7).
func (e *Engine) Complete(now time.Time, k EntityKey, seq uint64) (*Commit, error) {
	_, c, err := runLocked(e, now, k, seq, func(x *item) (none, error) {
		e.removeItem(x)
		return none{}, nil
	})
	return c, err
}

// Release returns a locked item to its place in entity k (abandon, requeue),
// keeping its original expiry (RB-6); one whose expiry passed expires at
// once (SB-7), at the head for head-only entities (RB-7).
func (e *Engine) Release(now time.Time, k EntityKey, seq uint64) error {
	_, _, err := runLocked(e, now, k, seq, func(x *item) (none, error) {
		e.unlockItem(x, e.now)
		return none{}, nil
	})
	return err
}

// RenewLock extends a locked item's lock to until. An item of a session
// has its session's lock: EPRECONDITION, Holder.RenewLock renews that.
func (e *Engine) RenewLock(now time.Time, k EntityKey, seq uint64, until time.Time) (it Item, err error) {
	_, _, err = runLocked(e, now, k, seq, func(x *item) (none, error) {
		if x.ent.Policy.Sessions {
			// Its lock is its session's: Holder.RenewLock renews that.
			return none{}, errNeedsSession(x.ent)
		}
		x.LockedUntil = until
		e.timers.remove(&x.t)
		e.armLock(x)
		it = x.Item
		return none{}, nil
	})
	return it, err
}

// Defer sets a locked item aside: it never expires on its own and is only
// reachable by TakeDeferred (SB-9).
func (e *Engine) Defer(now time.Time, k EntityKey, seq uint64) (*Commit, error) {
	_, c, err := runLocked(e, now, k, seq, func(x *item) (none, error) {
		e.deferItem(x)
		return none{}, nil
	})
	return c, err
}

// deferItem sets locked item x aside (SB-9).
func (e *Engine) deferItem(x *item) {
	x.fromDeferred = false
	e.setState(x, Deferred)
	x.LockedUntil = time.Time{}
	e.putOp(x.ent, x)
}

// TakeDeferred hands out deferred item seq locked until lockUntil. A deferred
// item whose expiry passed is dead-lettered or dropped by its entity's policy
// and not returned (SB-9); found is false then, and when there is no such
// deferred item. An entity with sessions is EPRECONDITION:
// TakeDeferredSession serves it.
func (e *Engine) TakeDeferred(now time.Time, k EntityKey, seq uint64, lockUntil time.Time) (it Item, found bool, c *Commit, err error) {
	_, c, err = runEntity(e, now, k, func(ent *entity) (none, error) {
		if ent.Policy.Sessions {
			return none{}, errNeedsSession(ent)
		}
		x := e.deferredToTake(ent, seq, "")
		if x == nil {
			return none{}, nil
		}
		e.lockItem(x, lockUntil)
		x.fromDeferred = true
		it, found = x.Item, true
		return none{}, nil
	})
	return it, found, c, err
}

// deferredToTake is the shared part of TakeDeferred and
// TakeDeferredSession, with the engine's lock held: it counts a receive of
// ent and returns its deferred item seq (in an entity with sessions, of
// session group), or nil when there is none or it has expired, which it then dead-letters or drops by the
// entity's rule for deferred items, or for expiry (SB-9).
func (e *Engine) deferredToTake(ent *entity, seq uint64, group string) *item {
	e.touch(ent, UseReceive)
	x := ent.find(seq)
	if x == nil || x.State != Deferred || ent.Policy.Sessions && x.Group != group {
		return nil
	}
	if x.Expired(e.now) {
		rule := ent.Policy.Rules.Deferred
		if rule == "" {
			rule = ent.Policy.Rules.Expire
		}
		e.expire(x, e.now, rule)
		return nil
	}
	return x
}

// DeadLetter removes item seq of entity k and hands it to the protocol's
// DeadLetterFunc (a rejected message, a dead-letter settlement, maxlen,
// MaxDeliveryCount), recording an event with why's rule.
func (e *Engine) DeadLetter(now time.Time, k EntityKey, seq uint64, why DeadLetterReason) (*Commit, error) {
	_, c, err := runItem(e, now, k, seq, func(x *item) (none, error) {
		e.deadLetter(x, why)
		return none{}, nil
	})
	return c, err
}

// deadLetter removes live item x and hands it to its protocol's
// DeadLetterFunc, recording an event with why's rule.
func (e *Engine) deadLetter(x *item, why DeadLetterReason) {
	ent := x.ent
	e.removeItem(x)
	e.events.record(Event{Time: e.now, Due: x.DueAt, Protocol: ent.Protocol, Entity: ent.Name,
		Item: x.Seq, ItemKey: x.Key, Rule: why.Rule, Action: ActionDeadLettered},
		explanation{kind: explainDeadLetter, text: why.Code + ": " + why.Description})
	if fn := e.protos[ent.Protocol].DeadLetter; fn != nil {
		e.handOver(fn, ent, x, why)
	} else {
		ent.stats.DeadLettered++
	}
}

// Remove deletes item seq of entity k in whatever state it is (cancel a
// scheduled message, delete a document).
func (e *Engine) Remove(now time.Time, k EntityKey, seq uint64) (*Commit, error) {
	_, c, err := runItem(e, now, k, seq, func(x *item) (none, error) {
		if x.State == Scheduled {
			e.touch(x.ent, UseSchedule)
		}
		e.removeItem(x)
		return none{}, nil
	})
	return c, err
}

// Peek returns up to max live items of entity k from sequence number from
// on, in every state, without locking them (browse).
func (e *Engine) Peek(now time.Time, k EntityKey, from uint64, max int) ([]Item, error) {
	out, _, err := runEntity(e, now, k, func(ent *entity) ([]Item, error) {
		e.touch(ent, UseBrowse)
		var out []Item
		for i, n := ent.all.search(from), ent.all.length(); i < n && len(out) < max; i++ {
			if x := ent.all.at(i); !x.removed {
				out = append(out, x.Item)
			}
		}
		return out, nil
	})
	return out, err
}

// Get returns the item of entity k with key key, if it is there and not
// expired (CO-6).
func (e *Engine) Get(now time.Time, k EntityKey, key string) (it Item, found bool, err error) {
	_, _, err = runEntity(e, now, k, func(ent *entity) (none, error) {
		x := ent.keys[key]
		if x == nil {
			return none{}, nil
		}
		it, found = x.Item, true
		return none{}, nil
	})
	return it, found, err
}

// Put writes the item with it.Key in entity k, replacing one of that key if
// there is one. The written item gets a new Seq and ModifiedAt = now, so its
// TTL restarts (CO-1) and Seq order is modification order.
func (e *Engine) Put(now time.Time, k EntityKey, it Item) (out Item, c *Commit, err error) {
	if it.Key == "" {
		return Item{}, nil, Errorf(EINVALID, "Put needs an item key")
	}
	_, c, err = runEntity(e, now, k, func(ent *entity) (none, error) {
		if ent.uniqueHolder(&it) != nil {
			return none{}, errUnique(ent, it.Key) // before the old item goes
		}
		var row uint64
		if old := ent.keys[it.Key]; old != nil {
			row = RowOf(old.Seq, old.Row)
			e.removeItem(old)
		}
		it.State = Active
		w, err := e.enqueueAt(ent, it, row)
		if err != nil {
			return none{}, err
		}
		e.touch(ent, UseSend)
		out = w
		return none{}, nil
	})
	return out, c, err
}

// Write removes the items with keys remove and writes the keyed items put
// (each replacing the item of its key, as Put does) in entity k, as one
// change: the store commits all of it or none (a transactional batch).
// A key in remove that is not there is skipped.
func (e *Engine) Write(now time.Time, k EntityKey, remove []string, put []Item) ([]Item, *Commit, error) {
	for _, it := range put {
		if it.Key == "" {
			return nil, nil, Errorf(EINVALID, "Write needs item keys")
		}
	}
	return e.Change(now, k, func(func(string) (Item, bool)) ([]string, []Item, error) {
		return remove, put, nil
	})
}

// RemoveKey deletes the item with key key from entity k.
func (e *Engine) RemoveKey(now time.Time, k EntityKey, key string) (*Commit, error) {
	_, c, err := runEntity(e, now, k, func(ent *entity) (none, error) {
		x := ent.keys[key]
		if x == nil {
			return none{}, Errorf(ENOTFOUND, "item %q of %q not found", key, k.Name)
		}
		e.noteChange(ent, &x.Item, nil, false)
		e.removeItem(x)
		return none{}, nil
	})
	return c, err
}

// Scan calls fn for each live item of entity k with Seq >= from, in Seq
// order, until fn returns false. fn runs inside the engine's lock: it must
// be quick and must not call the engine.
func (e *Engine) Scan(now time.Time, k EntityKey, from uint64, fn func(*Item) bool) error {
	_, _, err := runEntity(e, now, k, func(ent *entity) (none, error) {
		for i, n := ent.all.search(from), ent.all.length(); i < n; i++ {
			if x := ent.all.at(i); !x.removed && !fn(&x.Item) {
				break
			}
		}
		return none{}, nil
	})
	return err
}

// ScanGroup calls fn for each live item of entity k in group group, in Seq
// order, until fn returns false, without walking the entity's other items.
// fn runs inside the engine's lock, as for Scan.
func (e *Engine) ScanGroup(now time.Time, k EntityKey, group string, fn func(*Item) bool) error {
	_, _, err := runEntity(e, now, k, func(ent *entity) (none, error) {
		g := ent.groupQueue(group)
		if g == nil {
			return none{}, nil
		}
		for i, n := 0, g.length(); i < n; i++ {
			if x := g.at(i); !x.removed && !fn(&x.Item) {
				break
			}
		}
		return none{}, nil
	})
	return err
}

// Items returns up to limit items of entity k (0 for all) in Seq order, each
// with the reason its expiry is what it is.
func (e *Engine) Items(now time.Time, k EntityKey, limit int) ([]Item, error) {
	out, _, err := runEntity(e, now, k, func(ent *entity) ([]Item, error) {
		var out []Item
		for i, n := 0, ent.all.length(); i < n && (limit <= 0 || len(out) < limit); i++ {
			x := ent.all.at(i)
			if x.removed {
				continue
			}
			it := x.Item
			it.Reason = ent.reason(x)
			out = append(out, it)
		}
		return out, nil
	})
	return out, err
}
