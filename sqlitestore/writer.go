package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// flushDelay is how long an Append may wait for a committer when nobody
// waits for its Commit: the writer goroutine commits it then. Nobody was
// told such a write is stored. The timer is armed by the Append that finds
// it idle and left to fire: at a millisecond, a lone writer's creates
// (one led commit each, about 2,000 a second here) armed and fired it every
// other write, the timer's goroutine and the writer woken each time for
// nothing to commit, about half a thread switch per write more.
const flushDelay = 10 * time.Millisecond

// run is the writer goroutine: woken by kickWriter, it commits what is
// queued, batch after batch, unless another goroutine is committing; it
// ends once the store closes and the queue is empty.
func (s *Store) run() {
	defer close(s.done)
	for range s.kick {
		for {
			// Let the writers that the last commit woke append before
			// taking the queue, so that more of them share the next
			// commit (writes/record in BenchmarkAcknowledgedWrites).
			runtime.Gosched()
			if !s.commitQueued() {
				break
			}
		}
		s.mu.Lock()
		end := s.closing && len(s.queue) == 0 && !s.committing
		s.flushing = false
		if len(s.queue) > 0 && !s.committing {
			// Queued after the last look and before the flag went down.
			s.mu.Unlock()
			s.kickWriter()
			continue
		}
		s.mu.Unlock()
		if end {
			return
		}
	}
}

// kickWriter wakes the writer goroutine, unless it is woken already.
func (s *Store) kickWriter() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// lead is what Commit.Wait calls before it blocks: when nobody is
// committing, the waiter commits the queue itself, which holds its own
// Append. What is queued behind that commit goes to the writer goroutine,
// so that a waiter never commits more than one batch.
func (s *Store) lead() {
	if s.shared.Load() {
		return // the writer goroutine batches them (Append kicked it)
	}
	if s.commitQueued() {
		s.mu.Lock()
		more := len(s.queue) > 0 || s.closing // Close waits for the writer to end
		s.mu.Unlock()
		if more {
			s.kickWriter()
		}
	}
}

// commitQueued commits everything queued in one record, unless the
// queue is empty or another goroutine is committing; it reports whether
// it committed.
func (s *Store) commitQueued() bool {
	s.mu.Lock()
	if s.committing || len(s.queue) == 0 {
		s.mu.Unlock()
		return false
	}
	s.committing = true
	// Swap the queue with the last batch's array, so that neither grows a
	// new one each time.
	batch := s.queue
	s.queue, s.spare = s.spare[:0], nil
	s.mu.Unlock()

	s.commit(batch)
	// Waiters lead while the commits are a lone writer's; when several
	// writers share them, each leading a commit of its own would split
	// them (a batch of one, then the rest), so the writer goroutine takes
	// them all, as Append then asks it to.
	s.shared.Store(len(batch) > 1)
	clear(batch) // let the ops go

	s.mu.Lock()
	s.committing = false
	if s.spare == nil {
		s.spare = batch[:0]
	}
	s.mu.Unlock()
	return true
}

// commit writes the ops of batch to the journal as one record, hands the
// record to the applier and completes the Commits. A write that fails
// fails them all and leaves the journal as it was.
func (s *Store) commit(batch []pending) {
	if s.aborted.Load() {
		for _, p := range batch {
			p.commit.Done(core.Errorf(core.EUNAVAILABLE, "the store was closed before the write was committed"))
		}
		return
	}
	rec, err := appendRecord(make([]byte, recordHeader, recordHeader+recordSize(batch)), batch)
	if err == nil {
		err = s.applyFailure()
	}
	if err == nil && s.sinceEmpty+int64(len(rec)) > journalLimit {
		// The journal is full, or as much waits for the applier in
		// memory: wait until SQLite has it all.
		s.drain()
		if err = s.applyFailure(); err == nil && s.j != nil {
			err = s.emptyJournal()
		}
		if err == nil {
			s.sinceEmpty = 0
		}
	}
	if err == nil && s.j != nil {
		err = s.j.write(rec)
	}
	if err != nil {
		err = s.writeError(err)
	} else {
		s.sinceEmpty += int64(len(rec))
		s.records.Add(1)
		s.toApply(rec[recordHeader:]) // before the Commits are done: a Load then finds it
	}
	for _, p := range batch {
		p.commit.Done(err)
	}
}

// apply applies the ops of batch in one transaction.
func (s *Store) apply(batch []pending) error {
	ctx := context.Background() // a write is never interrupted half way
	st := s.stmts
	if _, err := st.begin.ExecContext(ctx); err != nil {
		return s.writeError(err)
	}
	s.entities.begin()
	err := s.applyOps(ctx, batch)
	if err == nil {
		_, err = st.commit.ExecContext(ctx)
	}
	if err == nil {
		s.txs.Add(1)
		s.entities.commit()
	}
	if err != nil {
		s.entities.rollback()
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
	// An item written more than once in the batch (a message put, then
	// deleted when acked soon after its publish) is written only by its
	// last op. Item ops between two entity ops then touch distinct items,
	// so they go in any order: by entity, in multi-row statements.
	superseded := s.supersededItemOps(batch)
	w := &s.writes
	w.reset()
	n := -1
	for _, p := range batch {
		for _, op := range p.ops {
			n++
			var err error
			switch op.Kind {
			case core.OpPutItem:
				if op.Item.Seq > lastSeq[op.Key] && superseded[n] {
					lastSeq[op.Key] = op.Item.Seq
				}
				if !superseded[n] {
					w.put(op.Key, op.Item)
				}
				continue
			case core.OpDeleteItem:
				if !superseded[n] {
					row, _ := op.ItemRow()
					w.del(op.Key, row)
				}
				continue
			}
			if err := s.flushItems(ctx, w, lastSeq); err != nil {
				return err
			}
			switch op.Kind {
			case core.OpPutEntity:
				err = s.putEntity(ctx, op.Entity)
			case core.OpDeleteEntity:
				delete(lastSeq, op.Key)
				if r := s.entities.rows[op.Key]; r != nil {
					_, err = st.deleteItems.ExecContext(ctx, itemID(r.num, 0), itemID(r.num, core.MaxSeq))
					s.entities.remove(op.Key)
				}
				if err == nil {
					_, err = st.deleteStates.ExecContext(ctx, op.Key.Protocol, op.Key.Name)
				}
				if err == nil {
					_, err = st.deleteEntity.ExecContext(ctx, op.Key.Protocol, op.Key.Name)
				}
			case core.OpReset:
				clear(lastSeq)
				s.entities.reset()
				_, err = st.deleteAllItems.ExecContext(ctx)
				if err == nil {
					_, err = st.deleteAllStates.ExecContext(ctx)
				}
				if err == nil {
					_, err = st.deleteAllEntities.ExecContext(ctx)
				}
			case core.OpPutSessionState:
				state := op.State
				if state == nil {
					state = []byte{} // a state, not none: the column is NOT NULL
				}
				_, err = st.putState.ExecContext(ctx, op.Key.Protocol, op.Key.Name, op.Group, state)
			case core.OpDeleteSessionState:
				_, err = st.deleteState.ExecContext(ctx, op.Key.Protocol, op.Key.Name, op.Group)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", opName(op), err)
			}
		}
	}
	if err := s.flushItems(ctx, w, lastSeq); err != nil {
		return err
	}
	// LastSeq: once per entity and batch rather than once per item, and
	// only past the reserve.
	for k, seq := range lastSeq {
		if err := s.raise(ctx, k, seq); err != nil {
			return fmt.Errorf("raising LastSeq of %v: %w", k, err)
		}
	}
	return nil
}

// itemRef names one row of one entity's items.
type itemRef struct {
	key core.EntityKey
	row uint64
}

// supersededItemOps returns, by position among the batch's ops, the
// OpPutItems and OpDeleteItems that a later op on the same row in the
// batch makes useless; nil when there is none. A replace that keeps its
// row (core.Item.Row) is a delete of the row and a put of it: only the
// put is written, over the old item.
func (s *Store) supersededItemOps(batch []pending) map[int]bool {
	last := s.lastItemOp
	clear(last)
	n := -1
	for _, p := range batch {
		for _, op := range p.ops {
			n++
			if row, ok := op.ItemRow(); ok {
				last[itemRef{op.Key, row}] = n
			}
		}
	}
	var out map[int]bool
	n = -1
	for _, p := range batch {
		for _, op := range p.ops {
			n++
			row, ok := op.ItemRow()
			if ok && last[itemRef{op.Key, row}] != n {
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
	case core.OpPutSessionState:
		return fmt.Sprintf("putting the state of session %q of %v", op.Group, op.Key)
	case core.OpDeleteSessionState:
		return fmt.Sprintf("deleting the state of session %q of %v", op.Group, op.Key)
	}
	return "resetting"
}

func (s *Store) putEntity(ctx context.Context, e *core.Entity) error {
	r, err := s.entities.put(e.EntityKey, e.LastSeq)
	if err != nil {
		return err
	}
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
		string(policy), string(settings), e.Meta, millis(e.Created), int64(e.LastSeq), r.num)
	return err
}

// putItem stores it if its entity is stored, and reports whether it was.
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
	deleteItems                       *sql.Stmt
	raiseLastSeq                      *sql.Stmt
	deleteAllItems, deleteAllEntities *sql.Stmt
	putState, deleteState             *sql.Stmt
	deleteStates, deleteAllStates     *sql.Stmt
	// rows are the multi-row item statements, prepared on first use.
	conn *sql.Conn
	rows map[rowsKey]*sql.Stmt
}

func prepare(ctx context.Context, conn *sql.Conn) (*statements, error) {
	st := &statements{conn: conn, rows: map[rowsKey]*sql.Stmt{}}
	for _, x := range []struct {
		to  **sql.Stmt
		sql string
	}{
		// IMMEDIATE: the writer takes the write lock at once rather than
		// on its first write.
		{&st.begin, `BEGIN IMMEDIATE`},
		{&st.commit, `COMMIT`},
		{&st.rollback, `ROLLBACK`},
		// An entity put again keeps its number.
		{&st.putEntity, `INSERT INTO entities (protocol, name, kind, parent, dead_letter_queue, durable, policy, settings, meta, created, last_seq, num)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (protocol, name) DO UPDATE SET
				kind = excluded.kind, parent = excluded.parent, dead_letter_queue = excluded.dead_letter_queue,
				durable = excluded.durable, policy = excluded.policy, settings = excluded.settings,
				meta = excluded.meta, created = excluded.created,
				last_seq = max(entities.last_seq, excluded.last_seq)`},
		{&st.deleteEntity, `DELETE FROM entities WHERE protocol = ? AND name = ?`},
		// An entity's items are the ids of its number (entities.go).
		{&st.deleteItems, `DELETE FROM items WHERE id BETWEEN ? AND ?`},
		{&st.raiseLastSeq, `UPDATE entities SET last_seq = max(last_seq, ?) WHERE num = ?`},
		{&st.deleteAllItems, `DELETE FROM items`},
		{&st.deleteAllEntities, `DELETE FROM entities`},
		// A state of an entity that is not stored is not stored either.
		{&st.putState, `INSERT OR REPLACE INTO session_states (protocol, name, session_group, state)
			SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM entities WHERE protocol = ?1 AND name = ?2)`},
		{&st.deleteState, `DELETE FROM session_states WHERE protocol = ? AND name = ? AND session_group = ?`},
		{&st.deleteStates, `DELETE FROM session_states WHERE protocol = ? AND name = ?`},
		{&st.deleteAllStates, `DELETE FROM session_states`},
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
		st.begin, st.commit, st.rollback, st.putEntity, st.deleteEntity,
		st.deleteItems, st.raiseLastSeq, st.deleteAllItems, st.deleteAllEntities,
		st.putState, st.deleteState, st.deleteStates, st.deleteAllStates,
	} {
		if stmt != nil {
			if e := stmt.Close(); err == nil {
				err = e
			}
		}
	}
	for _, stmt := range st.rows {
		if e := stmt.Close(); err == nil {
			err = e
		}
	}
	return err
}
