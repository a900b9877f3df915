// Package sqlitestore is lapse's core.Store on SQLite (modernc.org/sqlite,
// pure Go). A data folder holds one database file, lapse.db, its journal,
// lapse.journal, and a lock file that keeps a second lapse process out.
//
// Writes go through group commit: Append only queues its ops, and one
// goroutine at a time writes everything queued to the journal as one
// record, with one write(2), and completes the Commits of all the Appends
// it took. That is the goroutine that waits for a Commit when nothing else
// is committing (core.NewLedCommit: a lone writer's publish is committed on
// its own goroutine, with no hand-off), else the store's writer goroutine,
// which takes over whenever more is queued behind a commit, commits
// everything while several writers share the commits, and commits, within
// flushDelay, what nobody waits for.
//
// The applier goroutine then applies the journal's records to SQLite: all
// that gathered in applyDelay in one transaction, so that SQLite's cost of
// a transaction is shared by thousands of writes rather than by the few
// that waited together, and a write that a later one in the same
// transaction makes useless is skipped. Once SQLite holds every record of
// the journal and the journal has reached journalLimit, the journal is
// emptied; Close empties it too. Load first waits for the applier, so that
// it reads every write whose Commit is done. A record the applier cannot
// apply stops the store from taking writes and leaves the journal to the
// next Open.
//
// # Durability
//
// A commit is the write(2) of its record to the journal, without fsync:
// when it returns the record is in the operating system's page cache,
// which belongs to the kernel, not to the process. A crash or kill -9 of
// lapse loses nothing committed (EM-3): Open applies what the journal
// still holds before anything else, and drops a record cut short by the
// crash (its Commits were not done). A record that does not decode before
// the end of the journal is damage, not a crash: Open refuses the folder
// unless Options.RepairJournal is set (journalscan.go). Applying a record
// again is harmless: every op says what an entity or item is, or that it
// is gone. SQLite runs in WAL mode with synchronous=NORMAL. Only a crash of the machine
// (power loss, kernel panic) can lose the last commits, and even then the
// database is not damaged. Options.FullSync asks for an fsync of the
// journal at every commit, and of SQLite's, for those who want that too.
//
// The connection holds the database in SQLite's exclusive locking mode:
// the lock file keeps other lapse processes out anyway, and so SQLite takes
// its file locks once and keeps the WAL index in memory instead of a
// shared-memory file. Other programs cannot read lapse.db while lapse
// runs; after a crash, lapse.db alone lacks what lapse.journal holds until
// lapse opens the folder again.
package sqlitestore

import (
	"context"
	"database/sql"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

var _ core.Store = (*Store)(nil)

// Memory is the data folder that keeps nothing: the store lives in memory
// and is gone when it is closed.
const Memory = ":memory:"

// Options tune a Store. The zero value is what lapse runs with.
type Options struct {
	// FullSync makes every commit wait for an fsync of the journal, and
	// SQLite's transactions and the emptying of the journal for theirs
	// (synchronous=FULL), so that acknowledged writes survive a power loss
	// too, not only a crash of the process. It costs throughput.
	FullSync bool
	// RepairJournal opens a data folder whose journal is damaged before
	// its end (a record that does not decode with more after it), which
	// Open otherwise refuses: it logs what it drops, where, and how many
	// records after the damage it could read, applies those, and keeps a
	// copy of the damaged journal next to it. A torn last record, the
	// trace of a kill, is dropped either way.
	RepairJournal bool
	// Logger receives what Open says of the journal: the torn record it
	// drops, the damage it repairs. Nil logs nothing.
	Logger *slog.Logger

	// beforeEmpty, if set, is called each time SQLite holds every record
	// of the journal and the journal is about to be emptied: the tests
	// stop there as a crash would.
	beforeEmpty func()
}

// Store is a core.Store that keeps lapse's entities and items in SQLite.
// Its methods are safe for concurrent use.
type Store struct {
	folder string
	db     *sql.DB
	conn   *sql.Conn // the one connection, the writer's
	stmts  *statements
	unlock func() error // releases the data folder's lock

	// connMu serializes the use of conn by the writer and Load.
	connMu   lockorder.Mutex
	dbClosed bool // on connMu

	mu         lockorder.Mutex
	queue      []pending // Appends waiting to be committed, in order
	spare      []pending // the last batch's array, for the next queue
	committing bool      // a goroutine is applying a batch
	// shared is set while commits hold several Appends: the writer
	// goroutine commits, not the waiters.
	shared   atomic.Bool
	flushing bool // flush is set to fire
	closing  bool // no more Appends
	// kick wakes the writer goroutine: more is queued behind a commit, or
	// the store closes. flush fires flushDelay after an Append that found
	// it idle, for the Appends nobody waits for.
	kick  chan struct{}
	flush *time.Timer

	aborted atomic.Bool // Close's context ended: fail what is still queued

	lastSeq map[core.EntityKey]uint64 // the writer's scratch: highest Seq put per entity in a batch
	// entities are the stored entities' numbers and LastSeqs, the
	// writer's (on connMu).
	entities entityRows
	// lastItemOp is the writer's scratch: the position of each item's last op in a batch.
	lastItemOp map[itemRef]int
	// args is the writer's scratch: a statement's arguments.
	args []any
	// writes is the writer's scratch: a batch's item writes.
	writes  itemWrites
	txs     atomic.Uint64 // SQLite transactions committed, for the benchmarks
	records atomic.Uint64 // journal records written, for the benchmarks

	// j is the journal; nil for Memory, which keeps nothing. sinceEmpty
	// is the size of the records written since it was last emptied (the
	// committer's).
	j          *journal
	sinceEmpty int64
	// beforeEmpty is Options.beforeEmpty.
	beforeEmpty func()
	// The applier's queue and state, on amu; acond is signalled when a
	// record is queued, applied, or the applier is asked to hurry or stop.
	amu      lockorder.Mutex
	acond    *sync.Cond
	aq       [][]byte  // records written, not yet applied, in order
	aFirst   time.Time // when the first of them was queued
	aBytes   int       // their size
	written  int64     // records handed to the applier
	applied  int64     // of which applied
	aUrgent  int       // drains waiting: apply without delay
	aStop    bool      // the store closes
	aAbandon bool      // ... without applying what is queued
	aErr     error     // a record could not be applied
	aNow     chan struct{}
	aDone    chan struct{} // closed when the applier ends

	done      chan struct{} // closed when the writer goroutine ends
	closeOnce sync.Once
	closeErr  error
}

// pending is one Append waiting for the writer.
type pending struct {
	ops    []core.Op
	commit *core.Commit
}

// Append queues ops to be applied after those of every earlier Append and
// returns their Commit, done once they are committed (durable as the
// package doc says) or failed. It does not wait for I/O. The store keeps
// ops and what they point to until the Commit is done: the caller must not
// change them. An Append whose ops are malformed (a put without its Entity
// or Item, an unknown kind, a Seq above core.MaxSeq) fails as a whole with
// core.EINVALID and changes nothing.
func (s *Store) Append(ops []core.Op) *core.Commit {
	c := core.NewLedCommit(s.lead)
	if err := validate(ops); err != nil {
		c.Done(err)
		return c
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		c.Done(core.Errorf(core.EUNAVAILABLE, "the store is closed"))
		return c
	}
	if len(ops) == 0 && len(s.queue) == 0 && !s.committing {
		s.mu.Unlock()
		c.Done(nil) // nothing to wait for: every earlier Append is committed
		return c
	}
	s.queue = append(s.queue, pending{ops: ops, commit: c})
	shared := s.shared.Load()
	if !shared && !s.flushing {
		s.flushing = true
		s.flush.Reset(flushDelay)
	}
	s.mu.Unlock()
	if shared {
		s.kickWriter()
	}
	return c
}

func validate(ops []core.Op) error {
	for i, op := range ops {
		switch op.Kind {
		case core.OpPutEntity:
			if op.Entity == nil {
				return core.Errorf(core.EINVALID, "op %d: OpPutEntity without an Entity", i)
			}
			if op.Entity.LastSeq > math.MaxInt64 {
				return core.Errorf(core.EINVALID, "op %d: LastSeq %d of %v is 2^63 or more", i, op.Entity.LastSeq, op.Entity.EntityKey)
			}
		case core.OpPutItem:
			if op.Item == nil {
				return core.Errorf(core.EINVALID, "op %d: OpPutItem without an Item", i)
			}
			if op.Item.Seq > core.MaxSeq {
				return core.Errorf(core.EINVALID, "op %d: Seq %d of an item of %v is more than core.MaxSeq", i, op.Item.Seq, op.Key)
			}
			if op.Item.Row > op.Item.Seq {
				return core.Errorf(core.EINVALID, "op %d: Row %d of item %d of %v is above its Seq", i, op.Item.Row, op.Item.Seq, op.Key)
			}
		case core.OpDeleteItem:
			if op.Seq > core.MaxSeq || op.Row > op.Seq {
				return core.Errorf(core.EINVALID, "op %d: deleting item %d at Row %d of %v: more than core.MaxSeq, or a Row above its Seq", i, op.Seq, op.Row, op.Key)
			}
		case core.OpDeleteEntity, core.OpReset, core.OpPutSessionState, core.OpDeleteSessionState:
		default:
			return core.Errorf(core.EINVALID, "op %d: unknown op kind %d", i, op.Kind)
		}
	}
	return nil
}

// Close commits what was appended before it, stops the writer goroutine,
// lets the applier bring the journal into SQLite, empties the journal and
// closes the database. When ctx ends first, the Appends not yet taken by
// the writer fail with core.EUNAVAILABLE and Close returns ctx's error once
// the commit in progress is over, leaving to the next Open what the
// journal holds. Later calls return what the first returned.
func (s *Store) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closeErr = s.close(ctx) })
	return s.closeErr
}

func (s *Store) close(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.kickWriter()

	var err error
	select {
	case <-s.done:
	case <-ctx.Done():
		err = ctx.Err()
		s.aborted.Store(true)
		<-s.done
	}
	// Everything committed is in the journal: SQLite gets it now, unless
	// Close's context ended (the next Open applies it).
	s.stopApplier(err != nil)
	s.connMu.Lock()
	defer s.connMu.Unlock()
	s.dbClosed = true
	if s.j != nil && err == nil && s.applyFailure() == nil {
		if e := s.emptyJournal(); e != nil {
			err = core.Errorf(core.EINTERNAL, "closing data folder %q: %v", s.folder, e)
		}
	}
	if e := s.closeDB(); err == nil {
		err = e
	}
	return err
}

// closeDB closes the statements, the connection and the database, then
// releases the data folder.
func (s *Store) closeDB() error {
	var err error
	keep := func(e error) {
		if err == nil && e != nil {
			err = core.Errorf(core.EINTERNAL, "closing data folder %q: %v", s.folder, e)
		}
	}
	if s.j != nil {
		keep(s.j.close())
	}
	if s.stmts != nil {
		keep(s.stmts.close())
	}
	if s.conn != nil {
		keep(s.conn.Close())
	}
	if s.db != nil {
		keep(s.db.Close())
	}
	if s.unlock != nil {
		keep(s.unlock())
	}
	return err
}
