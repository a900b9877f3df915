package core

import "time"

// Resubmit moves dead letter seq of entity k back to the entity it was
// dead-lettered from, as its protocol's Resubmit hook says, in one change:
// the item leaves k and is enqueued in its source as a new item would be,
// active, its TTL counted from now and its due time and rule set by the
// source's policy; consumers waiting on the source are told (the
// Available hook). It returns the source's key.
//
// An unknown entity or item is ENOTFOUND, and so is a source that no
// longer exists; an item that is not a dead letter, or a protocol that
// resubmits nothing, is EINVALID; an item under a lock (a receiver holds
// it) is EPRECONDITION.
func (e *Engine) Resubmit(now time.Time, k EntityKey, seq uint64) (EntityKey, *Commit, error) {
	return runItem(e, now, k, seq, e.resubmitLocked)
}

// ResubmitAll resubmits, as Resubmit does, every item of entity k that
// can go back to its source, all in one change, and returns how many it
// moved. It skips the items it cannot move (an item that is not a dead
// letter, one whose source is gone, one under a lock); when it moved none
// and skipped some, it returns the error of the first it skipped.
func (e *Engine) ResubmitAll(now time.Time, k EntityKey) (int, *Commit, error) {
	// The operation's error is that of a protocol without Resubmit;
	// first, that of the first item skipped, comes with the Commit of
	// what it moved (none).
	var first error
	moved, c, err := runEntity(e, now, k, func(ent *entity) (int, error) {
		if e.protos[k.Protocol].Resubmit == nil {
			return 0, errNoResubmit(k.Protocol)
		}
		// The items are listed first: moving them changes the entity's queues.
		var xs []*item
		for i, n := 0, ent.all.length(); i < n; i++ {
			if x := ent.all.at(i); !x.removed {
				xs = append(xs, x)
			}
		}
		moved := 0
		for _, x := range xs {
			if _, err := e.resubmitLocked(x); err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			moved++
		}
		return moved, nil
	})
	if err != nil {
		return 0, nil, err
	}
	if moved == 0 && first != nil {
		return 0, c, first
	}
	return moved, c, nil
}

func errNoResubmit(protocol string) error {
	return Errorf(EINVALID, "%s has no dead letters to resubmit", protocol)
}

// resubmitLocked moves live item x back to its source; on error nothing
// changed.
func (e *Engine) resubmitLocked(x *item) (EntityKey, error) {
	ent := x.ent
	fn := e.protos[ent.Protocol].Resubmit
	if fn == nil {
		return EntityKey{}, errNoResubmit(ent.Protocol)
	}
	if x.State == Locked {
		return EntityKey{}, Errorf(EPRECONDITION, "item %d of %q is locked by a receiver: resubmit it once it is settled or its lock is released", x.Seq, ent.Name)
	}
	to, out, err := e.callResubmit(fn, ent, x.Item)
	if err != nil {
		return EntityKey{}, err
	}
	tk := EntityKey{Protocol: ent.Protocol, Name: to}
	if to == ent.Name {
		return EntityKey{}, Errorf(EINVALID, "item %d of %q is already in the entity it was dead-lettered from", x.Seq, ent.Name)
	}
	target := e.entities[tk]
	if target == nil {
		return EntityKey{}, Errorf(ENOTFOUND, "item %d of %q cannot be resubmitted: %q, the entity it was dead-lettered from, no longer exists", x.Seq, ent.Name, to)
	}
	in := Item{Key: out.Key, Group: out.Group, Body: out.Body, Meta: out.Meta, TTL: out.TTL,
		Persistent: out.Persistent, DeliveryCount: out.DeliveryCount, State: Active}
	// enqueueLocked checks before it changes anything, so a refusal (a key
	// the source holds already) leaves the dead letter where it is.
	if _, err := e.enqueueLocked(target, in); err != nil {
		return EntityKey{}, err
	}
	e.touch(target, UseSend)
	e.removeItem(x)
	return tk, nil
}
