package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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

// loadItems loads the items in id order: by entity, then Seq.
func loadItems(ctx context.Context, tx *sql.Tx, nums map[int64]core.EntityKey, item func(core.EntityKey, core.Item) error) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, key, body, meta, state,
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
			ttl, effectiveTTL                              sql.NullInt64
		)
		if err := rows.Scan(&id, &it.Key, &it.Body, &it.Meta, &state,
			&enqueued, &modified, &scheduled, &ttl, &effectiveTTL, &due,
			&it.Rule, &it.Reason, &lockedTill, &deliveryCount, &it.Persistent, &it.Group); err != nil {
			return err
		}
		num, seq := splitID(id)
		k, ok := nums[num]
		if !ok {
			continue // an entity that is not stored: nor is the item
		}
		it.Seq = seq
		it.State = core.State(state)
		it.EnqueuedAt = fromMillis(enqueued)
		it.ModifiedAt = fromMillis(modified)
		it.ScheduledAt = fromMillis(scheduled)
		it.DueAt = fromMillis(due)
		it.LockedUntil = fromMillis(lockedTill)
		it.TTL = fromNanos(ttl)
		it.EffectiveTTL = fromNanos(effectiveTTL)
		it.DeliveryCount = uint32(deliveryCount)
		if err := item(k, it); err != nil {
			return callbackError{err}
		}
	}
	return rows.Err()
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
