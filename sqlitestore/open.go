package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The files of a data folder.
const (
	dbName   = "lapse.db"
	lockName = "lapse.lock"
)

// Open opens the store kept in the data folder dir, making the folder and
// its database if they do not exist, applies what its journal holds, and
// starts its writer and applier goroutines; Close stops them. dir Memory
// (":memory:") keeps nothing.
//
// A data folder that cannot be used fails at once, with a one-line
// *core.Error that says why: in use by another lapse process
// (core.ERESOURCELOCKED), written by a newer lapse (core.EPRECONDITION),
// not a lapse data folder, not readable, or with a journal damaged before
// its end (core.EINVALID; a copy of the journal is kept aside, and
// opts.RepairJournal opens it instead). Open never resets a data folder.
func Open(dir string, opts Options) (*Store, error) {
	s := &Store{folder: dir, done: make(chan struct{}), lastSeq: map[core.EntityKey]uint64{}, lastItemOp: map[itemRef]int{}}
	s.kick = make(chan struct{}, 1)
	s.acond = sync.NewCond(&s.amu)
	s.aNow = make(chan struct{}, 1)
	s.aDone = make(chan struct{})
	s.flush = time.AfterFunc(time.Hour, s.kickWriter)
	s.flush.Stop()
	if err := s.open(context.Background(), opts); err != nil {
		_ = s.closeDB()
		return nil, err
	}
	go s.run()
	go s.applier()
	return s, nil
}

// walCheckpointPages is how many pages the WAL holds before a commit
// copies them into the database (SQLite's wal_autocheckpoint, 1,000 by
// default): at 10,000 (40 MB), a page written by many commits, such as
// the last page of a queue's items, is copied once instead of ten times,
// and the checkpoints' fsyncs are a tenth as many: 8% more acknowledged
// writes a second with 1 to 256 writers (BenchmarkAcknowledgedWrites). A
// restart after kill -9 replays at most that much.
const walCheckpointPages = 10000

// cacheKiB is SQLite's page cache, 16 MiB (its default is 2,000 KiB,
// about 500 pages). A transaction of the applier's changes every page it
// touches; when they do not fit, SQLite writes some to the WAL before the
// commit and reads them back: at eight workers a transaction of Cosmos DB
// upserts or replaces of 1 KB items among 5,000 holds about 800 and
// touches as many pages, and a replace cost the applier 12-18.5 µs with
// the default against 9-12.5 with 16 MiB (BenchmarkStoreReplaces, tx=800,
// interleaved runs; at tx=300 both fit and cost the same). Side by side,
// the server's whole CPU in a round of creates, upserts and replaces at
// eight workers was 6% less in two runs of ten rounds
// (docs/benchmarks.md). SQLite takes the pages as it needs them: a small
// database never holds the whole cache.
const cacheKiB = 16 << 10

func (s *Store) open(ctx context.Context, opts Options) error {
	syncMode := "NORMAL" // see the package doc
	if opts.FullSync {
		syncMode = "FULL"
	}
	// journal_mode=WAL is set by migrate, once it knows the file is ours;
	// locking_mode=EXCLUSIVE is in the package doc. temp_store=MEMORY keeps
	// a statement's journal in memory: a multi-row put that replaces items
	// at their rows has SQLite save each page it changes, in a temporary
	// file once it passes 64 KiB, a write(2) a page. In memory, the applier's
	// time for a replace of a 1 KB item among 5,000 went from 14-17 µs to
	// 12-15.5 (BenchmarkStoreReplaces); it holds at most the pages one
	// statement changes.
	pragmas := "?_pragma=busy_timeout(5000)&_pragma=locking_mode(EXCLUSIVE)&_pragma=temp_store(MEMORY)&_pragma=wal_autocheckpoint(" + strconv.Itoa(walCheckpointPages) + ")" +
		"&_pragma=cache_size(-" + strconv.Itoa(cacheKiB) + ")"
	dsn := ":memory:"
	var jb []byte
	var jsc *journalScan
	if s.folder != Memory {
		path, fresh, err := s.prepareFolder()
		if err != nil {
			return err
		}
		// A damaged journal stops Open before SQLite touches lapse.db.
		if jb, jsc, err = s.readJournal(opts); err != nil {
			return err
		}
		if fresh {
			if err := createDB(ctx, path, pragmas, s.folder); err != nil {
				return s.openError(err)
			}
		}
		dsn = "file:" + uriEscape(path)
	}
	dsn += pragmas + "&_pragma=synchronous(" + syncMode + ")"

	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return s.openError(err)
	}
	s.db = db
	// One connection, pinned: the writer's, which Load borrows. (Each
	// connection to ":memory:" would be a database of its own.)
	db.SetMaxOpenConns(1)
	if s.conn, err = db.Conn(ctx); err != nil {
		return s.openError(err)
	}
	if err := migrate(ctx, s.conn, s.folder); err != nil {
		return s.openError(err)
	}
	if s.stmts, err = prepare(ctx, s.conn); err != nil {
		return s.openError(err)
	}
	if s.entities, err = readEntityRows(ctx, s.conn); err != nil {
		return s.openError(err)
	}
	if s.folder == Memory {
		return nil
	}
	return s.openJournal(opts, jb, jsc)
}

// readJournal reads the journal and its records. A journal damaged before
// its end stops Open, unless opts.RepairJournal is set; either way a copy
// of it is kept aside first (journalscan.go).
func (s *Store) readJournal(opts Options) ([]byte, *journalScan, error) {
	path := filepath.Join(s.folder, journalName)
	b, sc, err := readJournal(path)
	if err != nil {
		return nil, nil, core.Errorf(core.EINVALID, "data folder %q cannot be used: %v", s.folder, oneLine(err))
	}
	if sc == nil || len(sc.bad) == 0 {
		return b, sc, nil
	}
	kept, err := keepAside(path, b, time.Now())
	if err != nil {
		return nil, nil, core.Errorf(core.EINVALID, "data folder %q cannot be used: journal %q %s, and a copy of it cannot be kept: %v",
			s.folder, path, sc.damage(), oneLine(err))
	}
	sc.kept = kept
	if !opts.RepairJournal {
		return nil, nil, core.Errorf(core.EINVALID, "data folder %q cannot be used: journal %q %s. A copy is kept as %q. "+
			"To open the folder anyway, dropping the bytes that do not decode and applying the %d records after them, start lapse with --repair-journal (Options.RepairJournal)",
			s.folder, path, sc.damage(), kept, sc.bad[0].after)
	}
	return b, sc, nil
}

// openJournal opens the journal, whose bytes b and records sc readJournal
// returned, and applies what it still holds: the writes of a lapse that
// stopped before SQLite had them all, less what does not decode.
func (s *Store) openJournal(opts Options, b []byte, sc *journalScan) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	path := filepath.Join(s.folder, journalName)
	j, err := openJournal(path, opts.FullSync, b, sc)
	if err != nil {
		return core.Errorf(core.EINVALID, "data folder %q cannot be used: %v", s.folder, oneLine(err))
	}
	s.j = j
	s.beforeEmpty = opts.beforeEmpty
	if len(sc.bad) > 0 {
		for _, span := range sc.bad {
			log.Warn("repairing the journal: dropping bytes that do not decode", "journal", path,
				"offset", span.off, "bytes", span.end-span.off, "why", span.why, "recordsAfter", span.after)
		}
		log.Warn("repaired the journal", "journal", path, "copy", sc.kept, "droppedBytes", sc.droppedBytes(),
			"damagedPlaces", len(sc.bad), "recordsKept", len(sc.records), "recordsAfterDamage", sc.bad[0].after)
	}
	if sc.torn != nil {
		log.Info("dropped the last record of the journal, a write cut short by a crash",
			"journal", path, "offset", sc.torn.off, "bytes", sc.torn.end-sc.torn.off, "why", sc.torn.why)
	}
	if len(sc.records) > 0 || len(sc.bad) > 0 {
		if err := s.applyRecords(sc.records); err != nil {
			return s.openError(err)
		}
		if err := s.emptyJournal(); err != nil {
			return s.openError(err)
		}
	}
	return nil
}

// emptyJournal empties the journal, whose every record SQLite holds.
func (s *Store) emptyJournal() error {
	if s.beforeEmpty != nil {
		s.beforeEmpty()
	}
	return s.j.empty()
}

// prepareFolder makes the data folder if needed, locks it, checks that its
// database file, if any, is one, and returns the file's path; fresh says
// there is none yet.
func (s *Store) prepareFolder() (path string, fresh bool, err error) {
	if err := os.MkdirAll(s.folder, 0o755); err != nil {
		return "", false, core.Errorf(core.EINVALID, "data folder %q cannot be made: %v", s.folder, oneLine(err))
	}
	unlock, err := lockFolder(filepath.Join(s.folder, lockName))
	if errors.Is(err, errLocked) {
		return "", false, core.Errorf(core.ERESOURCELOCKED, "data folder %q is in use by another lapse process%s", s.folder, lockHolder(filepath.Join(s.folder, lockName)))
	}
	if err != nil {
		return "", false, core.Errorf(core.EINVALID, "data folder %q cannot be locked: %v", s.folder, oneLine(err))
	}
	s.unlock = unlock

	path, err = filepath.Abs(filepath.Join(s.folder, dbName))
	if err != nil {
		return "", false, core.Errorf(core.EINVALID, "data folder %q: %v", s.folder, oneLine(err))
	}
	if fresh, err = checkDBFile(path); err != nil {
		return "", false, core.Errorf(core.EINVALID, "data folder %q cannot be used: %v", s.folder, err)
	}
	return path, fresh, nil
}

// createDB makes the database of a data folder that has none at path,
// with the latest schema. Switching a new database to WAL and writing its
// schema took five fsyncs; it is written under another name without a
// sync, then synced once and renamed to path, and the folder synced: two
// fsyncs, and path is never a database half made, whenever the machine
// stops (issue 25.9). A file left under the other name by a start that
// stopped on the way is made anew.
func createDB(ctx context.Context, path, pragmas, folder string) error {
	tmp := path + ".new"
	for _, f := range []string{tmp, tmp + "-journal", tmp + "-wal"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	db, err := sql.Open("sqlite", "file:"+uriEscape(tmp)+pragmas+"&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err == nil {
		err = migrate(ctx, conn, folder)
		// Closing the last connection copies the WAL into the file and
		// removes it.
		err = errors.Join(err, conn.Close())
	}
	if err = errors.Join(err, db.Close()); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	// Windows cannot sync a folder: there the rename is as lasting as its
	// file system makes it.
	if err := syncFile(filepath.Dir(path)); err != nil && runtime.GOOS != "windows" {
		return err
	}
	return nil
}

// syncFile fsyncs the file or folder name.
func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// checkDBFile checks that the database file, if there is one, can be read
// and written and starts as a SQLite database does, so that the error says
// what is wrong rather than SQLite's "unable to open database file". fresh
// is true when there is none: SQLite makes it.
func checkDBFile(path string) (fresh bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return false, fmt.Errorf("%s: %v", dbName, pe.Err)
		}
		return false, err
	}
	defer f.Close()
	header := make([]byte, 16)
	n, err := io.ReadFull(f, header)
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return false, nil // empty: SQLite makes a database in it
	case err != nil && err != io.ErrUnexpectedEOF:
		return false, fmt.Errorf("%s: %v", dbName, oneLine(err))
	case !bytes.Equal(header[:n], []byte("SQLite format 3\x00")):
		return false, fmt.Errorf("%s is not a SQLite database", dbName)
	}
	return false, nil
}

// openError turns an error met while opening into the one-line error Open
// returns.
func (s *Store) openError(err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return core.Errorf(core.EINVALID, "data folder %q cannot be used: %s is not a SQLite database", s.folder, dbName)
		case sqlite3.SQLITE_CORRUPT:
			return core.Errorf(core.EINVALID, "data folder %q cannot be used: %s is damaged (%v)", s.folder, dbName, oneLine(err))
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH, sqlite3.SQLITE_IOERR:
			return core.Errorf(core.EINVALID, "data folder %q cannot be read or written: %v", s.folder, oneLine(err))
		}
	}
	return core.Errorf(core.EINTERNAL, "data folder %q cannot be opened: %v", s.folder, oneLine(err))
}

// oneLine returns err's text on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// uriEscape escapes what SQLite's URI file names give a meaning to.
func uriEscape(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
}
