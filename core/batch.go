package core

import "time"

// Target is one item of a batch and the entity it goes to (EnqueueBatch).
type Target struct {
	// Key is the entity the item goes to.
	Key EntityKey
	// Item is the item, set as for Enqueue.
	Item Item
	// IfExists skips the target when entity Key does not exist (a copy for
	// a subscription deleted since the caller planned the batch); without
	// it the batch is ENOTFOUND.
	IfExists bool
	// Refused, if set, says entity Key refuses the item: it is handed
	// straight to the protocol's DeadLetterFunc with this reason, as
	// DeadLetterRefused does, instead of being enqueued.
	Refused *DeadLetterReason
	// SeqFrom, if set, numbers the item in that entity (a topic, for the
	// copies of its message in its subscriptions) rather than in entity
	// Key: the items of the batch with the same SeqFrom and Share take
	// one Seq, the next of entity SeqFrom, which becomes its LastSeq, and
	// higher than the LastSeq of each of their entities, which follow it.
	// One whose entity already took that Seq (a second copy in one
	// entity) takes its entity's next.
	SeqFrom EntityKey
	Share   int
}

// EnqueueBatch stores a batch of items, each in its own entity, whole or
// not at all: it checks every target first (the entity exists, the item
// can be enqueued there, no two items take one key) and changes nothing
// when one is refused; otherwise it enqueues them all, in order, then
// hands the Refused to the DeadLetterFunc, with one Commit. It returns the
// items as stored, in the order of ts; a skipped or refused target's is
// the zero Item. Bodies and Metas belong to the engine afterwards, as for
// Enqueue.
func (e *Engine) EnqueueBatch(now time.Time, ts []Target) ([]Item, *Commit, error) {
	return run(e, now, func() ([]Item, error) {
		ents, err := e.checkBatch(ts)
		if err != nil {
			return nil, err
		}
		e.written = now
		out := e.enqueueChecked(ts, ents, true)
		e.written = time.Time{}
		// The refused go last: what their DeadLetterFunc enqueues cannot
		// stand in the way of an item checked above.
		for i, t := range ts {
			if ents[i] != nil && t.Refused != nil {
				e.refuseLocked(ents[i], t.Item, *t.Refused)
			}
		}
		return out, nil
	})
}

// checkBatch returns the entity of each target of a batch (nil for one
// skipped), or the first refusal of a target.
func (e *Engine) checkBatch(ts []Target) ([]*entity, error) {
	ents := make([]*entity, len(ts))
	var keys map[EntityKey]map[string]bool   // the keys the batch takes
	var values map[EntityKey]map[string]bool // the unique values the batch takes
	type room struct {
		n    int
		size int64
	}
	var rooms map[*entity]*room // what the batch adds to a capped entity that refuses new items
	for i, t := range ts {
		ent := e.entities[t.Key]
		if ent == nil {
			if t.IfExists {
				continue
			}
			return nil, Errorf(ENOTFOUND, "entity %q not found", t.Key.Name)
		}
		if t.SeqFrom != (EntityKey{}) && e.entities[t.SeqFrom] == nil {
			if t.IfExists {
				continue
			}
			return nil, Errorf(ENOTFOUND, "entity %q not found", t.SeqFrom.Name)
		}
		ents[i] = ent
		if t.Refused != nil {
			continue
		}
		if err := enqueueable(ent, t.Item); err != nil {
			return nil, err
		}
		if p := &ent.Policy; p.limited() && p.Overflow != DropHead && t.Item.State != Scheduled {
			// A batch is refused whole, as one enqueue is (admit).
			if rooms == nil {
				rooms = map[*entity]*room{}
			}
			r := rooms[ent]
			if r == nil {
				r = &room{}
				rooms[ent] = r
			}
			r.n++
			r.size += int64(len(t.Item.Body))
			if ent.overLimit(r.n, r.size) {
				return nil, Errorf(EFULL, "%s %q is full (%s items, %s bytes at most): it refuses the batch",
					kindOrEntity(ent.Kind), ent.Name, p.MaxItems, p.MaxBytes)
			}
		}
		if k := t.Item.Key; k != "" {
			if keys[t.Key][k] {
				return nil, Errorf(ECONFLICT, "two items of the batch have key %q in %q", k, ent.Name)
			}
			if keys == nil {
				keys = map[EntityKey]map[string]bool{}
			}
			if keys[t.Key] == nil {
				keys[t.Key] = map[string]bool{}
			}
			keys[t.Key][k] = true
			for _, u := range t.Item.Unique {
				if values[t.Key][u] {
					return nil, errUnique(ent, k)
				}
				if values == nil {
					values = map[EntityKey]map[string]bool{}
				}
				if values[t.Key] == nil {
					values[t.Key] = map[string]bool{}
				}
				values[t.Key][u] = true
			}
		}
	}
	return ents, nil
}

// shareKey names the items of a batch that share one Seq (Target.SeqFrom).
type shareKey struct {
	from  EntityKey
	share int
}

// shareSeq makes entity ents[i] give target i the Seq it shares, taken
// from entity ts[i].SeqFrom when target i is the first of its share.
func (e *Engine) shareSeq(ts []Target, ents []*entity, i int, nums map[shareKey]uint64) {
	sk := shareKey{ts[i].SeqFrom, ts[i].Share}
	n, ok := nums[sk]
	if !ok {
		from := e.entities[sk.from]
		n = from.LastSeq
		for j := i; j < len(ts); j++ {
			if ents[j] != nil && ts[j].Refused == nil && ts[j].SeqFrom == sk.from && ts[j].Share == sk.share {
				n = max(n, ents[j].LastSeq)
			}
		}
		n++
		from.LastSeq = n
		nums[sk] = n
	}
	if ent := ents[i]; ent.LastSeq < n {
		ent.LastSeq = n - 1 // enqueueLocked gives the item LastSeq+1
	}
}

// ReserveSeq takes the next Seq of entity k without an item, and returns
// it: a number that no item of k will take (a topic's number for a
// message that no subscription took).
func (e *Engine) ReserveSeq(now time.Time, k EntityKey) (uint64, *Commit, error) {
	return runEntity(e, now, k, func(ent *entity) (uint64, error) {
		ent.LastSeq++
		e.entityOp(ent)
		return ent.LastSeq, nil
	})
}

// enqueueable returns why entity ent refuses item it, or nil when
// enqueueLocked takes it.
func enqueueable(ent *entity, it Item) error {
	if it.Key != "" && ent.keys[it.Key] != nil {
		return Errorf(ECONFLICT, "an item with key %q already exists in %q", it.Key, ent.Name)
	}
	if it.Key != "" && ent.uniqueHolder(&it) != nil {
		return errUnique(ent, it.Key)
	}
	if ent.Policy.Sessions {
		if it.Group == "" {
			return Errorf(EINVALID, "%s %q requires sessions: an item needs a session id (Group)", kindOrEntity(ent.Kind), ent.Name)
		}
		if it.State == Locked {
			return Errorf(EINVALID, "an item cannot be enqueued locked in %q, which has sessions: accept its session", ent.Name)
		}
	}
	switch it.State {
	case Active, Locked:
	case Scheduled:
		if it.ScheduledAt.IsZero() {
			return Errorf(EINVALID, "a scheduled item needs a scheduled enqueue time")
		}
	default:
		return Errorf(EINVALID, "an item cannot be enqueued in state %s", it.State)
	}
	return nil
}

// refuseLocked hands item it, which entity ent refused to take, to the
// protocol's DeadLetterFunc with why, as if it had been enqueued and
// dead-lettered at once (DeadLetterRefused, a refused target of a batch,
// an item past a cap of an entity that dead-letters what it refuses).
func (e *Engine) refuseLocked(ent *entity, it Item, why DeadLetterReason) {
	x := &item{Item: it}
	x.ent = ent
	x.EnqueuedAt, x.ModifiedAt = e.applying(), e.applying()
	e.events.record(Event{Time: e.applying(), Protocol: ent.Protocol, Entity: ent.Name, Rule: why.Rule,
		Action: ActionDeadLettered}, explanation{kind: explainDeadLetter, text: why.Code + ": " + why.Description})
	if fn := e.protos[ent.Protocol].DeadLetter; fn != nil {
		e.handOver(fn, ent, x, why)
	} else {
		ent.stats.DeadLettered++
	}
}

// EnqueueBatch stores a batch as Engine.EnqueueBatch does, whole or not at
// all, inside a DeadLetterFunc: a target cannot be Refused there (EINVALID).
func (tx *Tx) EnqueueBatch(ts []Target) ([]Item, error) {
	e := tx.e
	for _, t := range ts {
		if t.Refused != nil {
			return nil, Errorf(EINVALID, "a DeadLetterFunc cannot refuse an item of a batch")
		}
	}
	ents, err := e.checkBatch(ts)
	if err != nil {
		return nil, err
	}
	return e.enqueueChecked(ts, ents, false), nil
}

// enqueueChecked enqueues the items of a batch that checkBatch passed,
// but for the skipped and the refused, and persists the LastSeq of the
// entities that numbered some (Target.SeqFrom); touch says whether the
// enqueues are uses (not inside a DeadLetterFunc, as Tx.Enqueue).
func (e *Engine) enqueueChecked(ts []Target, ents []*entity, touch bool) []Item {
	out := make([]Item, len(ts))
	var nums map[shareKey]uint64
	for i, t := range ts {
		ent := ents[i]
		if ent == nil || t.Refused != nil {
			continue
		}
		if t.SeqFrom != (EntityKey{}) {
			if nums == nil {
				nums = map[shareKey]uint64{}
			}
			e.shareSeq(ts, ents, i, nums)
		}
		var err error
		// checkBatch made sure that ent takes it.
		if out[i], err = e.enqueueLocked(ent, t.Item); err != nil {
			panic(Errorf(EINTERNAL, "an item of a checked batch was refused: %v", err))
		}
		switch {
		case !touch:
		case out[i].State == Scheduled:
			e.touch(ent, UseSchedule)
		default:
			e.touch(ent, UseSend)
		}
	}
	persisted := map[EntityKey]bool{}
	for sk := range nums {
		if !persisted[sk.from] {
			persisted[sk.from] = true
			e.entityOp(e.entities[sk.from])
		}
	}
	return out
}
