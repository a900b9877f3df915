package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/lapse-emulator/lapse/core"
)

// The item writes of a batch go to SQLite as multi-row statements, up to
// maxRows items of one entity each: one statement per chunk rather than
// per item, which halves the writer's time under a stream of publishes and
// acks.

// maxRows is the most items one statement writes.
const maxRows = 64

// itemWrites are the item puts and deletes of a run of ops between two
// entity ops, by entity, each item at most once.
type itemWrites struct {
	keys []core.EntityKey
	puts map[core.EntityKey][]*core.Item
	dels map[core.EntityKey][]uint64
}

func (w *itemWrites) reset() {
	w.keys = w.keys[:0]
	if w.puts == nil {
		w.puts = map[core.EntityKey][]*core.Item{}
		w.dels = map[core.EntityKey][]uint64{}
	}
	clear(w.puts)
	clear(w.dels)
}

func (w *itemWrites) see(k core.EntityKey) {
	if _, ok := w.puts[k]; ok {
		return
	}
	if _, ok := w.dels[k]; ok {
		return
	}
	w.keys = append(w.keys, k)
}

func (w *itemWrites) put(k core.EntityKey, it *core.Item) {
	w.see(k)
	w.puts[k] = append(w.puts[k], it)
}

func (w *itemWrites) del(k core.EntityKey, row uint64) {
	w.see(k)
	w.dels[k] = append(w.dels[k], row)
}

// flushItems runs and forgets the collected writes, raising lastSeq for
// the entities that got items.
func (s *Store) flushItems(ctx context.Context, w *itemWrites, lastSeq map[core.EntityKey]uint64) error {
	for _, k := range w.keys {
		puts, dels := w.puts[k], w.dels[k]
		for len(puts) > 0 {
			n := chunk(len(puts))
			put, err := s.putItems(ctx, k, puts[:n])
			if err != nil {
				return fmt.Errorf("putting %d items of %v: %w", n, k, err)
			}
			if put {
				for _, it := range puts[:n] {
					if it.Seq > lastSeq[k] {
						lastSeq[k] = it.Seq
					}
				}
			}
			puts = puts[n:]
		}
		for len(dels) > 0 {
			n := chunk(len(dels))
			if err := s.deleteItemRows(ctx, k, dels[:n]); err != nil {
				return fmt.Errorf("deleting %d items of %v: %w", n, k, err)
			}
			dels = dels[n:]
		}
	}
	w.reset()
	return nil
}

// chunk is how many of n rows the next statement takes: maxRows, else the
// largest power of two, so that few statements are ever prepared.
func chunk(n int) int {
	c := maxRows
	for c > n {
		c /= 2
	}
	return c
}

// rowsKey names a multi-row statement: put or delete, and its row count.
type rowsKey struct {
	put bool
	n   int
}

// rowsStmt returns the prepared statement of k.
func (s *Store) rowsStmt(ctx context.Context, k rowsKey) (*sql.Stmt, error) {
	st := s.stmts
	if stmt := st.rows[k]; stmt != nil {
		return stmt, nil
	}
	var q string
	if k.put {
		// ?1 and ?2 are the entity; the VALUES placeholders number on from
		// ?3. An item of an entity that is not stored is not stored either.
		row := "(" + strings.TrimSuffix(strings.Repeat("?, ", itemColumns), ", ") + ")"
		q = `INSERT OR REPLACE INTO items (id, seq, key, body, meta, state,
				enqueued_at, modified_at, scheduled_at, ttl_ns, effective_ttl_ns, due_at,
				rule, reason, locked_until, delivery_count, persistent, item_group)
			VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", k.n), ", ")
	} else {
		q = `DELETE FROM items WHERE id IN (` + strings.TrimSuffix(strings.Repeat("?, ", k.n), ", ") + `)`
	}
	stmt, err := st.conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	st.rows[k] = stmt
	return stmt, nil
}

// itemColumns is how many columns an item row has.
const itemColumns = 18

// putItems writes items of entity k in one statement; put is false when
// the entity is not stored, so neither are they.
func (s *Store) putItems(ctx context.Context, k core.EntityKey, items []*core.Item) (put bool, err error) {
	r := s.entities.rows[k]
	if r == nil {
		return false, nil
	}
	stmt, err := s.rowsStmt(ctx, rowsKey{put: true, n: len(items)})
	if err != nil {
		return false, err
	}
	args := s.args[:0]
	for _, it := range items {
		args = append(args, itemID(r.num, core.RowOf(it.Seq, it.Row)), movedSeq(it), it.Key, it.Body, it.Meta, int64(it.State),
			millis(it.EnqueuedAt), millis(it.ModifiedAt), millis(it.ScheduledAt),
			ttlNanos(it.TTL), ttlNanos(it.EffectiveTTL), millis(it.DueAt),
			it.Rule, it.Reason, millis(it.LockedUntil), int64(it.DeliveryCount), it.Persistent, it.Group)
	}
	_, err = stmt.ExecContext(ctx, args...)
	clear(args)
	s.args = args[:0]
	return err == nil, err
}

// movedSeq is the seq column of it: NULL when its id holds its Seq.
func movedSeq(it *core.Item) any {
	if it.Row == 0 || it.Row == it.Seq {
		return nil
	}
	return int64(it.Seq)
}

// deleteItemRows deletes the items of entity k kept at rows, in one
// statement.
func (s *Store) deleteItemRows(ctx context.Context, k core.EntityKey, rows []uint64) error {
	r := s.entities.rows[k]
	if r == nil {
		return nil // nor are its items
	}
	stmt, err := s.rowsStmt(ctx, rowsKey{put: false, n: len(rows)})
	if err != nil {
		return err
	}
	args := s.args[:0]
	for _, row := range rows {
		args = append(args, itemID(r.num, row))
	}
	_, err = stmt.ExecContext(ctx, args...)
	clear(args)
	s.args = args[:0]
	return err
}
