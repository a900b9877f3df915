package core

import (
	"fmt"
	"runtime/debug"
	"time"
)

// The rule at the engine's boundary (issue 16.1): a panic never leaves the
// engine locked.
//
//   - A hook's panic is contained where the engine calls it: the engine
//     recovers it, tells Config.OnPanic once with its stack, and goes on.
//     An item whose DeadLetterFunc panicked is kept in its entity, set
//     aside (keepDeadLetter), with an event that says so.
//   - A panic of the engine's own code (a bug in core or in the Store)
//     releases the engine's lock and goes on to the caller, as a
//     *LockReleased. Wherever the lock is held a guard is armed: catch-up
//     and flush arm their own, and every operation runs under the guard
//     its wrapper arms (op.go). The first guard that
//     recovers the panic releases the lock and panics again with a
//     *LockReleased, which the guards further up let pass.
//
// Since no hook's panic gets out of the engine, a panic that reaches a
// guard as anything but a *LockReleased was raised while the lock was held.

// HookPanic is a panic the engine recovered, for Config.OnPanic.
type HookPanic struct {
	// Hook is the hook that panicked ("DeadLetter", "Available",
	// "SessionAvailable", "SessionLost", "Deleted", "Recovered",
	// "Describe", "Resubmit", "Wake", "ObserveLag"), or "Engine" for the
	// engine's own code, whose panic goes on to the caller.
	Hook string
	// Entity is the entity concerned, if known, and Item the Seq of the
	// item concerned, if any.
	Entity EntityKey
	Item   uint64
	// Value is what was passed to panic, and Stack the stack of the
	// goroutine where it was recovered.
	Value any
	Stack []byte
}

// ActionDeadLetterFailed is the action of an event recording that the
// protocol's DeadLetterFunc panicked: the item was kept in its entity,
// deferred, under a new Seq (the event's Item), rather than lost.
const ActionDeadLetterFailed Action = "dead-letter-failed"

// report tells Config.OnPanic about a recovered panic; a panic of OnPanic
// itself is dropped.
func (e *Engine) report(hook string, k EntityKey, seq uint64, v any) {
	f := e.cfg.OnPanic
	if f == nil {
		return
	}
	defer func() { _ = recover() }()
	f(HookPanic{Hook: hook, Entity: k, Item: seq, Value: v, Stack: debug.Stack()})
}

// contain, deferred by a call of a hook, recovers the hook's panic and
// reports it.
func (e *Engine) contain(hook string, k EntityKey) {
	if r := recover(); r != nil {
		e.report(hook, k, 0, r)
	}
}

// LockReleased is what a panic of the engine's own code goes on with once
// the engine has released its lock: Value is what was passed to panic.
type LockReleased struct{ Value any }

// Error returns the text of the original panic.
func (p *LockReleased) Error() string { return fmt.Sprint(p.Value) }

// Unwrap returns the original panic's value if it is an error.
func (p *LockReleased) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// guard, deferred where the engine's lock is held, releases the lock when
// a panic goes through, and lets the panic go on.
func (e *Engine) guard() {
	if r := recover(); r != nil {
		e.abandon(r)
	}
}

// abandon ends the call of a method that panicked with v. Unless v is a
// *LockReleased, the lock is held: abandon reports the panic, hands what
// the call changed to the Store, so that it holds what memory holds, drops
// the call's notifications, releases the lock and panics with a
// *LockReleased.
func (e *Engine) abandon(v any) {
	if p, ok := v.(*LockReleased); ok {
		panic(p)
	}
	e.report("Engine", EntityKey{}, 0, v)
	e.at, e.written = time.Time{}, time.Time{}
	e.tx, e.spare = Tx{}, nil
	e.notify = e.notify[:0]
	e.notifySess, e.lostSess, e.deleted = nil, nil, nil
	ops := e.ops
	e.ops = nil
	if len(ops) > 0 && e.cfg.Store != nil {
		func() {
			defer func() { _ = recover() }()
			e.lastCommit = e.cfg.Store.Append(ops)
		}()
	}
	e.mu.Unlock()
	panic(&LockReleased{Value: v})
}

// runDeadLetter runs a protocol's DeadLetterFunc; it returns what fn
// panicked with, nil when it returned.
func (e *Engine) runDeadLetter(fn DeadLetterFunc, ent *entity, it Item, why DeadLetterReason) (panicked any) {
	defer func() {
		if r := recover(); r != nil {
			e.report("DeadLetter", ent.EntityKey, it.Seq, r)
			panicked = r
		}
	}()
	fn(&e.tx, &ent.Entity, it, why)
	return nil
}

// keepDeadLetter puts back in its entity item it, whose DeadLetterFunc
// panicked, so that it is not lost: as a new item (a new Seq: the old one
// may still be in the entity's queues), deferred, so that it never expires
// on its own and no receiver gets it unasked, and records an event with
// why's rule. If the hook enqueued something before it panicked, that
// stays too.
func (e *Engine) keepDeadLetter(ent *entity, it Item, why DeadLetterReason, v any) {
	x := new(item)
	x.Item = Item{Key: it.Key, Group: it.Group, Body: it.Body, Meta: it.Meta, TTL: it.TTL,
		Persistent: it.Persistent, DeliveryCount: it.DeliveryCount, EnqueuedAt: it.EnqueuedAt,
		ModifiedAt: it.ModifiedAt, EffectiveTTL: it.EffectiveTTL, DueAt: it.DueAt, Rule: it.Rule,
		Reason: it.Reason, State: Deferred}
	if x.Key != "" && ent.keys[x.Key] != nil {
		x.Key = "" // the hook put an item of that key back already
	}
	x.why = whyLoaded
	ent.LastSeq++
	x.Seq = ent.LastSeq
	e.add(ent, x)
	e.putOp(ent, x)
	e.events.record(Event{Time: e.applying(), Due: it.DueAt, Protocol: ent.Protocol, Entity: ent.Name,
		Item: x.Seq, ItemKey: x.Key, Rule: why.Rule, Action: ActionDeadLetterFailed},
		explanation{kind: explainDeadLetter, text: fmt.Sprintf(
			"the protocol's dead-letter hook failed on item %d (%s: %s) with a panic (%v); the item is kept in its entity, deferred, as item %d",
			it.Seq, why.Code, why.Description, v, x.Seq)})
}

// The hooks that run outside the engine's lock, each contained.

func (e *Engine) callWake(f func()) {
	defer e.contain("Wake", EntityKey{})
	f()
}

func (e *Engine) callAvailable(h func(EntityKey), k EntityKey) {
	defer e.contain("Available", k)
	h(k)
}

func (e *Engine) callSessionAvailable(h func(EntityKey, string), n sessionNote) {
	defer e.contain("SessionAvailable", n.k)
	h(n.k, n.group)
}

func (e *Engine) callSessionLost(h func(EntityKey, string, string), l sessionLoss) {
	defer e.contain("SessionLost", l.k)
	h(l.k, l.group, l.holder)
}

func (e *Engine) callDeleted(h func(Entity), ent Entity) {
	defer e.contain("Deleted", ent.EntityKey)
	h(ent)
}

// observeLag tells Config.ObserveLag, contained.
func (e *Engine) observeLag(protocol string, a Action, lag time.Duration) {
	defer e.contain("ObserveLag", EntityKey{Protocol: protocol})
	e.cfg.ObserveLag(protocol, a, lag)
}

// callRecovered runs a Recovered hook, outside the lock (Recover).
func (e *Engine) callRecovered(h func([]Entity), protocol string, ents []Entity) {
	defer e.contain("Recovered", EntityKey{Protocol: protocol})
	h(ents)
}

// The hooks that run inside the engine's lock, each contained.

// callDescribe runs a Describe hook; one that panics describes nothing.
func (e *Engine) callDescribe(fn func(*Entity, *Item) Description, ent *Entity, it *Item) (d Description) {
	defer func() {
		if r := recover(); r != nil {
			e.report("Describe", ent.EntityKey, it.Seq, r)
			d = Description{}
		}
	}()
	return fn(ent, it)
}

// callResubmit runs a Resubmit hook; one that panics is an EINTERNAL
// error, and the dead letter stays where it is.
func (e *Engine) callResubmit(fn func(*Entity, Item) (string, Item, error), ent *entity, it Item) (to string, out Item, err error) {
	defer func() {
		if r := recover(); r != nil {
			e.report("Resubmit", ent.EntityKey, it.Seq, r)
			to, out, err = "", Item{}, Errorf(EINTERNAL, "the resubmit hook of %s failed on item %d of %q", ent.Protocol, it.Seq, ent.Name)
		}
	}()
	return fn(&ent.Entity, it)
}
