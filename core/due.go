package core

import (
	"fmt"
	"time"
)

// why says which branch of the policy set an item's expiry; the text for
// people is made from it only when someone looks (Items, events), so the hot
// path formats no strings.
type why uint8

const (
	whyLoaded  why = iota // read from the store: Reason holds the text
	whyItem               // the item's own TTL
	whyCeiling            // the item's own TTL, cut to the entity's maximum
	whyDefault            // the entity's default TTL
	whyNever              // nothing makes it expire
	whyIgnored            // the item's TTL has no effect (CO-2)
)

// Effective returns the TTL the policy gives an item whose own TTL is own:
// the item's TTL, cut to MaxTTL when that is shorter (SB-2, RB-5), or the
// entity default when the item has none or item TTLs are ignored (CO-2).
// Unset or Forever means the item never expires.
func (p *Policy) Effective(own TTL) TTL {
	eff, _ := p.effective(own)
	return eff
}

func (p *Policy) effective(own TTL) (TTL, why) {
	switch {
	case p.IgnoreItemTTL:
		return p.DefaultTTL, whyIgnored
	case !own.IsSet():
		return p.DefaultTTL, whyDefault
	case p.MaxTTL.IsSet() && p.MaxTTL.Less(own):
		return p.MaxTTL, whyCeiling
	}
	return own, whyItem
}

// computeDue sets the item's effective TTL, due time and rule from the
// entity's policy, counted from the enqueue or the last modification.
func computeDue(ent *entity, x *item) {
	p := &ent.Policy
	eff, w := p.effective(x.TTL)
	base := x.EnqueuedAt
	if p.Base == FromModified {
		base = x.ModifiedAt
	}
	if p.BaseResolution > 0 {
		base = base.Truncate(p.BaseResolution)
	}
	x.EffectiveTTL = eff
	x.DueAt = eff.DueFrom(base)
	if x.DueAt.IsZero() && w != whyIgnored {
		w = whyNever
	}
	x.why = w
	x.Rule = ruleFor(p, w, !x.ScheduledAt.IsZero())
	x.Reason = ""
}

func ruleFor(p *Policy, w why, scheduled bool) string {
	if scheduled && w != whyNever && p.Rules.Scheduled != "" {
		return p.Rules.Scheduled
	}
	switch w {
	case whyItem:
		return p.Rules.ItemTTL
	case whyCeiling:
		return p.Rules.Ceiling
	case whyDefault:
		return p.Rules.DefaultTTL
	case whyIgnored, whyNever:
		return p.Rules.Never
	}
	return ""
}

// reasonMemo is the last reason text made for an item of an entity counted
// from its enqueue time, and what it was made from: items of one entity
// mostly share it, and formatting it again for each one of 100 k items
// dead-lettered at once is a good part of the cost.
type reasonMemo struct {
	ok      bool
	why     why
	dueZero bool
	ttl     TTL
	eff     TTL
	text    string
}

// reason returns the text that says how item x's expiry was set.
func (ent *entity) reason(x *item) string {
	if x.why == whyLoaded {
		return x.Reason
	}
	p := &ent.Policy
	if p.Base != FromEnqueue || !x.ScheduledAt.IsZero() {
		return x.reasonText(p)
	}
	m := &ent.memo
	if m.ok && m.why == x.why && m.dueZero == x.DueAt.IsZero() && m.ttl == x.TTL && m.eff == x.EffectiveTTL {
		return m.text
	}
	*m = reasonMemo{ok: true, why: x.why, dueZero: x.DueAt.IsZero(), ttl: x.TTL, eff: x.EffectiveTTL, text: x.reasonText(p)}
	return m.text
}

// reasonText makes the text that says how the item's expiry was set.
func (x *item) reasonText(p *Policy) string {
	var s string
	switch x.why {
	case whyItem:
		s = "own TTL " + x.TTL.String()
	case whyCeiling:
		s = fmt.Sprintf("own TTL %s cut to the entity's maximum %s", x.TTL, x.EffectiveTTL)
	case whyDefault:
		s = "entity default TTL " + x.EffectiveTTL.String()
		if x.TTL.IsSet() {
			s += " (own TTL " + x.TTL.String() + " ignored)"
		}
	case whyIgnored:
		if x.DueAt.IsZero() {
			s = "never expires: TTL is off for the entity, so item TTLs have no effect"
		} else {
			s = "entity default TTL " + x.EffectiveTTL.String() + "; item TTLs have no effect"
		}
	case whyNever:
		switch {
		case x.TTL.IsForever():
			s = "never expires: own TTL is infinite"
		case x.EffectiveTTL.IsForever():
			s = "never expires: the entity's default TTL is infinite"
		default:
			s = "never expires: no TTL applies"
		}
		return s
	}
	if !x.ScheduledAt.IsZero() && p.Base == FromEnqueue {
		s += ", counted from the scheduled enqueue time " + x.ScheduledAt.UTC().Format(time.RFC3339Nano)
	} else if p.Base == FromModified {
		s += ", counted from the last modification " + x.ModifiedAt.UTC().Format(time.RFC3339Nano)
	}
	return s
}

// runDue fires every timer due at or before now, in due order.
func (e *Engine) runDue(now time.Time) {
	n := now.UnixNano()
	// What a timer makes happen happens at its due time: an item it
	// dead-letters is enqueued then, so that a chain of expiries plays out
	// as the time passed even when the clock jumps over all of it.
	defer func() { e.at = time.Time{} }()
	for {
		t, ok := e.timers.min()
		if !ok || t.at > n {
			return
		}
		e.at = time.Unix(0, t.at).UTC()
		e.timers.remove(t)
		switch t.kind {
		case timerExpire:
			e.expireDue(t.it, now)
		case timerLock:
			e.lockRanOut(t.it, now)
		case timerSchedule:
			e.activate(t.it, now)
		case timerIdle:
			e.deleteIdle(t.ent, now)
		case timerChain:
			e.expireChain(t.ent, t.at, now)
		case timerSession:
			if s := e.sessionTimers[t]; s != nil {
				e.sessionLockRanOut(s, now)
			}
		}
	}
}

// expireDue applies an item's expiry when its due time comes, and reports
// how late that is to ObserveLag (EM-4).
func (e *Engine) expireDue(x *item, now time.Time) {
	if e.cfg.ObserveLag == nil {
		e.expire(x, now, "")
		return
	}
	// The hook that takes a dead letter may reuse x: read it first.
	protocol, due := x.ent.Protocol, x.DueAt
	a := e.expire(x, now, "")
	e.observeLag(protocol, a, now.Sub(due))
}

// expire applies an item's expiry: dead-letter or drop, with an event
// naming rule (the policy's expiry rule when rule is ""). It returns the
// event's action.
func (e *Engine) expire(x *item, now time.Time, rule string) Action {
	ent := x.ent
	p := &ent.Policy
	if rule == "" {
		rule = p.Rules.Expire
	}
	ev := Event{Time: now, Due: x.DueAt, Protocol: ent.Protocol, Entity: ent.Name,
		Item: x.Seq, ItemKey: x.Key, Rule: rule, Action: ActionExpired}
	ex := explanation{kind: explainExpired, why: x.why, ttl: x.TTL, eff: x.EffectiveTTL, text: x.Reason}
	if x.Key != "" {
		e.noteChange(ent, &x.Item, nil, true)
	}
	e.removeItem(x)
	if p.OnExpire == Release {
		// The end of a hold, not a death (RB-15): no expiry nor
		// dead-lettering is counted.
		ev.Action, ex.kind = ActionReleased, explainReleased
		e.events.record(ev, ex)
		if fn := e.protos[ent.Protocol].DeadLetter; fn != nil {
			n := ent.stats.DeadLettered
			e.handOver(fn, ent, x, DeadLetterReason{Code: "released", Description: "the item's hold ran out", Rule: rule})
			ent.stats.DeadLettered = n
		}
		return ev.Action
	}
	ent.stats.Expired++
	if p.OnExpire == DeadLetter {
		if fn := e.protos[ent.Protocol].DeadLetter; fn != nil {
			ev.Action = ActionDeadLettered
			e.events.record(ev, ex)
			e.handOver(fn, ent, x, DeadLetterReason{Code: "expired", Description: "the item's TTL ran out", Rule: rule})
			return ev.Action
		}
	}
	e.events.record(ev, ex)
	return ev.Action
}

// handOver runs a protocol's DeadLetterFunc for an item already removed.
func (e *Engine) handOver(fn DeadLetterFunc, ent *entity, x *item, why DeadLetterReason) {
	ent.stats.DeadLettered++
	cp := x.Item
	cp.Reason = ent.reason(x)
	// It leaves as a new message would arrive: active, unlocked, unscheduled.
	cp.State, cp.LockedUntil, cp.ScheduledAt = Active, time.Time{}, time.Time{}
	// The engine's own Tx serves every hook call rather than a new one
	// each: 100 k dead letters at once are 100 k calls.
	saved, savedSpare := e.tx, e.spare
	e.tx = Tx{e: e, now: e.applying()}
	if x.removed && ent.released(x) {
		// Nothing refers to x any more: the item the hook enqueues reuses it.
		e.spare = x
	}
	v := e.runDeadLetter(fn, ent, cp, why)
	e.tx, e.spare = saved, savedSpare
	if v != nil {
		ent.stats.DeadLettered--
		e.keepDeadLetter(ent, cp, why, v)
	}
}

// lockRanOut returns an item whose lock ran out to its entity (SB-7).
func (e *Engine) lockRanOut(x *item, now time.Time) {
	ent := x.ent
	e.events.record(Event{Time: now, Due: x.LockedUntil, Protocol: ent.Protocol, Entity: ent.Name,
		Item: x.Seq, ItemKey: x.Key, Rule: ent.Policy.Rules.LockLost, Action: ActionLockLost},
		explanation{kind: explainLockLost})
	if e.cfg.ObserveLag != nil {
		e.observeLag(ent.Protocol, ActionLockLost, now.Sub(x.LockedUntil))
	}
	e.unlockItem(x, now)
}

// unlockItem makes a locked item active again; one whose expiry passed while
// it was locked expires at once (SB-7, RB-6), at the head only for head-only
// entities (RB-7).
func (e *Engine) unlockItem(x *item, now time.Time) {
	e.unlockItemAt(x, now, now)
}

// unlockItemAt is unlockItem for a lock that ended at at, applied at now:
// the item expires at once if its expiry passed by at.
func (e *Engine) unlockItemAt(x *item, at, now time.Time) {
	ent := x.ent
	if x.fromDeferred {
		// Taken by its sequence number, it goes back where it was taken
		// from: it stays deferred, reachable only by TakeDeferred, and
		// expires only when taken (SB-9). The store holds it deferred.
		x.fromDeferred = false
		e.setState(x, Deferred)
		x.LockedUntil = time.Time{}
		return
	}
	e.setState(x, Active)
	x.LockedUntil = time.Time{}
	readyQueue(x).insert(x)
	x.inReady = true
	if x.Expired(at) && !ent.Policy.HeadOnly {
		e.expire(x, now, ent.Policy.Rules.LockLost)
		return
	}
	e.armActive(x)
	e.itemReady(x)
}

// activate enqueues a scheduled item whose time came (SB-4).
func (e *Engine) activate(x *item, now time.Time) {
	e.setState(x, Active)
	readyQueue(x).insert(x)
	x.inReady = true
	e.armActive(x)
	e.itemReady(x)
}

// deleteIdle deletes an entity unused for its idle TTL (SB-10, RB-8). Its
// items are dropped, not dead-lettered (RB-12).
func (e *Engine) deleteIdle(ent *entity, now time.Time) {
	due := time.Unix(0, ent.idle.at).UTC()
	e.events.record(Event{Time: now, Due: due, Protocol: ent.Protocol,
		Entity: ent.Name, Rule: ent.Policy.Rules.Idle, Action: ActionDeletedIdle},
		explanation{kind: explainIdle, eff: ent.Policy.IdleTTL, at: ent.lastUsed})
	if e.cfg.ObserveLag != nil {
		e.observeLag(ent.Protocol, ActionDeletedIdle, now.Sub(due))
	}
	e.deleteEntity(ent)
	e.deleted = append(e.deleted, ent.Entity)
}
