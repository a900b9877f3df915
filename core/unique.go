package core

import (
	"fmt"
	"slices"
)

// The unique values of keyed items (Item.Unique): an entity maps each value
// a live keyed item of it holds to that item, and refuses, with EUNIQUE, a
// write whose item has a value another live item holds. The values come
// and go with the items themselves (add, removeItem, dropEntity), so every
// way an item leaves, a delete, a replace, an expiry applied at the
// caller's instant, frees its values at once, and every way one arrives,
// Enqueue, Put, Change, EnqueueBatch, a Tx, is checked before anything
// changed (docs/architecture.md, "Unique values").

// errUnique is the refusal of the write of the item of key key in ent.
func errUnique(ent *entity, key string) *Error {
	return &Error{Code: EUNIQUE, Key: key,
		Message: fmt.Sprintf("a unique value of item %q is held by another item of %q", key, ent.Name)}
}

// uniqueHolder returns the live item of ent that holds one of the unique
// values of it, other than the item of it's own key (which it replaces),
// or nil.
func (ent *entity) uniqueHolder(it *Item) *item {
	if len(ent.unique) == 0 {
		return nil
	}
	for _, u := range it.Unique {
		if x := ent.unique[u]; x != nil && x.Key != it.Key {
			return x
		}
	}
	return nil
}

// holdUnique notes the unique values of x, a keyed item just added to ent.
// Two stored items with one value (written before their entity's values
// were unique) leave it to the later one.
func (ent *entity) holdUnique(x *item) {
	if x.Key == "" || len(x.Unique) == 0 {
		return
	}
	if ent.unique == nil {
		ent.unique = make(map[string]*item)
	}
	for _, u := range x.Unique {
		ent.unique[u] = x
	}
	notePeak(ent.unique, &ent.uniquePeak)
}

// dropUnique frees the unique values x held, as it leaves ent.
func (ent *entity) dropUnique(x *item) {
	if len(x.Unique) == 0 || ent.unique == nil {
		return
	}
	for _, u := range x.Unique {
		if ent.unique[u] == x {
			delete(ent.unique, u)
		}
	}
	ent.unique = shrunk(ent.unique, &ent.uniquePeak)
}

// changeClash checks the unique values of the items a Change writes, put,
// once it removed the items of the keys remove: EUNIQUE, with the key of
// the first item of put whose value another holds, a live item that the
// change neither removes nor replaces or an earlier item of put; else nil.
// It allocates nothing when no item of put has unique values.
func (ent *entity) changeClash(remove []string, put []Item) error {
	n := 0
	for i := range put {
		n += len(put[i].Unique)
	}
	if n == 0 {
		return nil
	}
	leaves := func(key string) bool {
		return slices.Contains(remove, key) || slices.ContainsFunc(put, func(it Item) bool { return it.Key == key })
	}
	claimed := make(map[string]string, n) // value -> the key of the item of put that holds it
	for i := range put {
		it := &put[i]
		for _, u := range it.Unique {
			if x := ent.unique[u]; x != nil && x.Key != it.Key && !leaves(x.Key) {
				return errUnique(ent, it.Key)
			}
			if k, ok := claimed[u]; ok && k != it.Key {
				return errUnique(ent, it.Key)
			}
			claimed[u] = it.Key
		}
	}
	return nil
}

// deriveUnique gives the keyed items of protocol's entities that have no
// unique values those that derive says, for a Unique hook registered once
// Recover loaded them (a front-end that starts after the engine recovered,
// as Cosmos DB's does). derive runs outside the engine's lock, on copies of
// the items; the values are then noted, under the lock, for the items that
// are still live and still have none. Items written meanwhile got theirs
// from their writer.
func (e *Engine) deriveUnique(protocol string, derive func(*Entity, *Item) []string) {
	type loaded struct {
		en *Entity
		it Item
	}
	var items []loaded
	locked(e, func() none {
		for _, ent := range e.entities {
			if ent.Protocol != protocol || len(ent.keys) == 0 {
				continue
			}
			en := ent.Entity
			for _, x := range ent.keys {
				if len(x.Unique) == 0 {
					items = append(items, loaded{&en, x.Item})
				}
			}
		}
		return none{}
	})
	if len(items) == 0 {
		return
	}
	values := make([][]string, len(items))
	for i := range items {
		values[i] = derive(items[i].en, &items[i].it)
	}
	locked(e, func() none {
		for i, l := range items {
			ent := e.entities[l.en.EntityKey]
			if ent == nil || ent.Handle != l.en.Handle || len(values[i]) == 0 {
				continue
			}
			if x := ent.find(l.it.Seq); x != nil && x.Key == l.it.Key && len(x.Unique) == 0 {
				x.Unique = values[i]
				ent.holdUnique(x)
			}
		}
		return none{}
	})
}
