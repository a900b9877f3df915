package core

import (
	"context"
	"sort"
	"time"

	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// Engine is the expiring-entity engine: every entity and item of every
// protocol, one scheduler of due times, and the event log. It is safe for
// concurrent use. It never reads the time itself: every call takes now, the
// caller's reading of the Clock, and applies everything due up to it before
// doing anything else, so no call ever sees an item whose due time has
// passed (SB-6, RB-3, CO-6). Between calls the caller drives it with Advance.
type Engine struct {
	cfg Config

	mu       lockorder.Mutex
	entities map[EntityKey]*entity
	timers   timerHeap
	protos   map[string]ProtocolHooks
	lanes    map[string]*hookLane // each protocol's hooks that run outside the lock (hooks.go)
	events   eventLog
	ops      []Op // changes to persist, made by the current call
	notify   []EntityKey
	deleted  []Entity
	lastNext int64 // the earliest due time reported to Wake
	// opEvents is the ID of the next event when the current operation took
	// the lock, before its catch-up (op.go).
	opEvents uint64
	// lastCommit is the Commit of the latest Append: once it is done, every
	// change the engine made before it is durable.
	lastCommit *Commit
	now        time.Time
	// at is, while runDue applies a timer, its due time; zero otherwise.
	at time.Time
	// written is, while Enqueue or Change writes, the instant its caller
	// gave, which the caller may have put in the item's body (a Cosmos
	// _ts); zero otherwise.
	written time.Time
	// tx is the Tx a DeadLetterFunc gets, and spare, while it runs, the
	// item it hands over, free for the item the hook enqueues (handOver).
	tx    Tx
	spare *item
	// chainN numbers the joins of items to expiry chains (chainQueue).
	chainN uint64
	// sessionTimers are the sessions whose lock timers are armed, by
	// timer: a timer points to an item or an entity, not to a session,
	// and a third pointer in every item's timer would cost each item a
	// larger allocation.
	sessionTimers map[*timer]*session
	// notifySess are the sessions to tell the SessionAvailable hook about.
	notifySess []sessionNote
	// lostSess are the sessions whose locks ran out, for the SessionLost
	// hook.
	lostSess []sessionLoss
}

// applying is the time the engine's current change happens: the due time
// of the timer being applied, else now.
func (e *Engine) applying() time.Time {
	if !e.at.IsZero() {
		return e.at
	}
	return e.now
}

// Config configures an Engine.
type Config struct {
	// Store keeps durable entities and persistent items; nil keeps nothing.
	Store Store
	// EventLogSize bounds the event log (default 10,000).
	EventLogSize int
	// Wake is called, outside the engine's lock, when the earliest due time
	// may have moved earlier than the one NextDue last gave. It must not block.
	Wake func()
	// ObserveLag, if set, is told how late the engine applied each change
	// that a due time makes (EM-4): an item's expiry (ActionExpired, or
	// ActionDeadLettered when the expiry dead-letters it), a lock running
	// out (ActionLockLost) and an idle deletion (ActionDeletedIdle). lag is
	// the time applied less the time due: the runner's delay in real time,
	// and all of a jump of the clock past the due time, or of a downtime
	// (RB-13). An item's expiry found on a read rather than at its due time
	// (a lock given back after it, SB-7; a deferred item taken, SB-9) is
	// not reported. It is called for every change, inside the engine's
	// lock: it must be quick and must not call the Engine.
	ObserveLag func(protocol string, action Action, lag time.Duration)
	// OnPanic, if set, is told of every panic the engine recovers, once,
	// with its stack: a hook's, which the engine contains and goes on
	// after, and one of the engine's own code, after which the engine
	// releases its lock and the panic goes on to the caller (guard.go).
	// It may run inside the engine's lock: it must not call the Engine.
	OnPanic func(HookPanic)
}

// ProtocolHooks is what a protocol front-end tells the engine about its
// entities. Every field may be nil.
type ProtocolHooks struct {
	// DeadLetter moves dead-lettered items; nil drops them.
	DeadLetter DeadLetterFunc
	// Available is called when items became available in an entity
	// (enqueued, returned from a lock, scheduled time reached). It and
	// SessionAvailable, SessionLost and Deleted run on the protocol's own
	// goroutine, after the engine call that made them and never on its
	// goroutine (hooks.go): they may take the front-end's locks and call
	// the engine.
	Available func(EntityKey)
	// SessionAvailable is called instead of Available
	// for an entity with sessions (Policy.Sessions): items became
	// available in session group of entity k (enqueued, returned from a
	// lock, scheduled time reached), or a session with available items
	// became free to accept (released, its lock ran out). The holder of
	// the session, if any, can receive them; if none, the session can be
	// accepted. When it is nil, Available is called instead.
	SessionAvailable func(k EntityKey, group string)
	// SessionLost is called when session group of
	// entity k was taken from its holder because its lock ran out (SS-3),
	// not when the holder released it: the front-end tells that holder
	// (Service Bus detaches its receiver with session-lock-lost).
	SessionLost func(k EntityKey, group, holder string)
	// Deleted is called when the engine itself deleted an entity (idle
	// deletion, SB-10, RB-8). A name may have a new entity by then:
	// compare Entity.Handle with the front-end's record (handle.go).
	Deleted func(Entity)
	// Recovered is called by Recover with the protocol's entities, in name
	// order, once they are loaded and before what fell due while lapse was
	// down is applied, so that dead letters of that time find their way
	// (RB-13). It runs on Recover's caller's goroutine, outside the
	// engine's lock: it may take the front-end's locks, and must not call
	// the Engine.
	Recovered func([]Entity)
	// Describe says what item it of entity ent is in the protocol's own
	// words, for people (Engine.Describe, Engine.DeadLetters): its
	// properties and, for a dead letter, why it died and where it came
	// from. It must be pure and quick: it may run inside the engine's lock,
	// must not call the Engine, and must not modify ent or it.
	Describe func(ent *Entity, it *Item) Description
	// Resubmit says where dead letter it of entity dlq goes back to (the
	// name of an entity of the same protocol) and what it becomes there:
	// the Key, Group, Body, Meta, TTL, Persistent and DeliveryCount of out
	// are enqueued, active, as a new item (Engine.Resubmit). An item that
	// is not a dead letter is an EINVALID error. It runs inside the
	// engine's lock: like a DeadLetterFunc it must not block nor call the
	// Engine, and it must not modify the Body or Meta of it (out gets new
	// slices for what changes). A protocol without it has no dead letters
	// to resubmit.
	Resubmit func(dlq *Entity, it Item) (to string, out Item, err error)
	// ItemChanged is told of each change of a keyed item of the
	// protocol's entities (written, replaced, removed, expired) as the
	// engine makes it, inside its lock: so it has heard of every change
	// an engine call made by the time the call returns, in the engine's
	// order. Cosmos DB's all-versions-and-deletes change feed is kept from
	// it. It must be quick, must not call the Engine, and may take only a
	// leaf lock of its own (one under which nothing else is called). The
	// Items are copies, their Bodies the engine's (never changed once
	// stored: do not modify them). A protocol without it costs the engine
	// nothing.
	ItemChanged func(k EntityKey, ch ItemChange)
	// Unique derives again the unique values (Item.Unique) of keyed item
	// it of entity ent, loaded from the store, which does not keep them:
	// the same values the protocol set on the item when it wrote it. The
	// engine calls it for each keyed item of the protocol that Recover
	// loads once the hook is registered, inside its lock while it loads,
	// and, at Register, for those loaded before, outside its lock
	// (deriveUnique). It must be pure, must not call the Engine, and must
	// not modify ent or it. A protocol without unique values leaves it nil.
	Unique func(ent *Entity, it *Item) []string
}

// NewEngine returns an empty engine. Call Register for each protocol, then
// Recover to load what the Store holds.
func NewEngine(cfg Config) *Engine {
	if cfg.EventLogSize <= 0 {
		cfg.EventLogSize = 10000
	}
	return &Engine{
		cfg:      cfg,
		entities: make(map[EntityKey]*entity),
		protos:   make(map[string]ProtocolHooks),
		lanes:    make(map[string]*hookLane),
		events:   newEventLog(cfg.EventLogSize),
		lastNext: maxInt64,
	}
}

const maxInt64 = int64(^uint64(0) >> 1)

// Register sets the hooks of a protocol's front-end. With a Unique hook,
// the protocol's keyed items already loaded get their unique values
// (deriveUnique).
func (e *Engine) Register(protocol string, h ProtocolHooks) {
	locked(e, func() none {
		e.protos[protocol] = h
		e.lanes[protocol] = &hookLane{h: h}
		return none{}
	})
	if h.Unique != nil {
		e.deriveUnique(protocol, h.Unique)
	}
}

// catchUp, with the lock held, moves the engine's time to now and applies
// everything due up to it.
func (e *Engine) catchUp(now time.Time) {
	defer e.guard()
	if now.After(e.now) {
		e.now = now
	}
	e.runDue(e.now)
}

// unlock hands the call's changes to the store, releases the lock and
// queues the hooks that tell the front-ends what the call did, for their
// lanes to run (hooks.go). It returns the Commit of the changes (nil when
// none).
func (e *Engine) unlock() *Commit {
	c := e.flush()
	notify, deleted := e.notify, e.deleted
	notifySess, lostSess := e.notifySess, e.lostSess
	e.deleted, e.notifySess, e.lostSess = nil, nil, nil
	wake := false
	if t, ok := e.timers.min(); ok && t.at < e.lastNext {
		e.lastNext = t.at
		wake = true
	}
	if len(notify)+len(notifySess)+len(lostSess)+len(deleted) > 0 {
		// post copies what it queues: the array of notify is kept for
		// the next call, and the lanes' own locks order the calls of two
		// engine calls as the engine made them.
		e.post(e.lanes, notify, notifySess, lostSess, deleted)
	}
	e.notify = e.notify[:0]
	e.mu.Unlock()

	// Wake's panic is contained (guard.go): what follows never panics, so
	// a method's guard never sees the lock released.
	if wake && e.cfg.Wake != nil {
		e.callWake(e.cfg.Wake)
	}
	return c
}

// flush applies what the call made due now (a TTL of 0, an item returned
// from its lock after its expiry) before anyone else looks, and hands the
// call's changes to the store.
func (e *Engine) flush() *Commit {
	defer e.guard()
	e.runDue(e.now)
	var c *Commit
	if len(e.ops) > 0 {
		if e.cfg.Store != nil {
			c = e.cfg.Store.Append(e.ops)
			e.lastCommit = c
		}
		e.ops = nil
	}
	return c
}

// Advance applies everything due up to now: expiries, lock expiries,
// scheduled enqueues and idle deletions (EM-1). It returns how many events it
// recorded, and a Commit that is done once every change the engine has made
// so far is durable, its own and those of other callers alike.
func (e *Engine) Advance(now time.Time) (int, *Commit) {
	n, c, _ := run(e, now, func() (int, error) {
		return int(e.events.next - e.opEvents), nil
	})
	if c != nil {
		return n, c
	}
	return n, locked(e, func() *Commit { return e.lastCommit })
}

// WaitDurable returns once every change the engine has made so far is
// durable, or with the error of the commit that failed, or ctx's error: a
// front-end that answers for several engine calls at once (a topology
// change) waits for it before it answers (EM-3).
func (e *Engine) WaitDurable(ctx context.Context) error {
	c := locked(e, func() *Commit { return e.lastCommit })
	return c.Wait(ctx)
}

// LastEventID returns the ID of the latest event recorded, 0 if none.
func (e *Engine) LastEventID() uint64 {
	return locked(e, func() uint64 { return e.events.next - 1 })
}

// NextDue returns the earliest pending due time, if any.
func (e *Engine) NextDue() (time.Time, bool) {
	var ok bool
	at := locked(e, func() int64 {
		var t *timer
		if t, ok = e.timers.min(); !ok {
			e.lastNext = maxInt64
			return 0
		}
		e.lastNext = t.at
		return t.at
	})
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(0, at).UTC(), true
}

// Recover loads what the Store holds, restarts idle leases from now, and
// applies everything that fell due while lapse was not running (RB-13).
// Register the protocols' hooks first: items that expired during the
// downtime are dead-lettered through them. It runs in three steps, so that
// the Recovered hooks run outside the engine's lock, where they may take
// their front-end's locks (docs/architecture.md, "Locks"): the load, under
// the lock, which applies nothing (the engine's time stays where it was);
// the Recovered hooks, on the caller's goroutine, which rebuild the
// front-ends' tables; then the catch-up to now, whose dead letters find
// those tables.
func (e *Engine) Recover(ctx context.Context, now time.Time) error {
	if e.cfg.Store == nil {
		return nil
	}
	type recovered struct {
		h    func([]Entity)
		ents []Entity
	}
	var hooks map[string]recovered
	_, _, err := run(e, time.Time{}, func() (none, error) {
		var cur *entity
		err := e.cfg.Store.Load(ctx, func(en Entity) error {
			en.Handle = new(Handle)
			ent := newEntity(en)
			e.entities[en.EntityKey] = ent
			cur = ent
			return nil
		}, func(k EntityKey, it Item) error {
			if cur == nil || cur.EntityKey != k {
				cur = e.entities[k]
				if cur == nil {
					return Errorf(EINTERNAL, "store holds item %d of unknown entity %s", it.Seq, k)
				}
			}
			if it.State == Locked {
				it.State = Active
				it.LockedUntil = time.Time{}
			}
			if it.Seq > cur.LastSeq {
				cur.LastSeq = it.Seq
			}
			x := &item{Item: it}
			x.t.idx = -1
			if cur.Policy.Retroactive {
				computeDue(cur, x)
			}
			if f := e.protos[cur.Protocol].Unique; f != nil && x.Key != "" {
				x.Unique = f(&cur.Entity, &x.Item)
			}
			e.add(cur, x) // a scheduled item whose time came while lapse was down is activated by the catch-up
			return nil
		}, e.loadSessionState)
		if err != nil {
			return none{}, err
		}
		for _, ent := range e.entities {
			ent.lastUsed = now
			e.armIdle(ent)
		}
		hooks = map[string]recovered{}
		for protocol, h := range e.protos {
			if h.Recovered == nil {
				continue
			}
			var ents []Entity
			for _, ent := range e.sortedEntities(protocol) {
				ents = append(ents, ent.Entity)
			}
			hooks[protocol] = recovered{h.Recovered, ents}
		}
		return none{}, nil
	})
	if err != nil {
		return err
	}
	for protocol, r := range hooks {
		e.callRecovered(r.h, protocol, r.ents)
	}
	_, _, err = run(e, now, func() (none, error) { return none{}, nil })
	return err
}

// Reset drops every entity and item of every protocol.
func (e *Engine) Reset(now time.Time) *Commit {
	_, c, _ := run(e, now, func() (none, error) {
		for _, ent := range e.entities {
			e.dropEntity(ent)
			ent.Handle.kill()
		}
		clear(e.entities)
		e.timers = nil
		clear(e.sessionTimers)
		e.ops = append(e.ops, Op{Kind: OpReset})
		return none{}, nil
	})
	return c
}

// Record adds to the event log an event of something that happened outside
// the engine's entities: a sandbox deleted for being idle (EM-5) is an event
// of the default world. ev's ID is set; its Reason is kept as given. It
// returns the event's ID.
func (e *Engine) Record(ev Event) uint64 {
	return locked(e, func() uint64 {
		e.events.record(ev, explanation{kind: explainText, text: ev.Reason})
		return e.events.next - 1
	})
}

// Events returns recorded events matching q, oldest first.
func (e *Engine) Events(q EventQuery) []Event {
	return locked(e, func() []Event { return e.events.query(q) })
}

// Subscribe returns a subscription to every event recorded from now on.
// Events that do not fit in its buffer of size buf are dropped and counted.
func (e *Engine) Subscribe(buf int) *Subscription {
	return locked(e, func() *Subscription { return e.events.subscribe(buf) })
}

// Unsubscribe ends a subscription and closes its channel.
func (e *Engine) Unsubscribe(s *Subscription) {
	locked(e, func() none {
		e.events.unsubscribe(s)
		return none{}
	})
}

// entityLocked returns the entity k or ENOTFOUND.
func (e *Engine) entityLocked(k EntityKey) (*entity, error) {
	ent := e.entities[k]
	if ent == nil {
		return nil, Errorf(ENOTFOUND, "entity %q not found", k.Name)
	}
	return ent, nil
}

func kindOrEntity(kind string) string {
	if kind == "" {
		return "entity"
	}
	return kind
}

// sortedEntities returns the entities of protocol ("" for all) in key order.
func (e *Engine) sortedEntities(protocol string) []*entity {
	out := make([]*entity, 0, len(e.entities))
	for _, ent := range e.entities {
		if protocol == "" || ent.Protocol == protocol {
			out = append(out, ent)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Protocol != out[j].Protocol {
			return out[i].Protocol < out[j].Protocol
		}
		return out[i].Name < out[j].Name
	})
	return out
}
