package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// MustOpen opens the store in dir and closes it when the test ends.
func MustOpen(tb testing.TB, dir string) *Store {
	tb.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		tb.Fatalf("Open(%q): %v", dir, err)
	}
	tb.Cleanup(func() { MustClose(tb, s) })
	return s
}

// MustClose closes s; closing it again is harmless.
func MustClose(tb testing.TB, s *Store) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		tb.Fatalf("Close: %v", err)
	}
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (core.Store, func() core.Store) {
		dir := t.TempDir()
		s := MustOpen(t, dir)
		return s, func() core.Store {
			MustClose(t, s)
			s = MustOpen(t, dir)
			return s
		}
	})
}

func TestContractInMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (core.Store, func() core.Store) {
		s := MustOpen(t, Memory)
		return s, func() core.Store { return s }
	})
}

// MustFailOpen opens dir, wants an error with code and message, and
// returns it.
func MustFailOpen(tb testing.TB, dir, code, message string) error {
	tb.Helper()
	s, err := Open(dir, Options{})
	if err == nil {
		MustClose(tb, s)
		tb.Fatalf("Open(%q) succeeded, want %s error %q", dir, code, message)
	}
	tb.Logf("Open(%q): %v", dir, err)
	if got := core.ErrorCode(err); got != code {
		tb.Errorf("Open(%q) error code %q, want %q (error: %v)", dir, got, code, err)
	}
	if !strings.Contains(err.Error(), message) {
		tb.Errorf("Open(%q) error %q, want it to say %q", dir, err, message)
	}
	if strings.Contains(err.Error(), "\n") {
		tb.Errorf("Open(%q) error %q is more than one line", dir, err)
	}
	return err
}

func TestOpenFailsWhenFolderInUse(t *testing.T) {
	dir := t.TempDir()
	s := MustOpen(t, dir)
	MustFailOpen(t, dir, core.ERESOURCELOCKED, `data folder "`+dir+`" is in use by another lapse process`)
	MustClose(t, s)
	MustClose(t, MustOpen(t, dir)) // free again
}

// MustWriteFile writes a data folder's file.
func MustWriteFile(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func TestOpenRefusesWhatIsNotALapseDatabase(t *testing.T) {
	notSQLite := []byte("this is not a database, and it is long enough to look like one\n")
	for _, tc := range []struct {
		name    string
		make    func(t *testing.T, path string)
		message string
	}{
		{"NotSQLite", func(t *testing.T, path string) { MustWriteFile(t, path, notSQLite) }, "lapse.db is not a SQLite database"},
		{"TooShort", func(t *testing.T, path string) { MustWriteFile(t, path, []byte("SQLite")) }, "lapse.db is not a SQLite database"},
		{"SQLiteHeaderThenGarbage", func(t *testing.T, path string) {
			MustWriteFile(t, path, append([]byte("SQLite format 3\x00"), make([]byte, 4096)...))
		}, `cannot be`},
		{"AnotherProgramsDatabase", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`CREATE TABLE notes (text TEXT)`); err != nil {
				t.Fatal(err)
			}
		}, "lapse.db is a SQLite database, but not lapse's"},
		{"AFolder", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "lapse.db: is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, dbName)
			tc.make(t, path)
			before := mustReadAll(t, dir)
			MustFailOpen(t, dir, core.EINVALID, `data folder "`+dir+`" cannot be`)
			MustFailOpen(t, dir, core.EINVALID, tc.message)
			if after := mustReadAll(t, dir); after != before {
				t.Errorf("a failed Open changed lapse.db")
			}
			// The failed Open let go of the folder's lock.
			if unlock, err := lockFolder(filepath.Join(dir, lockName)); err != nil {
				t.Errorf("the data folder is still locked after a failed Open: %v", err)
			} else {
				_ = unlock()
			}
		})
	}
}

// mustReadAll returns the contents of a data folder's lapse.db ("" for a
// folder).
func mustReadAll(tb testing.TB, dir string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, dbName))
	if err != nil && !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "is a directory") {
		tb.Fatal(err)
	}
	return string(b)
}

// unreadableEnv names the data folder a child process of
// TestOpenRefusesUnreadableDatabase opens as an unprivileged user.
const unreadableEnv = "LAPSE_TEST_UNREADABLE_DIR"

func TestOpenRefusesUnreadableDatabase(t *testing.T) {
	if dir := os.Getenv(unreadableEnv); dir != "" {
		// The child: not root, so the mode of the file holds.
		MustFailOpen(t, dir, core.EINVALID, "lapse.db: permission denied")
		return
	}
	// The folder and a copy of this test binary must be reachable by an
	// unprivileged user, since root reads every file whatever its mode.
	base, err := os.MkdirTemp("", "lapse-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir := filepath.Join(base, "data")
	MustClose(t, MustOpen(t, dir))
	if err := os.Chmod(filepath.Join(dir, dbName), 0); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		MustFailOpen(t, dir, core.EINVALID, "lapse.db: permission denied")
		return
	}
	bin := filepath.Join(base, "sqlitestore.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	MustWriteFile(t, bin, self)
	for _, p := range []string{base, dir, bin, filepath.Join(dir, "lapse.lock")} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^TestOpenRefusesUnreadableDatabase$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), unreadableEnv+"="+dir)
	cmd.Dir = base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as an unprivileged user, Open of an unreadable database: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "permission denied") {
		t.Fatalf("the child did not see the permission error:\n%s", out)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	dir := t.TempDir()
	MustClose(t, MustOpen(t, dir))
	db, err := sql.Open("sqlite", filepath.Join(dir, dbName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	want := `data folder "` + dir + `" was written by a newer lapse (schema 99, this lapse knows up to ` + strconv.Itoa(len(ms)) + `)`
	if err := MustFailOpen(t, dir, core.EPRECONDITION, want); err.Error() != want {
		t.Errorf("Open error %q, want %q", err, want)
	}
}

func TestOpenRefusesAFileAsDataFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	MustWriteFile(t, dir, []byte("a file"))
	MustFailOpen(t, dir, core.EINVALID, `data folder "`+dir+`" cannot be made`)
}

func TestPutsSupersededInOneBatchAreSkipped(t *testing.T) {
	s := MustOpen(t, t.TempDir())
	k := core.EntityKey{Protocol: "test", Name: "q"}
	item := func(seq uint64, body string) core.Op {
		return core.Op{Kind: core.OpPutItem, Key: k, Item: &core.Item{Seq: seq, Body: []byte(body), Persistent: true}}
	}
	mustApply(t, s, core.Op{Kind: core.OpPutEntity, Key: k, Entity: &core.Entity{EntityKey: k, Durable: true}})
	batch := []pending{
		{ops: []core.Op{item(1, "acked soon"), item(2, "first"), item(3, "kept")}},
		{ops: []core.Op{{Kind: core.OpDeleteItem, Key: k, Seq: 1}, item(2, "second")}},
	}
	if got := s.supersededItemOps(batch); !cmp.Equal(got, map[int]bool{0: true, 1: true}) {
		t.Fatalf("superseded %v, want the put of item 1 and the first put of item 2", got)
	}
	s.connMu.Lock()
	err := s.apply(batch)
	s.connMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	snap := storetest.MustLoad(t, s)
	var got []string
	for _, it := range snap.Items[k] {
		got = append(got, fmt.Sprintf("%d %s", it.Seq, it.Body))
	}
	last := snap.Entities[0].LastSeq
	if !cmp.Equal(got, []string{"2 second", "3 kept"}) || last != 3+seqReserve {
		t.Fatalf("stored %q, LastSeq %d", got, last)
	}
}

// A replace that keeps its row (core.Item.Row) is one write of that row:
// the delete of the old item is skipped, the new one written over it with
// its Seq in the seq column; whether in one batch or two, and after a
// reopen, it loads with its Seq and Row, in Seq order among the others.
func TestReplaceIsWrittenOverTheOldRow(t *testing.T) {
	dir := t.TempDir()
	s := MustOpen(t, dir)
	k := core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}
	put := func(seq, row uint64, key string) core.Op {
		return core.Op{Kind: core.OpPutItem, Key: k, Item: &core.Item{Seq: seq, Row: row, Key: key, Body: []byte(fmt.Sprint(seq)), Persistent: true}}
	}
	del := func(seq, row uint64) core.Op { return core.Op{Kind: core.OpDeleteItem, Key: k, Seq: seq, Row: row} }
	mustApply(t, s, core.Op{Kind: core.OpPutEntity, Key: k, Entity: &core.Entity{EntityKey: k, Durable: true}},
		put(1, 0, "a"), put(2, 0, "b"), put(3, 0, "c"))
	batch := []pending{{ops: []core.Op{del(1, 0), put(4, 1, "a")}}, {ops: []core.Op{del(4, 1), put(5, 1, "a")}}}
	if got := s.supersededItemOps(batch); !cmp.Equal(got, map[int]bool{0: true, 1: true, 2: true}) {
		t.Fatalf("superseded %v, want all but the last put of row 1", got)
	}
	s.connMu.Lock()
	err := s.apply(batch)
	s.connMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, del(2, 0), put(6, 2, "b")) // a batch of its own
	mustApply(t, s, put(7, 0, "d"))
	num := s.entities.rows[k].num
	type row struct{ Row, Seq int64 }
	rows, err := func() ([]row, error) {
		s.connMu.Lock()
		defer s.connMu.Unlock()
		r, err := s.conn.QueryContext(context.Background(), `SELECT id, seq FROM items ORDER BY id`)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		var rows []row
		for r.Next() {
			var id int64
			var seq sql.NullInt64
			if err := r.Scan(&id, &seq); err != nil {
				return nil, err
			}
			rows = append(rows, row{id - itemID(num, 0), seq.Int64})
		}
		return rows, r.Err()
	}()
	if err != nil {
		t.Fatal(err)
	}
	if want := []row{{1, 5}, {2, 6}, {3, 0}, {7, 0}}; !cmp.Equal(rows, want) {
		t.Fatalf("rows (id, seq) %v, want %v", rows, want)
	}
	MustClose(t, s)
	s = MustOpen(t, dir)
	var got []string
	for _, it := range storetest.MustLoad(t, s).Items[k] {
		got = append(got, fmt.Sprintf("%s %d@%d", it.Key, it.Seq, it.Row))
	}
	if want := []string{"c 3@0", "a 5@1", "b 6@2", "d 7@0"}; !cmp.Equal(got, want) {
		t.Fatalf("loaded %q, want %q", got, want)
	}
}

func TestItemWritesInMultiRowStatements(t *testing.T) {
	s := MustOpen(t, t.TempDir())
	a := core.EntityKey{Protocol: "test", Name: "a"}
	missing := core.EntityKey{Protocol: "test", Name: "not stored"}
	mustApply(t, s, core.Op{Kind: core.OpPutEntity, Key: a, Entity: &core.Entity{EntityKey: a, Durable: true}})
	put := func(k core.EntityKey, seq uint64) core.Op {
		return core.Op{Kind: core.OpPutItem, Key: k, Item: &core.Item{Seq: seq, Body: []byte(fmt.Sprint(seq)), Persistent: true}}
	}
	var first []core.Op
	for seq := uint64(1); seq <= 100; seq++ {
		first = append(first, put(a, seq))
	}
	mustApply(t, s, first...)
	// One batch: 150 more puts (chunks of 64, 64, 16, 4, 2), deletes of
	// items 1..70 (64, 4, 2) and puts for an entity that is not stored.
	var second []core.Op
	for seq := uint64(101); seq <= 250; seq++ {
		second = append(second, put(a, seq), put(missing, seq))
	}
	for seq := uint64(1); seq <= 70; seq++ {
		second = append(second, core.Op{Kind: core.OpDeleteItem, Key: a, Seq: seq})
	}
	mustApply(t, s, second...)
	snap := storetest.MustLoad(t, s)
	got := snap.Items[a]
	if len(got) != 180 || got[0].Seq != 71 || got[179].Seq != 250 || string(got[179].Body) != "250" {
		t.Fatalf("%d items from %d to %d", len(got), got[0].Seq, got[len(got)-1].Seq)
	}
	if n := len(snap.Items[missing]); n != 0 {
		t.Fatalf("%d items stored for an entity that is not", n)
	}
	// The first batch reserved up to 100+seqReserve: the second, within
	// the reserve, did not write it.
	if en, _ := snap.Entity(a); en.LastSeq != 100+seqReserve {
		t.Fatalf("LastSeq %d, want %d", en.LastSeq, 100+seqReserve)
	}
}

// An entity's row is written once per seqReserve items, not in every
// transaction that puts one; its LastSeq stays at least the highest Seq
// put, across a reopen, a deleted and a recreated entity.
func TestLastSeqIsRaisedPastAReserve(t *testing.T) {
	dir := t.TempDir()
	s := MustOpen(t, dir)
	k := core.EntityKey{Protocol: "test", Name: "q"}
	put := func(seq uint64) core.Op {
		return core.Op{Kind: core.OpPutItem, Key: k, Item: &core.Item{Seq: seq, Persistent: true}}
	}
	entity := core.Op{Kind: core.OpPutEntity, Key: k, Entity: &core.Entity{EntityKey: k, Durable: true}}
	lastSeq := func(s *Store) uint64 {
		t.Helper()
		en, ok := storetest.MustLoad(t, s).Entity(k)
		if !ok {
			t.Fatal("entity not stored")
		}
		return en.LastSeq
	}
	mustApply(t, s, entity)
	for seq := uint64(1); seq <= seqReserve+2; seq++ {
		mustApply(t, s, put(seq))
	}
	if got, want := lastSeq(s), uint64(seqReserve+2+seqReserve); got != want {
		t.Fatalf("LastSeq %d after %d puts, want %d (raised at Seq 1, then at Seq %d)", got, seqReserve+2, want, seqReserve+2)
	}
	MustClose(t, s)
	s = MustOpen(t, dir)
	mustApply(t, s, put(2*seqReserve+5))
	if got, want := lastSeq(s), uint64(3*seqReserve+5); got != want {
		t.Fatalf("LastSeq %d after a reopen and a put past the reserve, want %d", got, want)
	}
	// Deleted and made again: forgotten, then raised from the new row.
	mustApply(t, s, core.Op{Kind: core.OpDeleteEntity, Key: k}, entity, put(7))
	if got, want := lastSeq(s), uint64(7+seqReserve); got != want {
		t.Fatalf("LastSeq %d after the entity was made again and Seq 7 put, want %d", got, want)
	}
	mustApply(t, s, core.Op{Kind: core.OpReset})
	mustApply(t, s, entity)
	mustApply(t, s, put(3))
	if got, want := lastSeq(s), uint64(3+seqReserve); got != want {
		t.Fatalf("LastSeq %d after a reset, want %d", got, want)
	}
}

// mustApply appends ops, waits for their Commit and then for the applier
// to have them in SQLite, for the tests that look at the database.
func mustApply(tb testing.TB, s *Store, ops ...core.Op) {
	tb.Helper()
	storetest.MustAppend(tb, s, ops...)
	s.drain()
	if err := s.applyFailure(); err != nil {
		tb.Fatal(err)
	}
}
