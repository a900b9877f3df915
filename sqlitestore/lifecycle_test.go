package sqlitestore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

func entityOp(k core.EntityKey) core.Op {
	return core.Op{Kind: core.OpPutEntity, Key: k, Entity: &core.Entity{EntityKey: k, Kind: "queue", Durable: true}}
}

func itemOp(k core.EntityKey, seq uint64) core.Op {
	return core.Op{Kind: core.OpPutItem, Key: k, Item: &core.Item{Seq: seq, Body: []byte("body"), Persistent: true}}
}

func TestCloseCommitsWhatWasAppended(t *testing.T) {
	dir := t.TempDir()
	s := MustOpen(t, dir)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	commits := []*core.Commit{s.Append([]core.Op{entityOp(k)})}
	for seq := uint64(1); seq <= 1000; seq++ {
		commits = append(commits, s.Append([]core.Op{itemOp(k, seq)}))
	}
	MustClose(t, s)
	for i, c := range commits {
		select {
		case <-c.DoneChan():
		default:
			t.Fatalf("Commit %d not done after Close", i)
		}
		storetest.MustWait(t, c)
	}
	snap := storetest.MustLoad(t, MustOpen(t, dir))
	if n := len(snap.Items[k]); n != 1000 {
		t.Fatalf("after Close and Open, %d items, want 1000", n)
	}
}

func TestClosedStore(t *testing.T) {
	s := MustOpen(t, Memory)
	MustClose(t, s)
	MustClose(t, s) // twice is fine
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	err := s.Append([]core.Op{entityOp(k)}).Wait(context.Background())
	if core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Errorf("Append after Close: %v, want an %s error", err, core.EUNAVAILABLE)
	}
	err = s.Load(context.Background(), func(core.Entity) error { return nil }, func(core.EntityKey, core.Item) error { return nil },
		func(core.EntityKey, core.SessionState) error { return nil })
	if core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Errorf("Load after Close: %v, want an %s error", err, core.EUNAVAILABLE)
	}
}

func TestCloseWithEndedContextFailsQueuedWrites(t *testing.T) {
	s, err := Open(Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	mustApply(t, s, entityOp(k))
	var commits []*core.Commit
	for seq := uint64(1); seq <= 20000; seq++ {
		commits = append(commits, s.Append([]core.Op{itemOp(k, seq)}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx); err != context.Canceled {
		t.Errorf("Close with a cancelled context: %v, want context.Canceled", err)
	}
	for _, c := range commits {
		select {
		case <-c.DoneChan():
		default:
			t.Fatal("a Commit is not done after Close returned")
		}
		if err := c.Wait(context.Background()); err != nil && core.ErrorCode(err) != core.EUNAVAILABLE {
			t.Fatalf("a write cut off by Close failed with %v, want an %s error", err, core.EUNAVAILABLE)
		}
	}
}

func TestAppendRefusesMalformedOps(t *testing.T) {
	s := MustOpen(t, Memory)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	for name, op := range map[string]core.Op{
		"PutEntityWithoutEntity": {Kind: core.OpPutEntity, Key: k},
		"PutItemWithoutItem":     {Kind: core.OpPutItem, Key: k},
		"UnknownKind":            {Kind: 99, Key: k},
		"SeqTooLarge":            {Kind: core.OpPutItem, Key: k, Item: &core.Item{Seq: 1 << 63}},
	} {
		t.Run(name, func(t *testing.T) {
			// The valid op before the bad one is not applied either.
			err := s.Append([]core.Op{entityOp(k), op}).Wait(context.Background())
			if core.ErrorCode(err) != core.EINVALID {
				t.Errorf("Append: %v, want an %s error", err, core.EINVALID)
			}
			if snap := storetest.MustLoad(t, s); len(snap.Entities) != 0 {
				t.Errorf("a refused Append stored %d entities", len(snap.Entities))
			}
		})
	}
}

func TestItemOfMissingEntityIsNotStored(t *testing.T) {
	s := MustOpen(t, Memory)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	mustApply(t, s, itemOp(k, 5))
	mustApply(t, s, entityOp(k))
	snap := storetest.MustLoad(t, s)
	e, _ := snap.Entity(k)
	if n := len(snap.Items[k]); n != 0 || e.LastSeq != 0 {
		t.Errorf("an item put before its entity: %d items, LastSeq %d; want none and 0", n, e.LastSeq)
	}
}

func TestFileStoreUsesWAL(t *testing.T) {
	s := MustOpen(t, t.TempDir())
	s.connMu.Lock()
	defer s.connMu.Unlock()
	var mode string
	var sync int
	ctx := context.Background()
	if err := s.conn.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := s.conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || sync != 1 {
		t.Errorf("journal_mode %s, synchronous %d; want wal and 1 (NORMAL)", mode, sync)
	}
	var locking string
	if err := s.conn.QueryRowContext(ctx, `PRAGMA locking_mode`).Scan(&locking); err != nil {
		t.Fatal(err)
	}
	if locking != "exclusive" {
		t.Errorf("locking_mode %s, want exclusive", locking)
	}
	var temp int
	if err := s.conn.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&temp); err != nil {
		t.Fatal(err)
	}
	if temp != 2 {
		t.Errorf("temp_store %d, want 2 (MEMORY): a statement's journal in memory (open.go)", temp)
	}
	var cache int
	if err := s.conn.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
		t.Fatal(err)
	}
	if cache != -cacheKiB {
		t.Errorf("cache_size %d, want %d (KiB): an applier's transaction fits in the cache (open.go)", cache, -cacheKiB)
	}
}

// issue 25.9: a new folder's database is made under another name and
// renamed once whole; what a start cut short left under that name is made
// anew, and nothing is left beside lapse.db.
func TestNewDatabaseIsMadeAsideAndRenamed(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{dbName + ".new", dbName + ".new-wal"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("half a database"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := MustOpen(t, dir)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	mustApply(t, s, entityOp(k))
	MustClose(t, s)
	names, err := filepath.Glob(filepath.Join(dir, dbName+"*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || filepath.Base(names[0]) != dbName {
		t.Errorf("the folder holds %q, want lapse.db alone", names)
	}
	s = MustOpen(t, dir)
	if got := storetest.MustLoad(t, s); len(got.Entities) != 1 {
		t.Errorf("reopened: %d entities, want 1", len(got.Entities))
	}
}

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations")
	}
}

func TestTimesAreUnixMilliseconds(t *testing.T) {
	s := MustOpen(t, Memory)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	at := time.Date(2025, 1, 2, 3, 4, 5, 678_901_234, time.FixedZone("", 7200))
	op := itemOp(k, 1)
	op.Item.EnqueuedAt = at
	mustApply(t, s, entityOp(k), op)
	s.connMu.Lock()
	defer s.connMu.Unlock()
	var ms int64
	var scheduled any
	if err := s.conn.QueryRowContext(context.Background(), `SELECT enqueued_at, scheduled_at FROM items`).Scan(&ms, &scheduled); err != nil {
		t.Fatal(err)
	}
	if ms != at.UnixMilli() || scheduled != nil {
		t.Errorf("enqueued_at %d, scheduled_at %v; want %d and NULL", ms, scheduled, at.UnixMilli())
	}
}
