package core

import (
	"context"
	"time"
)

// Counts are an entity's items by state, now. InDeadLetterQueue is the
// item count of the entity's DeadLetterQueue, now, when it has one (else
// 0); how many items were dead-lettered out of the entity since it was
// created or lapse started is Stats.DeadLettered.
type Counts struct {
	Active            int `json:"active"`
	Scheduled         int `json:"scheduled"`
	Locked            int `json:"locked"`
	Deferred          int `json:"deferred"`
	InDeadLetterQueue int `json:"inDeadLetterQueue"`
	// ActiveBytes is the body size of the active items.
	ActiveBytes int64 `json:"activeBytes"`
}

// EntityInfo is an entity with its live figures.
type EntityInfo struct {
	Entity
	Counts       Counts    `json:"counts"`
	Stats        Stats     `json:"stats"` // counters since the entity was created or lapse started
	Consumers    int       `json:"consumers"`
	LastUsed     time.Time `json:"lastUsed"`
	NextDue      time.Time `json:"nextDue,omitzero"`      // earliest item expiry, lock expiry (a session's too) or scheduled time
	IdleDeadline time.Time `json:"idleDeadline,omitzero"` // when idle deletion is due, if armed
}

// Create adds an entity. An entity of the same key is a ECONFLICT.
func (e *Engine) Create(now time.Time, en Entity) (Entity, *Commit, error) {
	if en.Protocol == "" || en.Name == "" {
		return Entity{}, nil, Errorf(EINVALID, "an entity needs a protocol and a name")
	}
	return run(e, now, func() (Entity, error) {
		if e.entities[en.EntityKey] != nil {
			return Entity{}, Errorf(ECONFLICT, "%s %q already exists", kindOrEntity(en.Kind), en.Name)
		}
		en.Created = e.now
		en.LastSeq = 0
		en.Handle = new(Handle)
		ent := newEntity(en)
		ent.lastUsed = e.now
		e.entities[en.EntityKey] = ent
		e.armIdle(ent)
		e.entityOp(ent)
		return ent.Entity, nil
	})
}

// CreateDurable creates an entity as Create does and returns once it is
// durable. A create whose commit fails is undone: the entity is deleted
// again, so that a failed create leaves nothing behind that a retry of
// the same name would collide with (issue 25.5). The error is the
// commit's, or ctx's.
func (e *Engine) CreateDurable(ctx context.Context, now time.Time, en Entity) (Entity, error) {
	out, c, err := e.Create(now, en)
	if err != nil {
		return Entity{}, err
	}
	if err := c.Wait(ctx); err != nil {
		e.deleteIncarnation(now, out.EntityKey, out.Handle)
		return Entity{}, err
	}
	return out, nil
}

// Update changes an entity through fn, which gets a copy to edit; its key,
// creation time and LastSeq cannot change. A new policy applies to items
// enqueued afterwards (SB-12), or to every stored item when it is
// Retroactive (CO-7). Updating counts as a use (UseUpdate).
func (e *Engine) Update(now time.Time, k EntityKey, fn func(*Entity) error) (Entity, *Commit, error) {
	return runEntity(e, now, k, func(ent *entity) (Entity, error) {
		return e.update(ent, fn)
	})
}

// update is Update's operation on ent.
func (e *Engine) update(ent *entity, fn func(*Entity) error) (Entity, error) {
	cp := ent.Entity
	if err := fn(&cp); err != nil {
		return Entity{}, err
	}
	cp.EntityKey, cp.Created, cp.LastSeq, cp.Handle = ent.EntityKey, ent.Created, ent.LastSeq, ent.Handle
	if cp.Policy.Sessions != ent.Policy.Sessions {
		return Entity{}, Errorf(EINVALID, "whether %s %q has sessions cannot be changed", kindOrEntity(ent.Kind), ent.Name)
	}
	old, wasDurable := ent.Policy, ent.Durable
	ent.Entity = cp
	if old.IdleTTL != cp.Policy.IdleTTL {
		// A new idle TTL starts a fresh lease, as RabbitMQ arms a new
		// expiry timer when an expires policy or argument changes (RB-8).
		ent.lastUsed = e.now
	}
	if old.Priorities != cp.Policy.Priorities {
		e.reorder(ent)
	}
	if cp.Policy.Retroactive || old.HeadOnly != cp.Policy.HeadOnly {
		e.rearm(ent)
	}
	e.limitChanged(ent, old)
	e.touch(ent, UseUpdate)
	e.armIdle(ent)
	if wasDurable && !cp.Durable {
		e.ops = append(e.ops, Op{Kind: OpDeleteEntity, Key: ent.EntityKey})
	}
	e.entityOp(ent)
	return ent.Entity, nil
}

// rearm recomputes (for a retroactive policy) and re-arms every item's
// expiry after a policy change.
func (e *Engine) rearm(ent *entity) {
	ent.headArmed = nil
	ent.chain.reset()
	e.timers.remove(&ent.chainT)
	for i, n := 0, ent.all.length(); i < n; i++ {
		x := ent.all.at(i)
		if x.removed {
			continue
		}
		if ent.Policy.Retroactive {
			computeDue(ent, x)
		}
		if x.State == Active {
			x.chained = false
			e.timers.remove(&x.t)
			if !ent.Policy.HeadOnly {
				e.armActive(x)
			}
		}
	}
	if ent.Policy.HeadOnly {
		e.armHead(ent)
	}
}

// Delete removes an entity and all its items.
func (e *Engine) Delete(now time.Time, k EntityKey) (*Commit, error) {
	_, c, err := runEntity(e, now, k, func(ent *entity) (none, error) {
		e.deleteEntity(ent)
		return none{}, nil
	})
	return c, err
}

// deleteIncarnation deletes entity k if it is still the one h stands for.
func (e *Engine) deleteIncarnation(now time.Time, k EntityKey, h *Handle) {
	runEntity(e, now, k, func(ent *entity) (none, error) {
		if ent.Handle == h {
			e.deleteEntity(ent)
		}
		return none{}, nil
	})
}

// Entity returns a copy of entity k.
func (e *Engine) Entity(k EntityKey) (Entity, bool) {
	found := false
	en := locked(e, func() Entity {
		ent := e.entities[k]
		if ent == nil {
			return Entity{}
		}
		found = true
		return ent.Entity
	})
	return en, found
}

// Alive reports whether the entity h stands for is still there at now,
// once what fell due up to now is applied. A front-end asks it before it
// takes a name whose record may be of an entity due for deletion; a
// lookup that needs no such certainty checks h.Live (handle.go).
func (e *Engine) Alive(now time.Time, h *Handle) bool {
	ok, _, _ := run(e, now, func() (bool, error) { return h.Live(), nil })
	return ok
}

// Info returns entity k with its figures.
func (e *Engine) Info(now time.Time, k EntityKey) (EntityInfo, error) {
	in, _, err := runEntity(e, now, k, func(ent *entity) (EntityInfo, error) {
		return e.info(ent), nil
	})
	return in, err
}

// Entities returns every entity of protocol ("" for all) with its figures,
// ordered by protocol and name.
func (e *Engine) Entities(now time.Time, protocol string) []EntityInfo {
	out, _, _ := run(e, now, func() ([]EntityInfo, error) {
		ents := e.sortedEntities(protocol)
		out := make([]EntityInfo, len(ents))
		for i, ent := range ents {
			out[i] = e.info(ent)
		}
		return out, nil
	})
	return out
}

func (e *Engine) info(ent *entity) EntityInfo {
	in := EntityInfo{
		Entity:    ent.Entity,
		Consumers: ent.consumers,
		LastUsed:  ent.lastUsed,
		Counts:    e.counts(ent),
		Stats:     ent.stats,
	}
	if ent.idle.idx >= 0 {
		in.IdleDeadline = time.Unix(0, ent.idle.at).UTC()
	}
	// The next due time of the entity's items: the entity keeps no ordered
	// index of its own, so this walks its items (a control-API read, never
	// on the expiry path).
	next := int64(0)
	if ent.chainT.idx >= 0 {
		next = ent.chainT.at // the first due time of the items in its chain
	}
	// An entity whose items can have no timer (a dead-letter queue: no TTL,
	// nothing locked or scheduled) needs no walk.
	never := ent.counts[Locked] == 0 && ent.counts[Scheduled] == 0 &&
		ent.Policy.IgnoreItemTTL && !ent.Policy.DefaultTTL.Finite()
	for i, n := 0, ent.all.length(); i < n && !never; i++ {
		x := ent.all.at(i)
		if x.removed || x.t.idx < 0 {
			continue
		}
		if next == 0 || x.t.at < next {
			next = x.t.at
		}
	}
	for _, s := range ent.sessions {
		if s.t.idx >= 0 && (next == 0 || s.t.at < next) {
			next = s.t.at // a session's lock, which its locked items share
		}
	}
	if next != 0 {
		in.NextDue = time.Unix(0, next).UTC()
	}
	return in
}

// Touch records a use of entity k; the uses its policy counts renew its idle
// lease (SB-10, RB-8). Sends, receives and peeks touch their entity by
// themselves.
func (e *Engine) Touch(now time.Time, k EntityKey, u Use) error {
	_, _, err := runEntity(e, now, k, func(ent *entity) (none, error) {
		e.touch(ent, u)
		return none{}, nil
	})
	return err
}

// Consumers changes entity k's consumer count by delta and returns it. The
// idle timer of a policy with IdleOnlyWithoutConsumers stops while the
// count is above zero and restarts from now when it drops to zero (RB-8).
func (e *Engine) Consumers(now time.Time, k EntityKey, delta int) (int, error) {
	n, _, err := runEntity(e, now, k, func(ent *entity) (int, error) {
		ent.consumers += delta
		if ent.consumers < 0 {
			ent.consumers = 0
		}
		if delta > 0 {
			e.touch(ent, UseConsume)
		}
		if ent.consumers == 0 {
			ent.lastUsed = e.now
		}
		e.armIdle(ent)
		return ent.consumers, nil
	})
	return n, err
}
