package core

import "time"

// Tx is the engine's critical section as a DeadLetterFunc sees it: it can
// look entities up and enqueue items, and nothing else.
type Tx struct {
	e   *Engine
	now time.Time
}

// Now returns the time the engine is applying.
func (tx *Tx) Now() time.Time { return tx.now }

// Entity returns a copy of entity k.
func (tx *Tx) Entity(k EntityKey) (Entity, bool) {
	ent := tx.e.entities[k]
	if ent == nil {
		return Entity{}, false
	}
	return ent.Entity, true
}

// Enqueue adds an item to entity k as Engine.Enqueue does.
func (tx *Tx) Enqueue(k EntityKey, it Item) (Item, error) {
	ent, err := tx.e.entityLocked(k)
	if err != nil {
		return Item{}, err
	}
	return tx.e.enqueueLocked(ent, it)
}
