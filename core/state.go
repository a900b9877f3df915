package core

import (
	"slices"
	"strconv"
	"time"
)

// entity is an Entity with its items and timers.
type entity struct {
	Entity
	all       seqQueue // every item, in Seq order
	ready     seqQueue // active items, in Seq order (without Priorities)
	keys      map[string]*item
	unique    map[string]*item     // the unique values of keyed items (unique.go)
	groups    map[string]*seqQueue // items by Group, in Seq order, without sessions
	counts    [4]int               // by State
	bytes     [4]int64             // body bytes, by State
	consumers int
	lastUsed  time.Time
	idle      timer
	headArmed *item // head-only entities: the item whose expiry is armed
	// chain holds active items whose due times do not decrease in the
	// order they joined it, the usual case of one TTL per entity counted
	// from the enqueue: they need no timer of their own, only chainT at
	// the due time of the first (armActive, expireChain). chainLast is
	// the due time of the last one that joined (Unix nanoseconds).
	chain     chainQueue
	chainT    timer
	chainLast int64
	memo      reasonMemo
	// sessions are the entity's sessions (Policy.Sessions), by id, and
	// avail those free with an active item, in the order they became so
	// (AcceptSession).
	sessions map[string]*session
	avail    sessionList
	// levels holds the active items of an entity with Priorities, one
	// queue per priority in Seq order, in place of ready (made with its
	// first item).
	levels *[256]seqQueue
	// stats are the entity's counters since it was created or lapse
	// started (Stats).
	stats Stats

	// keysPeak, groupsPeak and sessionsPeak are the peak lengths of keys,
	// groups and sessions, for giving their room back (shrunk).
	keysPeak, groupsPeak, sessionsPeak, uniquePeak int
}

// item is an Item with its place in the engine.
type item struct {
	Item
	ent     *entity
	t       timer
	why     why
	inReady bool
	removed bool
	chained bool   // in its entity's expiry chain, with no timer of its own
	chainN  uint64 // its join number in the chain, when chained
	// fromDeferred marks a locked item handed out by TakeDeferred or
	// TakeDeferredSession: a lock that ends unsettled (abandoned, released,
	// lost) sets it aside again rather than making it active (SB-9).
	fromDeferred bool
	// level is the item's priority, in an entity with Priorities.
	level uint8
}

func newEntity(en Entity) *entity {
	ent := &entity{Entity: en}
	ent.idle = timer{idx: -1, kind: timerIdle, ent: ent}
	ent.chainT = timer{idx: -1, kind: timerChain, ent: ent}
	return ent
}

func readyLive(x *item) bool { return x.inReady }
func allLive(x *item) bool   { return !x.removed }

// persisted reports whether an item's changes go to the store.
func persisted(ent *entity, x *item) bool { return ent.Durable && x.Persistent }

// released reports whether a removed item x is out of ent's queues for good:
// both start after it (the entries before a queue's head are cleared), so
// nothing in the engine refers to it.
func (ent *entity) released(x *item) bool {
	for _, q := range [2]*seqQueue{&ent.all, readyQueue(x)} {
		if q.length() > 0 && q.at(0).Seq <= x.Seq {
			return false
		}
	}
	// The queues of a group (ScanGroup's, a session's) may still hold x
	// as a tombstone: an item of a group is never reused.
	if x.Group != "" {
		return false
	}
	// An entry x left in the chain is dead for good: its join number
	// matches no item's.
	return x.t.idx < 0 && ent.headArmed != x
}

// newItem returns a zeroed item: the spare one handOver left, if any, else
// a new one.
func (e *Engine) newItem() *item {
	if x := e.spare; x != nil {
		e.spare = nil
		*x = item{}
		return x
	}
	return new(item)
}

// groupQueue returns the items of group of ent in Seq order, tombstones
// included, or nil when it has none.
func (ent *entity) groupQueue(group string) *seqQueue {
	if ent.Policy.Sessions {
		if s := ent.sessions[group]; s != nil {
			return &s.all
		}
		return nil
	}
	return ent.groups[group]
}

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
	if ent.Policy.Priorities {
		x.level = priorityOf(x.Group)
		if ent.levels == nil {
			ent.levels = new([256]seqQueue)
		}
	}
	ent.all.pushBack(x)
	if x.Key != "" {
		if ent.keys == nil {
			ent.keys = make(map[string]*item)
		}
		ent.keys[x.Key] = x
		notePeak(ent.keys, &ent.keysPeak)
		ent.holdUnique(x)
	}
	var s *session
	switch {
	case ent.Policy.Sessions:
		s = e.sessionFor(ent, x.Group)
		s.all.insert(x)
		e.count(s, x, -1, int(x.State))
	case x.Group != "":
		if ent.groups == nil {
			ent.groups = make(map[string]*seqQueue)
		}
		g := ent.groups[x.Group]
		if g == nil {
			g = &seqQueue{}
			ent.groups[x.Group] = g
			notePeak(ent.groups, &ent.groupsPeak)
		}
		g.insert(x)
	}
	ent.counts[x.State]++
	ent.bytes[x.State] += int64(len(x.Body))
	switch x.State {
	case Active:
		readyQueue(x).pushBack(x)
		x.inReady = true
		e.armActive(x)
		e.itemReady(x)
	case Scheduled:
		e.timers.set(&x.t, x.ScheduledAt.UnixNano())
		x.t.kind = timerSchedule
	case Locked:
		e.armLock(x)
	}
}

// setState moves an item to state s, disarming whatever it waited for.
func (e *Engine) setState(x *item, s State) {
	e.disarm(x)
	if x.ent.headArmed == x {
		x.ent.headArmed = nil
	}
	x.ent.counts[x.State]--
	x.ent.bytes[x.State] -= int64(len(x.Body))
	from := x.State
	x.State = s
	x.ent.counts[s]++
	x.ent.bytes[s] += int64(len(x.Body))
	if ss := itemSession(x); ss != nil {
		e.count(ss, x, int(from), int(s))
	}
}

// armActive arms an active item's expiry; for a head-only entity only the
// head's expiry is armed (RB-7).
func (e *Engine) armActive(x *item) {
	ent := x.ent
	if ent.Policy.HeadOnly {
		e.armHead(ent)
		return
	}
	if x.DueAt.IsZero() {
		return
	}
	due := x.DueAt.UnixNano()
	first := ent.chain.front() == nil
	if first || due >= ent.chainLast {
		// Not earlier than any item in the chain: it joins at the back and
		// needs no timer of its own.
		e.chainN++
		x.chained, x.chainN = true, e.chainN
		ent.chain.pushBack(chainEntry{x: x, n: e.chainN, due: due})
		ent.chainLast = due
		if first {
			e.timers.set(&ent.chainT, due)
		}
		return
	}
	x.t.kind = timerExpire
	e.timers.set(&x.t, due)
}

// disarm stops whatever an item's expiry, lock or schedule waits for.
func (e *Engine) disarm(x *item) {
	e.timers.remove(&x.t)
	if !x.chained {
		return
	}
	ent := x.ent
	c := ent.chain.front()
	first := c != nil && c.x == x
	x.chained = false
	ent.chain.tombstone()
	if first {
		e.armChain(ent)
	}
}

// armChain sets an entity's chain timer to the due time of the first item
// in its chain, or clears it when the chain is empty.
func (e *Engine) armChain(ent *entity) {
	if c := ent.chain.front(); c != nil {
		e.timers.set(&ent.chainT, c.due)
		return
	}
	e.timers.remove(&ent.chainT)
}

// expireChain expires the items at the front of an entity's chain that are
// due at at, the due time of its chain timer, in the order they joined it,
// and sets the timer to the next due time. Items due later wait for it, so
// that whatever else falls due meanwhile is applied in due-time order.
func (e *Engine) expireChain(ent *entity, at int64, now time.Time) {
	if c := ent.chain.front(); c != nil && persisted(ent, c.x) {
		// Room for the ops of the whole batch at once, rather than a slice
		// that doubles and copies itself again and again: a delete here and,
		// as a rule, a write where the hook puts the item.
		e.ops = slices.Grow(e.ops, 2*ent.chain.dueCount(at))
	}
	for {
		c := ent.chain.front()
		if c == nil || c.due > at {
			break
		}
		x := c.x
		ent.chain.popFront()
		x.chained = false
		e.expireDue(x, now)
	}
	e.armChain(ent)
}

// armHead keeps the expiry timer of a head-only entity on its head.
func (e *Engine) armHead(ent *entity) {
	h := readyFront(ent)
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
	x := readyFront(ent)
	if x == nil {
		return nil
	}
	readyQueue(x).popFront()
	x.inReady = false
	return x
}

// readyFront returns an entity's head, the active item handed out next:
// the first of its ready queue, or of its highest priority that has one
// (Priorities).
func readyFront(ent *entity) *item {
	if ent.levels == nil {
		return ent.ready.front(readyLive)
	}
	for p := len(ent.levels) - 1; p >= 0; p-- {
		if ent.levels[p].length() > 0 {
			if x := ent.levels[p].front(readyLive); x != nil {
				return x
			}
		}
	}
	return nil
}

// reorder puts an entity's active items in the ready queues its policy
// asks for, after Priorities changed (a queue an older lapse stored, whose
// policy is made anew): by priority or not, in Seq order within each.
func (e *Engine) reorder(ent *entity) {
	var xs []*item
	for i, n := 0, ent.all.length(); i < n; i++ {
		if x := ent.all.at(i); !x.removed && x.inReady && itemSession(x) == nil {
			xs = append(xs, x)
		}
	}
	ent.ready.reset()
	ent.levels = nil
	if ent.Policy.Priorities {
		ent.levels = new([256]seqQueue)
	}
	for _, x := range xs {
		x.level = 0
		if ent.Policy.Priorities {
			x.level = priorityOf(x.Group)
		}
		readyQueue(x).pushBack(x)
	}
	if ent.Policy.HeadOnly {
		e.armHead(ent)
	}
}

// priorityOf reads an item's priority from its Group (Policy.Priorities).
func priorityOf(group string) uint8 {
	n, err := strconv.Atoi(group)
	if err != nil || n < 0 || n > 255 {
		return 0
	}
	return uint8(n)
}

// removeItem takes an item out of its entity for good.
func (e *Engine) removeItem(x *item) {
	ent := x.ent
	e.disarm(x)
	ss := itemSession(x)
	if x.inReady {
		x.inReady = false
		readyQueue(x).tombstone(readyLive)
	}
	x.removed = true
	ent.all.tombstone(allLive)
	if x.Key != "" && ent.keys[x.Key] == x {
		delete(ent.keys, x.Key)
		ent.keys = shrunk(ent.keys, &ent.keysPeak)
		ent.dropUnique(x)
	}
	ent.counts[x.State]--
	ent.bytes[x.State] -= int64(len(x.Body))
	if ss != nil {
		ss.all.tombstone(allLive)
		e.count(ss, x, int(x.State), -1)
		e.dropIfEmpty(ss)
	} else if g := ent.groups[x.Group]; g != nil {
		if g.tombstone(allLive); g.length() == 0 {
			delete(ent.groups, x.Group)
			ent.groups = shrunk(ent.groups, &ent.groupsPeak)
		}
	}
	if persisted(ent, x) {
		e.ops = append(e.ops, Op{Kind: OpDeleteItem, Key: ent.EntityKey, Seq: x.Seq, Row: x.Row})
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
	cp.Reason = ent.reason(x)
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
	ent.Handle.kill()
	delete(e.entities, ent.EntityKey)
	if ent.Durable {
		e.ops = append(e.ops, Op{Kind: OpDeleteEntity, Key: ent.EntityKey})
	}
}

// dropEntity disarms every timer of an entity and its items.
func (e *Engine) dropEntity(ent *entity) {
	e.timers.remove(&ent.idle)
	e.timers.remove(&ent.chainT)
	e.dropSessions(ent)
	for i, n := 0, ent.all.length(); i < n; i++ {
		x := ent.all.at(i)
		if !x.removed {
			e.timers.remove(&x.t)
			x.removed = true
		}
	}
	ent.all.reset()
	ent.ready.reset()
	ent.levels = nil
	ent.chain.reset()
	ent.keys, ent.keysPeak = nil, 0
	ent.unique, ent.uniquePeak = nil, 0
	ent.groups, ent.groupsPeak = nil, 0
	ent.counts = [4]int{}
	ent.headArmed = nil
}
