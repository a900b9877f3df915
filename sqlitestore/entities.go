package sqlitestore

import (
	"context"
	"database/sql"
	"math"

	"github.com/lapse-emulator/lapse/core"
)

// An item's id, its rowid in the items table, is its entity's number
// times 2^seqBits plus its Seq (migration 0004): one b-tree for the items,
// and an entity's items one range of ids.
const (
	seqBits = 43
	// maxNum is the largest entity number: about a million entities
	// stored at once.
	maxNum = 1<<(63-seqBits) - 1
)

// itemID is the id of item seq of the entity numbered num.
func itemID(num int64, seq uint64) int64 { return num<<seqBits | int64(seq) }

// splitID returns the entity number and the Seq of an item id.
func splitID(id int64) (num int64, seq uint64) {
	return id >> seqBits, uint64(id & (1<<seqBits - 1))
}

// seqReserve is how far ahead of the highest Seq put an entity's stored
// LastSeq is raised, so that the entity's row is written once every
// seqReserve items rather than in every transaction that puts one (a
// third page in the WAL of a lone publish's commit). LastSeq stays at
// least the highest Seq ever put (core.Store); after a restart, Seqs go
// on from the reserve's end, with a gap of at most seqReserve.
const seqReserve = 1024

// entityRow is what the writer keeps of a stored entity: its number and
// the LastSeq its row holds.
type entityRow struct {
	num     int64
	lastSeq uint64
}

// entityRows are the stored entities, as the writer knows them: it reads
// them once at Open and then changes them with every entity op, undoing a
// failed transaction's changes. They are the writer's: only the goroutine
// holding connMu touches them.
type entityRows struct {
	rows map[core.EntityKey]*entityRow
	used map[int64]bool // the numbers in use
	low  int64          // no number below it is free
	undo []func()       // the changes of the transaction in progress, to undo
}

// readEntityRows reads the stored entities' numbers and LastSeqs.
func readEntityRows(ctx context.Context, conn *sql.Conn) (entityRows, error) {
	e := entityRows{rows: map[core.EntityKey]*entityRow{}, used: map[int64]bool{}, low: 1}
	rows, err := conn.QueryContext(ctx, `SELECT protocol, name, num, last_seq FROM entities`)
	if err != nil {
		return e, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k       core.EntityKey
			r       entityRow
			lastSeq int64
		)
		if err := rows.Scan(&k.Protocol, &k.Name, &r.num, &lastSeq); err != nil {
			return e, err
		}
		r.lastSeq = uint64(lastSeq)
		e.rows[k] = &r
		e.used[r.num] = true
	}
	return e, rows.Err()
}

// begin starts a transaction.
func (e *entityRows) begin() { e.undo = e.undo[:0] }

// commit keeps the transaction's changes.
func (e *entityRows) commit() { clear(e.undo); e.undo = e.undo[:0] }

// rollback undoes the transaction's changes, the last first.
func (e *entityRows) rollback() {
	for i := len(e.undo) - 1; i >= 0; i-- {
		e.undo[i]()
	}
	e.commit()
}

// put returns the row of entity k, stored with lastSeq by an OpPutEntity:
// its own, or a new one with the lowest free number.
func (e *entityRows) put(k core.EntityKey, lastSeq uint64) (*entityRow, error) {
	if r := e.rows[k]; r != nil {
		old := r.lastSeq
		r.lastSeq = max(old, lastSeq)
		e.undo = append(e.undo, func() { r.lastSeq = old })
		return r, nil
	}
	num, low := e.low, e.low
	for e.used[num] {
		num++
	}
	if num > maxNum {
		return nil, core.Errorf(core.EINVALID, "the data folder holds %d entities already, the most it can", len(e.rows))
	}
	r := &entityRow{num: num, lastSeq: lastSeq}
	e.rows[k], e.used[num], e.low = r, true, num+1
	e.undo = append(e.undo, func() { delete(e.rows, k); delete(e.used, num); e.low = low })
	return r, nil
}

// remove forgets entity k, whose row and items are deleted.
func (e *entityRows) remove(k core.EntityKey) {
	r := e.rows[k]
	if r == nil {
		return
	}
	low := e.low
	delete(e.rows, k)
	delete(e.used, r.num)
	e.low = min(e.low, r.num)
	e.undo = append(e.undo, func() { e.rows[k], e.used[r.num], e.low = r, true, low })
}

// reset forgets every entity.
func (e *entityRows) reset() {
	rows, used, low := e.rows, e.used, e.low
	e.rows, e.used, e.low = map[core.EntityKey]*entityRow{}, map[int64]bool{}, 1
	e.undo = append(e.undo, func() { e.rows, e.used, e.low = rows, used, low })
}

// raise makes the stored LastSeq of k at least seq, writing it only when
// seq is past what is stored: then to seq + seqReserve.
func (s *Store) raise(ctx context.Context, k core.EntityKey, seq uint64) error {
	r := s.entities.rows[k]
	if r == nil || seq <= r.lastSeq {
		return nil // not stored (nor are its items), or within the reserve
	}
	to := uint64(math.MaxInt64)
	if seq < to-seqReserve {
		to = seq + seqReserve
	}
	if _, err := s.stmts.raiseLastSeq.ExecContext(ctx, int64(to), r.num); err != nil {
		return err
	}
	old := r.lastSeq
	r.lastSeq = to
	s.entities.undo = append(s.entities.undo, func() { r.lastSeq = old })
	return nil
}
