package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"

	"github.com/lapse-emulator/lapse/core"
)

// run is the writer goroutine: it takes everything queued, commits it in
// one transaction and completes the Commits, until the store closes and
// the queue is empty.
func (s *Store) run() {
	defer close(s.done)
	var batch []pending
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closing {
			s.wake.Wait()
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		// Let the writers that the last commit woke append before taking
		// the queue: with 16 writers waiting on their Commits, this more
		// than doubles the writes per transaction (from about 6 to 14 on
		// two cores, BenchmarkAcknowledgedWrites), and a lone writer
		// loses nothing by it.
		s.mu.Unlock()
		runtime.Gosched()
		s.mu.Lock()
		// Swap the queue with the last batch's slice, so that neither
		// grows a new array each time.
		batch, s.queue = s.queue, batch[:0]
		s.mu.Unlock()

		s.commit(batch)
		clear(batch) // let the ops go
	}
}

// commit applies batch in one transaction and completes its Commits. If
// that fails, it tries each Append in a transaction of its own, so that one
// Append that cannot be applied does not fail the others with it.
func (s *Store) commit(batch []pending) {
	if s.aborted.Load() {
		for _, p := range batch {
			p.commit.Done(core.Errorf(core.EUNAVAILABLE, "the store was closed before the write was committed"))
		}
		return
	}
	s.connMu.Lock()
	defer s.connMu.Unlock()
	err := s.apply(batch)
	if err == nil || len(batch) == 1 {
		for _, p := range batch {
			p.commit.Done(err)
		}
		return
	}
	for i, p := range batch {
		p.commit.Done(s.apply(batch[i : i+1]))
	}
}

// apply applies the ops of batch in one transaction.
func (s *Store) apply(batch []pending) error {
	ctx := context.Background() // a write is never interrupted half way
	st := s.stmts
	if _, err := st.begin.ExecContext(ctx); err != nil {
		return s.writeError(err)
	}
	err := s.applyOps(ctx, batch)
	if err == nil {
		_, err = st.commit.ExecContext(ctx)
	}
	if err == nil {
		s.txs.Add(1)
	}
	if err != nil {
		// After a failed COMMIT the transaction may still be open.
		_, _ = st.rollback.ExecContext(ctx)
		return s.writeError(err)
	}
	return nil
}

func (s *Store) applyOps(ctx context.Context, batch []pending) error {
	st := s.stmts
	lastSeq := s.lastSeq
	clear(lastSeq)
	// An item put and then put again or deleted in the same batch (a
	// message acked soon after its publish) is written only by its last op.
	superseded := s.supersededPuts(batch)
	n := -1
	for _, p := range batch {
		for _, op := range p.ops {
			n++
			var err error
			if op.Kind == core.OpPutItem && superseded[n] {
				if op.Item.Seq > lastSeq[op.Key] {
					lastSeq[op.Key] = op.Item.Seq
				}
				continue
			}
			switch op.Kind {
			case core.OpPutEntity:
				err = s.putEntity(ctx, op.Entity)
			case core.OpDeleteEntity:
				delete(lastSeq, op.Key)
				_, err = st.deleteItems.ExecContext(ctx, op.Key.Protocol, op.Key.Name)
				if err == nil {
					_, err = st.deleteEntity.ExecContext(ctx, op.Key.Protocol, op.Key.Name)
				}
			case core.OpPutItem:
				var put bool
				put, err = s.putItem(ctx, op.Key, op.Item)
				if put && op.Item.Seq > lastSeq[op.Key] {
					lastSeq[op.Key] = op.Item.Seq
				}
			case core.OpDeleteItem:
				_, err = st.deleteItem.ExecContext(ctx, op.Key.Protocol, op.Key.Name, int64(op.Seq))
			case core.OpReset:
				clear(lastSeq)
				_, err = st.deleteAllItems.ExecContext(ctx)
				if err == nil {
					_, err = st.deleteAllEntities.ExecContext(ctx)
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", opName(op), err)
			}
		}
	}
	// LastSeq: once per entity and batch rather than once per item.
	for k, seq := range lastSeq {
		if _, err := st.raiseLastSeq.ExecContext(ctx, int64(seq), k.Protocol, k.Name); err != nil {
			return fmt.Errorf("raising LastSeq of %v: %w", k, err)
		}
	}
	return nil
}

// itemRef names one item of one entity.
type itemRef struct {
	key core.EntityKey
	seq uint64
}

// supersededPuts returns, by position among the batch's ops, the OpPutItems
// that a later OpPutItem or OpDeleteItem of the same item in the batch
// makes useless; nil when there is none.
func (s *Store) supersededPuts(batch []pending) map[int]bool {
	last := s.lastItemOp
	clear(last)
	n := -1
	for _, p := range batch {
		for _, op := range p.ops {
			n++
			switch op.Kind {
			case core.OpPutItem:
				last[itemRef{op.Key, op.Item.Seq}] = n
			case core.OpDeleteItem:
				last[itemRef{op.Key, op.Seq}] = n
			}
		}
	}
	var out map[int]bool
	n = -1
	for _, p := range batch {
		for _, op := range p.ops {
			n++
			if op.Kind == core.OpPutItem && last[itemRef{op.Key, op.Item.Seq}] != n {
				if out == nil {
					out = map[int]bool{}
				}
				out[n] = true
			}
		}
	}
	return out
}

func opName(op core.Op) string {
	switch op.Kind {
	case core.OpPutEntity:
		return "putting entity " + op.Entity.String()
	case core.OpDeleteEntity:
		return "deleting entity " + op.Key.String()
	case core.OpPutItem:
		return fmt.Sprintf("putting item %d of %v", op.Item.Seq, op.Key)
	case core.OpDeleteItem:
		return fmt.Sprintf("deleting item %d of %v", op.Seq, op.Key)
	}
	return "resetting"
}

func (s *Store) putEntity(ctx context.Context, e *core.Entity) error {
	policy, err := json.Marshal(e.Policy)
	if err != nil {
		return err
	}
	settings := []byte("[]")
	if len(e.Settings) > 0 {
		if settings, err = json.Marshal(e.Settings); err != nil {
			return err
		}
	}
	_, err = s.stmts.putEntity.ExecContext(ctx,
		e.Protocol, e.Name, e.Kind, e.Parent, e.DeadLetterQueue, e.Durable,
		string(policy), string(settings), e.Meta, millis(e.Created), int64(e.LastSeq))
	return err
}

// putItem stores it if its entity is stored, and reports whether it was.
func (s *Store) putItem(ctx context.Context, k core.EntityKey, it *core.Item) (bool, error) {
	res, err := s.stmts.putItem.ExecContext(ctx,
		k.Protocol, k.Name, int64(it.Seq), it.Key, it.Body, it.Meta, int64(it.State),
		millis(it.EnqueuedAt), millis(it.ModifiedAt), millis(it.ScheduledAt),
		ttlNanos(it.TTL), ttlNanos(it.EffectiveTTL), millis(it.DueAt),
		it.Rule, it.Reason, millis(it.LockedUntil), int64(it.DeliveryCount), it.Persistent)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// writeError is the error a failed write hands to its Commits.
func (s *Store) writeError(err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	return core.Errorf(core.EINTERNAL, "writing to data folder %q: %v", s.folder, err)
}

// statements are the writer's prepared statements.
type statements struct {
	begin, commit, rollback           *sql.Stmt
	putEntity, deleteEntity           *sql.Stmt
	putItem, deleteItem, deleteItems  *sql.Stmt
	raiseLastSeq                      *sql.Stmt
	deleteAllItems, deleteAllEntities *sql.Stmt
}

func prepare(ctx context.Context, conn *sql.Conn) (*statements, error) {
	st := &statements{}
	for _, x := range []struct {
		to  **sql.Stmt
		sql string
	}{
		// IMMEDIATE: the writer takes the write lock at once rather than
		// on its first write.
		{&st.begin, `BEGIN IMMEDIATE`},
		{&st.commit, `COMMIT`},
		{&st.rollback, `ROLLBACK`},
		{&st.putEntity, `INSERT INTO entities (protocol, name, kind, parent, dead_letter_queue, durable, policy, settings, meta, created, last_seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (protocol, name) DO UPDATE SET
				kind = excluded.kind, parent = excluded.parent, dead_letter_queue = excluded.dead_letter_queue,
				durable = excluded.durable, policy = excluded.policy, settings = excluded.settings,
				meta = excluded.meta, created = excluded.created,
				last_seq = max(entities.last_seq, excluded.last_seq)`},
		{&st.deleteEntity, `DELETE FROM entities WHERE protocol = ? AND name = ?`},
		{&st.deleteItems, `DELETE FROM items WHERE protocol = ? AND name = ?`},
		// An item of an entity that is not stored is not stored either.
		{&st.putItem, `INSERT OR REPLACE INTO items (protocol, name, seq, key, body, meta, state,
				enqueued_at, modified_at, scheduled_at, ttl_ns, effective_ttl_ns, due_at,
				rule, reason, locked_until, delivery_count, persistent)
			SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18
			WHERE EXISTS (SELECT 1 FROM entities WHERE protocol = ?1 AND name = ?2)`},
		{&st.deleteItem, `DELETE FROM items WHERE protocol = ? AND name = ? AND seq = ?`},
		{&st.raiseLastSeq, `UPDATE entities SET last_seq = max(last_seq, ?) WHERE protocol = ? AND name = ?`},
		{&st.deleteAllItems, `DELETE FROM items`},
		{&st.deleteAllEntities, `DELETE FROM entities`},
	} {
		stmt, err := conn.PrepareContext(ctx, x.sql)
		if err != nil {
			st.close()
			return nil, err
		}
		*x.to = stmt
	}
	return st, nil
}

func (st *statements) close() error {
	var err error
	for _, stmt := range []*sql.Stmt{
		st.begin, st.commit, st.rollback, st.putEntity, st.deleteEntity, st.putItem,
		st.deleteItem, st.deleteItems, st.raiseLastSeq, st.deleteAllItems, st.deleteAllEntities,
	} {
		if stmt != nil {
			if e := stmt.Close(); err == nil {
				err = e
			}
		}
	}
	return err
}
