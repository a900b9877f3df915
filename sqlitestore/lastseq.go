package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"math"

	"github.com/lapse-emulator/lapse/core"
)

// seqReserve is how far ahead of the highest Seq put an entity's stored
// LastSeq is raised, so that the entity's row is written once every
// seqReserve items rather than in every transaction that puts one (a
// third page in the WAL of a lone publish's commit). LastSeq stays at
// least the highest Seq ever put (core.Store); after a restart, Seqs go
// on from the reserve's end, with a gap of at most seqReserve.
const seqReserve = 1024

// lastSeqs is what the store knows of its entities' stored LastSeq, so
// that a transaction raises it only past the reserve: known holds the
// committed values, tx what the transaction in progress wrote or read,
// and touched the entities an entity op of that transaction changed
// (read again from the database until it commits).
type lastSeqs struct {
	known   map[core.EntityKey]uint64
	tx      map[core.EntityKey]uint64
	touched map[core.EntityKey]bool
	reset   bool // the transaction holds an OpReset
}

func newLastSeqs() lastSeqs {
	return lastSeqs{known: map[core.EntityKey]uint64{}, tx: map[core.EntityKey]uint64{}, touched: map[core.EntityKey]bool{}}
}

// begin starts a transaction's bookkeeping.
func (l *lastSeqs) begin() {
	clear(l.tx)
	clear(l.touched)
	l.reset = false
}

// entityOp notes an entity op on k in the transaction.
func (l *lastSeqs) entityOp(k core.EntityKey) {
	l.touched[k] = true
	delete(l.tx, k)
}

// resetOp notes an OpReset in the transaction.
func (l *lastSeqs) resetOp() {
	l.reset = true
	clear(l.tx)
}

// committed makes the transaction's values the known ones.
func (l *lastSeqs) committed() {
	if l.reset {
		clear(l.known)
	}
	for k := range l.touched {
		delete(l.known, k)
	}
	for k, v := range l.tx {
		l.known[k] = v
	}
}

// raise makes the stored LastSeq of k at least seq, writing it only when
// seq is past what is stored: then to seq + seqReserve.
func (s *Store) raise(ctx context.Context, k core.EntityKey, seq uint64) error {
	l := &s.lastSeqs
	cur, ok := l.tx[k]
	if !ok && !l.reset && !l.touched[k] {
		cur, ok = l.known[k]
	}
	if !ok {
		var v int64
		err := s.stmts.readLastSeq.QueryRowContext(ctx, k.Protocol, k.Name).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // not stored: nor are its items
		}
		if err != nil {
			return err
		}
		cur = uint64(v)
		l.tx[k] = cur
	}
	if seq <= cur {
		return nil
	}
	to := uint64(math.MaxInt64)
	if seq < to-seqReserve {
		to = seq + seqReserve
	}
	if _, err := s.stmts.raiseLastSeq.ExecContext(ctx, int64(to), k.Protocol, k.Name); err != nil {
		return err
	}
	l.tx[k] = to
	return nil
}
