package core

import "time"

// entity is an Entity with its items and timers.
type entity struct {
	Entity
	all       seqQueue // every item, in Seq order
	ready     seqQueue // active items, in Seq order
	keys      map[string]*item
	counts    [4]int   // by State
	bytes     [4]int64 // body bytes, by State
	consumers int
	lastUsed  time.Time
	idle      timer
	headArmed *item // head-only entities: the item whose expiry is armed
	// deadLettered counts items dead-lettered out of the entity since start.
	deadLettered int
}

// item is an Item with its place in the engine.
type item struct {
	Item
	ent     *entity
	t       timer
	why     why
	inReady bool
	removed bool
}

func newEntity(en Entity) *entity {
	ent := &entity{Entity: en}
	ent.idle = timer{idx: -1, kind: timerIdle, ent: ent}
	return ent
}

func readyLive(x *item) bool { return x.inReady }
func allLive(x *item) bool   { return !x.removed }

// persisted reports whether an item's changes go to the store.
func persisted(ent *entity, x *item) bool { return ent.Durable && x.Persistent }

// find returns the live item seq of ent, or nil.
func (ent *entity) find(seq uint64) *item {
	i := ent.all.search(seq)
	if i < ent.all.length() {
		if x := ent.all.at(i); x.Seq == seq && !x.removed {
			return x
		}
	}
	return nil
}

// add puts a new item (its Seq, times and due already set) in its entity.
func (e *Engine) add(ent *entity, x *item) {
	x.ent = ent
	x.t.idx = -1
	x.t.it = x
	ent.all.pushBack(x)
	if x.Key != "" {
		if ent.keys == nil {
			ent.keys = make(map[string]*item)
		}
		ent.keys[x.Key] = x
	}
	ent.counts[x.State]++
	ent.bytes[x.State] += int64(len(x.Body))
	switch x.State {
	case Active:
		ent.ready.pushBack(x)
		x.inReady = true
		e.armActive(x)
		e.available(ent)
	case Scheduled:
		e.timers.set(&x.t, x.ScheduledAt.UnixNano())
		x.t.kind = timerSchedule
	case Locked:
		e.armLock(x)
	}
}

// setState moves an item to state s, disarming whatever it waited for.
func (e *Engine) setState(x *item, s State) {
	e.timers.remove(&x.t)
	if x.ent.headArmed == x {
		x.ent.headArmed = nil
	}
	x.ent.counts[x.State]--
	x.ent.bytes[x.State] -= int64(len(x.Body))
	x.State = s
	x.ent.counts[s]++
	x.ent.bytes[s] += int64(len(x.Body))
}

// armActive arms an active item's expiry; for a head-only entity only the
// head's expiry is armed (RB-7).
func (e *Engine) armActive(x *item) {
	ent := x.ent
	if ent.Policy.HeadOnly {
		e.armHead(ent)
		return
	}
	if !x.DueAt.IsZero() {
		x.t.kind = timerExpire
		e.timers.set(&x.t, x.DueAt.UnixNano())
	}
}

// armHead keeps the expiry timer of a head-only entity on its head.
func (e *Engine) armHead(ent *entity) {
	h := ent.ready.front(readyLive)
	if h == ent.headArmed {
		return
	}
	if old := ent.headArmed; old != nil {
		e.timers.remove(&old.t)
	}
	ent.headArmed = h
	if h != nil && !h.DueAt.IsZero() {
		h.t.kind = timerExpire
		e.timers.set(&h.t, h.DueAt.UnixNano())
	}
}

func (e *Engine) armLock(x *item) {
	if x.LockedUntil.IsZero() {
		return
	}
	x.t.kind = timerLock
	e.timers.set(&x.t, x.LockedUntil.UnixNano())
}

// takeReady removes an entity's head from the ready queue.
func (e *Engine) takeReady(ent *entity) *item {
	x := ent.ready.front(readyLive)
	if x == nil {
		return nil
	}
	ent.ready.popFront()
	x.inReady = false
	return x
}

// removeItem takes an item out of its entity for good.
func (e *Engine) removeItem(x *item) {
	ent := x.ent
	e.timers.remove(&x.t)
	if x.inReady {
		x.inReady = false
		ent.ready.tombstone(readyLive)
	}
	x.removed = true
	ent.all.tombstone(allLive)
	if x.Key != "" && ent.keys[x.Key] == x {
		delete(ent.keys, x.Key)
	}
	ent.counts[x.State]--
	ent.bytes[x.State] -= int64(len(x.Body))
	if persisted(ent, x) {
		e.ops = append(e.ops, Op{Kind: OpDeleteItem, Key: ent.EntityKey, Seq: x.Seq})
	}
	if ent.headArmed == x {
		ent.headArmed = nil
	}
	if ent.Policy.HeadOnly {
		e.armHead(ent)
	}
}

// putOp records an item write for the store.
func (e *Engine) putOp(ent *entity, x *item) {
	if !persisted(ent, x) {
		return
	}
	cp := x.Item
	cp.Reason = x.reason(&ent.Policy)
	if cp.State == Locked {
		cp.State, cp.LockedUntil = Active, time.Time{}
	}
	e.ops = append(e.ops, Op{Kind: OpPutItem, Key: ent.EntityKey, Item: &cp})
}

// entityOp records an entity write for the store.
func (e *Engine) entityOp(ent *entity) {
	if !ent.Durable {
		return
	}
	cp := ent.Entity
	e.ops = append(e.ops, Op{Kind: OpPutEntity, Key: ent.EntityKey, Entity: &cp})
}

// available notes that items became available in ent.
func (e *Engine) available(ent *entity) {
	if e.protos[ent.Protocol].Available == nil {
		return
	}
	if n := len(e.notify); n > 0 && e.notify[n-1] == ent.EntityKey {
		return
	}
	e.notify = append(e.notify, ent.EntityKey)
}

// armIdle sets or clears an entity's idle deadline.
func (e *Engine) armIdle(ent *entity) {
	p := &ent.Policy
	if !p.IdleTTL.Finite() || (p.IdleOnlyWithoutConsumers && ent.consumers > 0) {
		e.timers.remove(&ent.idle)
		return
	}
	at := p.IdleTTL.DueFrom(ent.lastUsed)
	if at.IsZero() {
		e.timers.remove(&ent.idle)
		return
	}
	e.timers.set(&ent.idle, at.UnixNano())
}

// touch records a use of ent; only the uses its policy counts renew its
// idle lease (SB-10, RB-8).
func (e *Engine) touch(ent *entity, u Use) {
	if ent.Policy.IdleUses&u == 0 {
		return
	}
	ent.lastUsed = e.now
	if ent.idle.idx >= 0 || ent.Policy.IdleTTL.Finite() {
		e.armIdle(ent)
	}
}

// deleteEntity removes an entity and its items from the engine and the store.
func (e *Engine) deleteEntity(ent *entity) {
	e.dropEntity(ent)
	delete(e.entities, ent.EntityKey)
	if ent.Durable {
		e.ops = append(e.ops, Op{Kind: OpDeleteEntity, Key: ent.EntityKey})
	}
}

// dropEntity disarms every timer of an entity and its items.
func (e *Engine) dropEntity(ent *entity) {
	e.timers.remove(&ent.idle)
	for i, n := 0, ent.all.length(); i < n; i++ {
		x := ent.all.at(i)
		if !x.removed {
			e.timers.remove(&x.t)
			x.removed = true
		}
	}
	ent.all.reset()
	ent.ready.reset()
	ent.keys = nil
	ent.counts = [4]int{}
	ent.headArmed = nil
}
