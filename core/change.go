package core

import "time"

// ChangeFunc decides a conditional change of the keyed items of one entity
// (Engine.Change). read returns the item stored under a key at the
// change's instant, if it is there and has not expired by then (CO-6).
// The func returns the keys of the items to remove and the keyed items to
// write (each replacing the item of its key), or an error, which cancels
// the change and which Change returns as it is.
//
// It runs inside the engine's lock, for every protocol: it must be pure
// and quick (no I/O, no waiting, no call of the Engine: do the costly work
// before Change and only decide here), and must not modify what read
// returns.
type ChangeFunc func(read func(key string) (Item, bool)) (remove []string, put []Item, err error)

// Change reads, decides and writes keyed items of entity k at one instant,
// under the engine's lock: fn sees the items as they are at now, with
// everything due up to now applied (an item whose expiry is now is gone),
// and what it returns is written at that same instant as one change that
// the store commits all of or none, as Write does: a read-check-write such
// as a replace, a delete with If-Match or a transactional batch. It returns
// the items written, in the order of put, each with a new Seq and
// ModifiedAt = now, so that its TTL restarts (CO-1).
func (e *Engine) Change(now time.Time, k EntityKey, fn ChangeFunc) ([]Item, *Commit, error) {
	return runEntity(e, now, k, func(ent *entity) ([]Item, error) {
		return e.change(ent, now, fn)
	})
}

// change is Change's operation on ent, written at now.
func (e *Engine) change(ent *entity, now time.Time, fn ChangeFunc) ([]Item, error) {
	remove, put, err := e.decide(ent, fn)
	if err != nil {
		return nil, err
	}
	for _, key := range remove {
		if x := ent.keys[key]; x != nil {
			e.noteChange(ent, &x.Item, nil, false)
			e.removeItem(x)
		}
	}
	// The items put replaces go first, so that the unique values they
	// held are free for every item of put (changeClash checked them).
	var prevs []*Item
	for i := 0; i < len(put) && len(ent.unique) > 0; i++ {
		if old := ent.keys[put[i].Key]; old != nil {
			if prevs == nil {
				prevs = make([]*Item, len(put))
			}
			was := old.Item
			prevs[i] = &was
			e.removeItem(old)
		}
	}
	out := make([]Item, 0, len(put))
	e.written = now
	for i, it := range put {
		var prev *Item
		if prevs != nil {
			prev = prevs[i]
		}
		if old := ent.keys[it.Key]; old != nil { // an earlier item of put
			was := old.Item
			prev = &was
			e.removeItem(old)
		}
		var row uint64 // the row of the item it replaces, which it takes
		if prev != nil {
			row = RowOf(prev.Seq, prev.Row)
		}
		it.State = Active
		w, err := e.enqueueAt(ent, it, row)
		if err != nil {
			e.written = time.Time{}
			// Keyed active items are not refused, and the keys and
			// unique values are checked before anything changed
			// (decide): nothing to undo.
			return nil, err
		}
		e.noteChange(ent, prev, &w, false)
		out = append(out, w)
	}
	e.written = time.Time{}
	if len(put) > 0 {
		e.touch(ent, UseSend)
	}
	return out, nil
}

// decide runs fn on entity ent, with the engine's lock held, and checks
// what it returns. Nothing has changed yet: if fn panics, the operation's
// guard (op.go) releases the lock and the panic goes on as a *LockReleased.
func (e *Engine) decide(ent *entity, fn ChangeFunc) (remove []string, put []Item, err error) {
	read := func(key string) (Item, bool) {
		if x := ent.keys[key]; x != nil {
			return x.Item, true
		}
		return Item{}, false
	}
	remove, put, err = fn(read)
	if err != nil {
		return nil, nil, err
	}
	for _, it := range put {
		if it.Key == "" {
			return nil, nil, Errorf(EINVALID, "Change needs item keys")
		}
	}
	if err := ent.changeClash(remove, put); err != nil {
		return nil, nil, err
	}
	return remove, put, nil
}
