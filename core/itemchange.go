package core

import "time"

// ItemChange is one change of a keyed item (a Cosmos DB document) that the
// engine tells its protocol's ItemChanged hook of as it makes it, in its
// order: a new item (Old nil), a new version of one (both set), or its
// removal (New nil), by a caller or, when Expired, by its TTL.
type ItemChange struct {
	// Old is the item as it was before the change; nil for a new item.
	Old *Item
	// New is the item as written; nil for a removal.
	New *Item
	// Expired says that the removal was the item's expiry, not a caller's.
	Expired bool
	// At is when the change happened on the engine's clock: an expiry's
	// due time, even when the clock jumped past it.
	At time.Time
	// LastSeq is the entity's LastSeq right after the change: New.Seq for
	// a write; for a removal, which takes no Seq, the Seq of the entity's
	// latest write.
	LastSeq uint64
}

// noteChange tells the protocol's ItemChanged hook, when it has one, of a
// change of a keyed item of ent from old to cur (nil for none), with the
// engine's lock held: call it before removeItem recycles old.
func (e *Engine) noteChange(ent *entity, old, cur *Item, expired bool) {
	h := e.protos[ent.Protocol].ItemChanged
	if h == nil {
		return
	}
	ch := ItemChange{Expired: expired, At: e.applying(), LastSeq: ent.LastSeq}
	// Copies, so that the callers' items stay on their stacks when no
	// protocol has the hook.
	if old != nil {
		o := *old
		ch.Old = &o
	}
	if cur != nil {
		c := *cur
		ch.New = &c
	}
	defer e.contain("ItemChanged", ent.EntityKey)
	h(ent.EntityKey, ch)
}
