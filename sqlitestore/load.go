package sqlitestore

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// Load calls entity for every stored entity, ordered by protocol and name,
// then item for every stored item, ordered by entity and Seq, and then
// session for every stored session state, ordered by entity and session. Times come
// back truncated to the millisecond, in UTC. An error from a callback ends
// Load, which returns it. Nothing is committed while Load runs, so its
// callbacks may Append but must not wait for a Commit.
func (s *Store) Load(ctx context.Context, entity func(core.Entity) error, item func(core.EntityKey, core.Item) error, session func(core.EntityKey, core.SessionState) error) error {
	s.drain() // what was committed, from the journal into SQLite
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.dbClosed {
		return core.Errorf(core.EUNAVAILABLE, "the store is closed")
	}
	// One read transaction, so that the items match the entities.
	tx, err := s.conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.readError(err)
	}
	defer func() { _ = tx.Rollback() }()
	nums, err := loadEntities(ctx, tx, entity)
	if err != nil {
		return s.readError(err)
	}
	if err := loadItems(ctx, tx, nums, item); err != nil {
		return s.readError(err)
	}
	if err := loadStates(ctx, tx, session); err != nil {
		return s.readError(err)
	}
	return nil
}

// callbackError carries an error returned by a Load callback, which Load
// returns as it is.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

func (s *Store) readError(err error) error {
	var cb callbackError
	if errors.As(err, &cb) {
		return cb.err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return core.Errorf(core.EINTERNAL, "reading data folder %q: %v", s.folder, err)
}

// loadEntities loads the entities and returns their keys by number.
func loadEntities(ctx context.Context, tx *sql.Tx, entity func(core.Entity) error) (map[int64]core.EntityKey, error) {
	rows, err := tx.QueryContext(ctx, `SELECT protocol, name, kind, parent, dead_letter_queue, durable,
		policy, settings, meta, created, last_seq, num FROM entities ORDER BY protocol, name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	nums := map[int64]core.EntityKey{}
	for rows.Next() {
		var (
			e                core.Entity
			policy, settings []byte
			created          sql.NullInt64
			lastSeq, num     int64
		)
		if err := rows.Scan(&e.Protocol, &e.Name, &e.Kind, &e.Parent, &e.DeadLetterQueue, &e.Durable,
			&policy, &settings, &e.Meta, &created, &lastSeq, &num); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(policy, &e.Policy); err != nil {
			return nil, fmt.Errorf("policy of entity %v: %w", e.EntityKey, err)
		}
		if err := json.Unmarshal(settings, &e.Settings); err != nil {
			return nil, fmt.Errorf("settings of entity %v: %w", e.EntityKey, err)
		}
		e.Created = fromMillis(created)
		e.LastSeq = uint64(lastSeq)
		nums[num] = e.EntityKey
		if err := entity(e); err != nil {
			return nil, callbackError{err}
		}
	}
	return nums, rows.Err()
}

// loadItems loads the items by entity, then Seq. They are read in id
// order, which is Seq order but for the items kept in the row of an item
// they replaced (core.Item.Row, whose seq column is set): those wait in a
// heap until the items before them have gone.
func loadItems(ctx context.Context, tx *sql.Tx, nums map[int64]core.EntityKey, item func(core.EntityKey, core.Item) error) error {
	var (
		moved movedItems
		cur   core.EntityKey
	)
	// flush hands over the moved items of the current entity below seq.
	flush := func(seq uint64) error {
		for len(moved) > 0 && moved[0].Seq < seq {
			if err := item(cur, heap.Pop(&moved).(core.Item)); err != nil {
				return callbackError{err}
			}
		}
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, seq, key, body, meta, state,
		enqueued_at, modified_at, scheduled_at, ttl_ns, effective_ttl_ns, due_at,
		rule, reason, locked_until, delivery_count, persistent, item_group
		FROM items ORDER BY id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			it                                             core.Item
			id, state, deliveryCount                       int64
			enqueued, modified, scheduled, due, lockedTill sql.NullInt64
			ttl, effectiveTTL, movedTo                     sql.NullInt64
		)
		if err := rows.Scan(&id, &movedTo, &it.Key, &it.Body, &it.Meta, &state,
			&enqueued, &modified, &scheduled, &ttl, &effectiveTTL, &due,
			&it.Rule, &it.Reason, &lockedTill, &deliveryCount, &it.Persistent, &it.Group); err != nil {
			return err
		}
		num, row := splitID(id)
		k, ok := nums[num]
		if !ok {
			continue // an entity that is not stored: nor is the item
		}
		if k != cur {
			if err := flush(math.MaxUint64); err != nil {
				return err
			}
			cur = k
		}
		it.Seq = row
		if movedTo.Valid {
			it.Seq, it.Row = uint64(movedTo.Int64), row
		}
		it.State = core.State(state)
		it.EnqueuedAt = fromMillis(enqueued)
		it.ModifiedAt = fromMillis(modified)
		it.ScheduledAt = fromMillis(scheduled)
		it.DueAt = fromMillis(due)
		it.LockedUntil = fromMillis(lockedTill)
		it.TTL = fromNanos(ttl)
		it.EffectiveTTL = fromNanos(effectiveTTL)
		it.DeliveryCount = uint32(deliveryCount)
		if it.Row != 0 {
			heap.Push(&moved, it)
			continue
		}
		if err := flush(it.Seq); err != nil {
			return err
		}
		if err := item(k, it); err != nil {
			return callbackError{err}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush(math.MaxUint64)
}

// movedItems is a heap of items by Seq.
type movedItems []core.Item

func (h movedItems) Len() int           { return len(h) }
func (h movedItems) Less(i, j int) bool { return h[i].Seq < h[j].Seq }
func (h movedItems) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *movedItems) Push(x any)        { *h = append(*h, x.(core.Item)) }
func (h *movedItems) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = core.Item{}
	*h = old[:len(old)-1]
	return x
}

func loadStates(ctx context.Context, tx *sql.Tx, session func(core.EntityKey, core.SessionState) error) error {
	rows, err := tx.QueryContext(ctx, `SELECT protocol, name, session_group, state
		FROM session_states ORDER BY protocol, name, session_group`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k  core.EntityKey
			st core.SessionState
		)
		if err := rows.Scan(&k.Protocol, &k.Name, &st.Group, &st.State); err != nil {
			return err
		}
		if err := session(k, st); err != nil {
			return callbackError{err}
		}
	}
	return rows.Err()
}

// millis is how a time is stored: Unix milliseconds (rounded down), NULL for
// the zero time.
func millis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func fromMillis(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}

// ttlNanos is how a TTL is stored: its nanoseconds, -1 for Forever, NULL
// when unset (as core.TTL's JSON).
func ttlNanos(t core.TTL) any {
	switch {
	case !t.IsSet():
		return nil
	case t.IsForever():
		return int64(-1)
	}
	return int64(t.Duration())
}

func fromNanos(ns sql.NullInt64) core.TTL {
	switch {
	case !ns.Valid:
		return core.NoTTL
	case ns.Int64 < 0:
		return core.Forever
	}
	return core.After(time.Duration(ns.Int64))
}
