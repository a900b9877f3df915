package core

import (
	"cmp"
	"slices"
	"time"
)

// session is one session of an entity with Policy.Sessions. It exists while
// it has items, a holder or a state; an entity keeps it in its sessions map.
type session struct {
	id  string
	ent *entity
	// all holds the session's items in Seq order (the entity's groups do
	// not), and ready its active items: the entity's ready queue stays
	// empty.
	all    seqQueue
	ready  seqQueue
	counts [4]int // items by State
	bytes  int64  // body bytes of the active items
	// locked holds the items handed out under the session's lock, which
	// go back when it ends, and stale entries: an item that left the
	// Locked state, maybe twice (lockedItems). Cheaper than a map for the
	// usual one or few; compacted when mostly stale.
	locked []*item
	// holder holds the session's lock until lockedUntil ("" when free);
	// t is the lock's timer (timerSession), armed for a lock that runs out.
	holder      string
	lockedUntil time.Time
	t           timer
	// state is the session state (SS-4), when hasState.
	state    []byte
	hasState bool
	// prev and next link the session in its entity's avail list while
	// listed: it is free and has an active item.
	prev, next *session
	listed     bool
	// inline is where all, ready and locked start, one entry each: a
	// session of one message (a reply's, say) then costs one allocation,
	// not four.
	inline [3]*item
}

// sessionList is a FIFO of sessions, linked through the sessions
// themselves: O(1) to add at the back, take from the front and remove from
// anywhere, so accept-next never walks the sessions.
type sessionList struct {
	head, tail *session
}

func (l *sessionList) pushBack(s *session) {
	s.prev, s.next, s.listed = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = s
	} else {
		l.head = s
	}
	l.tail = s
}

func (l *sessionList) remove(s *session) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		l.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		l.tail = s.prev
	}
	s.prev, s.next, s.listed = nil, nil, false
}

// sessionNote is a session whose items the front-end is told about
// (ProtocolHooks.SessionAvailable).
type sessionNote struct {
	k     EntityKey
	group string
}

// sessionLoss is a session whose lock ran out, and who held it.
type sessionLoss struct {
	k             EntityKey
	group, holder string
}

// sessionFor returns session id of ent, making it if it does not exist.
func (e *Engine) sessionFor(ent *entity, id string) *session {
	if s := ent.sessions[id]; s != nil {
		return s
	}
	if ent.sessions == nil {
		ent.sessions = make(map[string]*session)
	}
	s := &session{id: id, ent: ent}
	s.all.buf, s.ready.buf, s.locked = s.inline[0:0:1], s.inline[1:1:2], s.inline[2:2:3]
	s.t = timer{idx: -1, kind: timerSession, ent: ent}
	ent.sessions[id] = s
	notePeak(ent.sessions, &ent.sessionsPeak)
	return s
}

// itemSession returns the session of item x, nil when its entity has no
// sessions. Every item of an entity with sessions has one.
func itemSession(x *item) *session {
	if !x.ent.Policy.Sessions {
		return nil
	}
	return x.ent.sessions[x.Group]
}

// readyQueue returns the queue that holds item x while it is active.
func readyQueue(x *item) *seqQueue {
	if s := itemSession(x); s != nil {
		return &s.ready
	}
	if l := x.ent.levels; l != nil {
		return &l[x.level]
	}
	return &x.ent.ready
}

// count moves item x of session s from state from (-1: none, a new item)
// to state to (-1: none, a removed item) in the session's figures.
func (e *Engine) count(s *session, x *item, from, to int) {
	if from >= 0 {
		s.counts[from]--
		if State(from) == Active {
			s.bytes -= int64(len(x.Body))
		}
	}
	if to >= 0 {
		s.counts[to]++
		if State(to) == Active {
			s.bytes += int64(len(x.Body))
		}
		if State(to) == Locked {
			if len(s.locked) >= 2*s.counts[Locked]+8 {
				s.compactLocked()
			}
			s.locked = append(s.locked, x)
		}
	}
	e.relist(s)
}

// relist keeps s in its entity's avail list exactly while it is free and
// has an active item.
func (e *Engine) relist(s *session) {
	want := s.holder == "" && s.counts[Active] > 0
	switch {
	case want && !s.listed:
		s.ent.avail.pushBack(s)
	case !want && s.listed:
		s.ent.avail.remove(s)
	}
}

// dropIfEmpty forgets s when it has no items, no holder and no state.
func (e *Engine) dropIfEmpty(s *session) {
	if s.holder != "" || s.hasState || s.counts != [4]int{} {
		return
	}
	if s.listed {
		s.ent.avail.remove(s)
	}
	if s.ent.sessions[s.id] == s {
		delete(s.ent.sessions, s.id)
		s.ent.sessions = shrunk(s.ent.sessions, &s.ent.sessionsPeak)
	}
}

// sessionReady notes that items became available in s, for the
// SessionAvailable hook (or Available, without one).
func (e *Engine) sessionReady(s *session) {
	h := e.protos[s.ent.Protocol]
	if h.SessionAvailable == nil {
		e.available(s.ent)
		return
	}
	n := sessionNote{k: s.ent.EntityKey, group: s.id}
	if l := len(e.notifySess); l > 0 && e.notifySess[l-1] == n {
		return
	}
	e.notifySess = append(e.notifySess, n)
}

// itemReady notes that active item x became available to receivers.
func (e *Engine) itemReady(x *item) {
	if s := itemSession(x); s != nil {
		e.sessionReady(s)
		return
	}
	e.available(x.ent)
}

// lockSession gives holder the lock of s until until, and the session's
// locked items with it (SS-2).
func (e *Engine) lockSession(s *session, holder string, until time.Time) {
	s.holder, s.lockedUntil = holder, until
	e.relist(s)
	for _, x := range s.locked {
		if x.State == Locked && !x.removed {
			x.LockedUntil = until
		}
	}
	if until.IsZero() {
		e.clearSessionTimer(s)
		return
	}
	e.timers.set(&s.t, until.UnixNano())
	if e.sessionTimers == nil {
		e.sessionTimers = make(map[*timer]*session)
	}
	e.sessionTimers[&s.t] = s
}

func (e *Engine) clearSessionTimer(s *session) {
	e.timers.remove(&s.t)
	delete(e.sessionTimers, &s.t)
}

// compactLocked drops the stale entries of s.locked, in place.
func (s *session) compactLocked() {
	live := s.locked[:0]
	for _, x := range s.locked {
		if x.State == Locked && !x.removed {
			live = append(live, x)
		}
	}
	clear(s.locked[len(live):])
	slices.SortFunc(live, func(a, b *item) int { return cmp.Compare(a.Seq, b.Seq) })
	s.locked = slices.Compact(live)
}

// lockedItems returns the items s holds locked, in Seq order, each once.
// An entry of s.locked always points to an item of s, live or removed: the
// items of a group are never reused (entity.released).
func (s *session) lockedItems() []*item {
	xs := make([]*item, 0, s.counts[Locked])
	for _, x := range s.locked {
		if x.State == Locked && !x.removed {
			xs = append(xs, x)
		}
	}
	slices.SortFunc(xs, func(a, b *item) int { return cmp.Compare(a.Seq, b.Seq) })
	return slices.Compact(xs)
}

// freeSession ends the lock of s: its locked items become available again
// at once, in their places, at the time the engine is applying (SB-7: one
// whose expiry passed by then expires, with an event at now). lost says the lock ran out (SS-3):
// their deliveries stay counted; else the holder released the session and
// they are counted back.
func (e *Engine) freeSession(s *session, lost bool, now time.Time) {
	e.clearSessionTimer(s)
	s.holder, s.lockedUntil = "", time.Time{}
	at := e.applying()
	for _, x := range s.lockedItems() {
		if !lost && x.DeliveryCount > 0 {
			x.DeliveryCount--
		}
		e.unlockItemAt(x, at, now)
	}
	clear(s.locked)
	s.locked = s.locked[:0]
	e.relist(s)
	if s.counts[Active] > 0 {
		e.sessionReady(s)
	}
	e.dropIfEmpty(s)
}

// sessionLockRanOut frees a session whose lock ran out (SS-3), recording
// the loss of the session's lock and of each item it held.
func (e *Engine) sessionLockRanOut(s *session, now time.Time) {
	ent := s.ent
	rule := ent.Policy.Rules.SessionLock
	due := s.lockedUntil
	e.events.record(Event{Time: now, Due: due, Protocol: ent.Protocol, Entity: ent.Name, Session: s.id,
		Rule: rule, Action: ActionLockLost}, explanation{kind: explainSessionLockLost})
	for _, x := range s.lockedItems() {
		e.events.record(Event{Time: now, Due: due, Protocol: ent.Protocol, Entity: ent.Name, Session: s.id,
			Item: x.Seq, ItemKey: x.Key, Rule: rule, Action: ActionLockLost}, explanation{kind: explainSessionItemLockLost})
	}
	if e.cfg.ObserveLag != nil {
		e.observeLag(ent.Protocol, ActionLockLost, now.Sub(due))
	}
	e.lostSess = append(e.lostSess, sessionLoss{k: ent.EntityKey, group: s.id, holder: s.holder})
	e.freeSession(s, true, now)
}

// takeSessionReady removes the first active item of s from its ready queue.
func (e *Engine) takeSessionReady(s *session) *item {
	x := s.ready.front(readyLive)
	if x == nil {
		return nil
	}
	s.ready.popFront()
	x.inReady = false
	return x
}

// lockSessionItem hands item x of s out under the session's lock,
// counting a delivery.
func (e *Engine) lockSessionItem(s *session, x *item) {
	e.setState(x, Locked)
	x.LockedUntil = s.lockedUntil
	x.DeliveryCount++
	x.ent.stats.Delivered++
}

// info returns s as SessionInfo.
func (s *session) info() SessionInfo {
	return SessionInfo{
		ID: s.id, Holder: s.holder, LockedUntil: s.lockedUntil,
		HasState: s.hasState, StateSize: len(s.state),
		Counts: Counts{
			Active: s.counts[Active], Scheduled: s.counts[Scheduled],
			Locked: s.counts[Locked], Deferred: s.counts[Deferred], ActiveBytes: s.bytes,
		},
	}
}

// dropSessions disarms the session locks of ent and forgets its sessions.
func (e *Engine) dropSessions(ent *entity) {
	for _, s := range ent.sessions {
		e.clearSessionTimer(s)
	}
	ent.sessions, ent.sessionsPeak = nil, 0
	ent.avail = sessionList{}
}
