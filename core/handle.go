package core

import "sync/atomic"

// A Handle stands for one incarnation of an entity: the engine makes one
// for each entity it creates or loads and marks it gone, inside its lock,
// when it deletes the entity (by any path: a client's delete, idle
// deletion, a reset). Two entities of the same key, one deleted and one
// made anew under its name, have different handles.
//
// It is how a front-end's registry stays a cache of the engine's (issue
// 25.5, docs/architecture.md): a front-end keeps the handle with its own
// record of an entity, every lookup of the record checks Live (an atomic
// load, so a hot path can afford it), and a record whose entity is gone
// is not served, whether or not the Deleted hook that forgets it has run
// yet. A Deleted hook compares the handle too, so that it leaves alone a
// record of an entity made anew under the same name since.
type Handle struct {
	gone atomic.Bool
}

// Live reports whether the entity h stands for is still the engine's. A
// nil handle is never live.
func (h *Handle) Live() bool { return h != nil && !h.gone.Load() }

// kill marks h gone; the engine calls it, inside its lock, as it deletes
// the entity.
func (h *Handle) kill() {
	if h != nil {
		h.gone.Store(true)
	}
}
