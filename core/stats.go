package core

import "time"

// Stats are an entity's cumulative item counters, for metrics. They are
// kept in memory only: they start at zero when the entity is created and
// when lapse starts, and they go with the entity when it is deleted.
type Stats struct {
	// Received counts the items that came into the entity: enqueued or
	// scheduled (Enqueue, EnqueueHanded), written (Put, Write), or moved
	// in as dead letters by a DeadLetterFunc.
	Received uint64 `json:"received"`
	// Delivered counts the times an item was handed to a consumer: locked
	// (Receive, TakeDeferred, an item enqueued Locked), taken (Take), or
	// handed on arrival (EnqueueHanded). An item handed out again after a
	// release or a lost lock counts again.
	Delivered uint64 `json:"delivered"`
	// Expired counts the expiries applied to the entity's items, whether
	// they dropped the item or dead-lettered it.
	Expired uint64 `json:"expired"`
	// DeadLettered counts the items dead-lettered out of the entity, for
	// any reason: expiry, rejection, a length limit, a delivery limit.
	DeadLettered uint64 `json:"deadLettered"`
}

// EntityStats are an entity's counts and counters: what metrics read,
// made without a walk over the entity's items.
type EntityStats struct {
	EntityKey
	// Kind is the protocol's word for the entity, as Entity.Kind.
	Kind string
	// Counts are the entity's items by state, as EntityInfo's.
	Counts Counts
	// Stats are the entity's counters.
	Stats Stats
}

// Stats returns the counts and counters of every entity, ordered by
// protocol and name, in time proportional to the number of entities:
// unlike Entities it does not walk their items for the next due time.
func (e *Engine) Stats(now time.Time) []EntityStats {
	out, _, _ := run(e, now, func() ([]EntityStats, error) {
		ents := e.sortedEntities("")
		out := make([]EntityStats, len(ents))
		for i, ent := range ents {
			out[i] = EntityStats{EntityKey: ent.EntityKey, Kind: ent.Kind, Counts: e.counts(ent), Stats: ent.stats}
		}
		return out, nil
	})
	return out
}

// ownCounts returns ent's items by state, without its dead-letter queue's.
func (ent *entity) ownCounts() Counts {
	return Counts{
		Active:      ent.counts[Active],
		Scheduled:   ent.counts[Scheduled],
		Locked:      ent.counts[Locked],
		Deferred:    ent.counts[Deferred],
		ActiveBytes: ent.bytes[Active],
	}
}

// counts returns ent's items by state, with the item count of its
// dead-letter queue as InDeadLetterQueue when it has one.
func (e *Engine) counts(ent *entity) Counts {
	c := ent.ownCounts()
	if ent.DeadLetterQueue != "" {
		if d := e.entities[EntityKey{ent.Protocol, ent.DeadLetterQueue}]; d != nil {
			c.InDeadLetterQueue = d.counts[Active] + d.counts[Locked] + d.counts[Deferred] + d.counts[Scheduled]
		}
	}
	return c
}
