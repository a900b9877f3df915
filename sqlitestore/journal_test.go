package sqlitestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

// copyFolder copies the files of a data folder but its lock: what a disk
// holds when the process that writes it dies at that instant.
func copyFolder(tb testing.TB, from, to string) {
	tb.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == lockName {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		MustWriteFile(tb, filepath.Join(to, e.Name()), b)
	}
}

// A write whose Commit is done is in the journal, whether or not SQLite
// has it yet: a process that dies before its applier ran loses nothing, as
// the next Open applies the journal (EM-3).
func TestCommittedWritesNotYetInSQLiteAreAppliedAtOpen_EM3(t *testing.T) {
	dir, crashed := t.TempDir(), t.TempDir()
	s := MustOpen(t, dir)
	k := core.EntityKey{Protocol: core.RabbitMQ, Name: "/q"}
	mustApply(t, s, entityOp(k), itemOp(k, 1))
	// Keep the applier out of SQLite while more is committed, and take
	// the folder as it is then.
	s.connMu.Lock()
	var commits []*core.Commit
	for seq := uint64(2); seq <= 100; seq++ {
		commits = append(commits, s.Append([]core.Op{itemOp(k, seq)}))
	}
	commits = append(commits, s.Append([]core.Op{{Kind: core.OpDeleteItem, Key: k, Seq: 1}}))
	for _, c := range commits {
		storetest.MustWait(t, c)
	}
	copyFolder(t, dir, crashed)
	s.connMu.Unlock()

	snap := storetest.MustLoad(t, MustOpen(t, crashed))
	got := snap.Items[k]
	if len(got) != 99 || got[0].Seq != 2 || got[98].Seq != 100 || string(got[0].Body) != "body" {
		t.Fatalf("%d items after the crash, want items 2 to 100", len(got))
	}
	if fi, err := os.Stat(filepath.Join(crashed, journalName)); err != nil || fi.Size() != int64(len(journalMagic)) {
		t.Errorf("journal after Open applied it: %v, %v; want it empty", fi.Size(), err)
	}
}

// The end of a record that a killed process did not finish writing is
// dropped at Open, with nothing after it; the records before it are
// applied, and the journal takes new records after them.
func TestTornJournalRecordIsDropped(t *testing.T) {
	dir, crashed := t.TempDir(), t.TempDir()
	s := MustOpen(t, dir)
	k := core.EntityKey{Protocol: core.RabbitMQ, Name: "/q"}
	mustApply(t, s, entityOp(k))
	s.connMu.Lock()
	storetest.MustAppend(t, s, itemOp(k, 1))
	storetest.MustAppend(t, s, itemOp(k, 2))
	copyFolder(t, dir, crashed)
	s.connMu.Unlock()
	whole, err := os.ReadFile(filepath.Join(crashed, journalName))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tail []byte
	}{
		{"a header cut short", []byte{9, 0, 0}},
		{"a record cut short", append([]byte{200, 0, 0, 0, 1, 2, 3, 4}, bytes.Repeat([]byte{7}, 50)...)},
		{"a record whose CRC does not match", append([]byte{3, 0, 0, 0, 0, 0, 0, 0}, 1, 2, 3)},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			copyFolder(t, crashed, dir)
			MustWriteFile(t, filepath.Join(dir, journalName), append(append([]byte{}, whole...), tc.tail...))
			s := MustOpen(t, dir)
			if got := storetest.MustLoad(t, s).Items[k]; len(got) != 2 {
				t.Fatalf("%d items, want the 2 of the whole records", len(got))
			}
			storetest.MustAppend(t, s, itemOp(k, 3))
			MustClose(t, s)
			if got := storetest.MustLoad(t, MustOpen(t, dir)).Items[k]; len(got) != 3 {
				t.Fatalf("%d items after a write and a reopen, want 3", len(got))
			}
		})
	}
}

// A journal that fills up is emptied once SQLite has what it holds: it
// never grows much past journalLimit, nor do the records that wait for
// the applier in memory (in a Memory store too), and nothing is lost.
func TestFullJournalIsEmptiedOnceApplied(t *testing.T) {
	defer func(l int64) { journalLimit = l }(journalLimit)
	journalLimit = 4 << 10
	for _, dir := range []string{t.TempDir(), Memory} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s := MustOpen(t, dir)
			k := core.EntityKey{Protocol: core.RabbitMQ, Name: "/q"}
			storetest.MustAppend(t, s, entityOp(k))
			var largest, queued int64
			for seq := uint64(1); seq <= 500; seq++ {
				storetest.MustAppend(t, s, itemOp(k, seq))
				if s.j != nil {
					largest = max(largest, s.j.size)
				}
				s.amu.Lock()
				n := int64(0)
				for _, r := range s.aq {
					n += int64(len(r))
				}
				s.amu.Unlock()
				queued = max(queued, n)
			}
			if largest > journalLimit+int64(len(journalMagic)) || queued > journalLimit {
				t.Errorf("the journal grew to %d bytes and %d bytes waited for the applier, past the limit of %d", largest, queued, journalLimit)
			}
			if dir == Memory {
				if got := storetest.MustLoad(t, s).Items[k]; len(got) != 500 {
					t.Fatalf("%d items, want 500", len(got))
				}
				return
			}
			MustClose(t, s)
			if got := storetest.MustLoad(t, MustOpen(t, dir)).Items[k]; len(got) != 500 {
				t.Fatalf("%d items after a reopen, want 500", len(got))
			}
		})
	}
}

// A journal written in a format this lapse does not know is refused,
// rather than ignored with the writes it holds.
func TestJournalOfAnotherFormatIsRefused(t *testing.T) {
	dir := t.TempDir()
	MustWriteFile(t, filepath.Join(dir, journalName), []byte("lapse journal 9\nwhatever"))
	_, err := Open(dir, Options{})
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.EINVALID || !strings.Contains(err.Error(), "not a journal this lapse can read") {
		t.Fatalf("Open: %v, want EINVALID naming the journal", err)
	}
}

// sampleBatch returns Appends with every op kind, every field set.
func sampleBatch() []pending {
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q/subscriptions/s"}
	at := time.UnixMilli(1_700_000_000_123).UTC()
	entity := &core.Entity{EntityKey: k, Kind: "subscription", Parent: "q", DeadLetterQueue: "q/$deadletterqueue", Durable: true,
		Policy:   core.Policy{DefaultTTL: core.After(time.Minute), MaxTTL: core.Forever, HeadOnly: true},
		Settings: []core.Setting{{Key: "x-message-ttl", Value: "60000"}}, Meta: []byte(`{"a":1}`), Created: at, LastSeq: 1 << 40}
	item := &core.Item{Seq: 77, Key: "id", Group: "session", Body: []byte("body"), Meta: []byte("meta"), State: core.State(2),
		EnqueuedAt: at, ModifiedAt: at.Add(time.Second), ScheduledAt: at.Add(time.Hour), TTL: core.After(90 * time.Second),
		EffectiveTTL: core.Forever, DueAt: at.Add(2 * time.Hour), Rule: "SB-1", Reason: "TTLExpiredException",
		LockedUntil: at.Add(time.Minute), DeliveryCount: 3, Persistent: true}
	moved := *item // kept at the row of an item it replaced
	moved.Seq, moved.Row = 78, 12
	return []pending{
		{ops: []core.Op{{Kind: core.OpPutEntity, Key: k, Entity: entity}, {Kind: core.OpPutItem, Key: k, Item: item},
			{Kind: core.OpPutItem, Key: k, Item: &moved}}},
		{ops: []core.Op{{Kind: core.OpDeleteItem, Key: k, Seq: 5}, {Kind: core.OpPutSessionState, Key: k, Group: "g", State: []byte("st")},
			{Kind: core.OpDeleteSessionState, Key: k, Group: "g"}, {Kind: core.OpDeleteItem, Key: k, Seq: 9, Row: 4}}},
		{ops: []core.Op{{Kind: core.OpDeleteEntity, Key: k}, {Kind: core.OpReset}}},
		{ops: nil},
	}
}

// Every op kind, with every field set, comes back from its record as it
// went in; a record cut anywhere fails to decode rather than give other
// ops.
func TestRecordsDecodeWhatWasEncoded(t *testing.T) {
	batch := sampleBatch()
	entity, item := batch[0].ops[0].Entity, batch[0].ops[1].Item
	rec, err := appendRecord(nil, batch)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(batch) {
		t.Fatalf("%d Appends, want %d", len(got), len(batch))
	}
	for i := range batch {
		if len(got[i].ops) != len(batch[i].ops) {
			t.Fatalf("Append %d: %d ops, want %d", i, len(got[i].ops), len(batch[i].ops))
		}
		for j, want := range batch[i].ops {
			g := got[i].ops[j]
			if g.Kind != want.Kind || g.Key != want.Key || g.Seq != want.Seq || g.Row != want.Row || g.Group != want.Group || string(g.State) != string(want.State) {
				t.Errorf("Append %d op %d: %+v, want %+v", i, j, g, want)
			}
		}
	}
	if diff := cmpDiff(*got[0].ops[0].Entity, *entity); diff != "" {
		t.Errorf("entity (-got +want):\n%s", diff)
	}
	if diff := cmpDiff(*got[0].ops[1].Item, *item); diff != "" {
		t.Errorf("item (-got +want):\n%s", diff)
	}
	if diff := cmpDiff(*got[0].ops[2].Item, *batch[0].ops[2].Item); diff != "" {
		t.Errorf("item kept at another's row (-got +want):\n%s", diff)
	}
	for n := range len(rec) {
		if _, err := decodeRecord(rec[:n]); err == nil {
			t.Errorf("the record cut to %d of its %d bytes decoded", n, len(rec))
		}
	}
}

// An item op with a Row is the op without one, its kind marked withRow
// and the Row after its fields: an op with none, and so every record
// written before rows existed, is encoded as it was then.
func TestRecordsKeepTheirFormatWithoutRows(t *testing.T) {
	k := core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}
	it := &core.Item{Seq: 300, Key: "a", Body: []byte("{}"), Persistent: true}
	moved := *it
	moved.Row = 200
	for _, pair := range [][2]core.Op{
		{{Kind: core.OpPutItem, Key: k, Item: it}, {Kind: core.OpPutItem, Key: k, Item: &moved}},
		{{Kind: core.OpDeleteItem, Key: k, Seq: 300}, {Kind: core.OpDeleteItem, Key: k, Seq: 300, Row: 200}},
	} {
		plain, err := appendOp(nil, pair[0])
		if err != nil {
			t.Fatal(err)
		}
		withRowBytes, err := appendOp(nil, pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if plain[0] != byte(pair[0].Kind) {
			t.Errorf("%s: kind byte %#x, want %#x", opName(pair[0]), plain[0], byte(pair[0].Kind))
		}
		want := append([]byte{plain[0] | withRow}, plain[1:]...)
		want = binary.AppendUvarint(want, 200)
		if !bytes.Equal(withRowBytes, want) {
			t.Errorf("%s at row 200: % x, want % x", opName(pair[1]), withRowBytes, want)
		}
	}
}

func cmpDiff(got, want any) string { return cmp.Diff(got, want, storetest.CmpOptions()) }

// A store that fsyncs every commit (Options.FullSync) keeps its writes
// through the journal as the default one does.
func TestFullSyncStoreKeepsWrites(t *testing.T) {
	dir := t.TempDir()
	open := func() *Store {
		s, err := Open(dir, Options{FullSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { MustClose(t, s) })
		return s
	}
	s := open()
	if !s.j.sync {
		t.Fatal("the journal of a FullSync store does not fsync")
	}
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	storetest.MustAppend(t, s, entityOp(k), itemOp(k, 1))
	storetest.MustAppend(t, s, itemOp(k, 2))
	MustClose(t, s)
	if got := storetest.MustLoad(t, open()).Items[k]; len(got) != 2 {
		t.Fatalf("%d items after a reopen, want 2", len(got))
	}
}

// A record that SQLite refuses (here a trigger on the connection refuses
// one item) stops the store from taking writes, as the Commit of the next
// Append says; the journal keeps the record, and the next Open, where
// SQLite takes it, applies it.
func TestRecordSQLiteRefusesStopsWritesAndStaysInTheJournal(t *testing.T) {
	dir := t.TempDir()
	s := MustOpen(t, dir)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	mustApply(t, s, entityOp(k))
	s.connMu.Lock()
	_, err := s.conn.ExecContext(context.Background(), `CREATE TEMP TRIGGER refuse BEFORE INSERT ON items
		WHEN CAST(NEW.body AS TEXT) = 'refused' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
	s.connMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	refused := itemOp(k, 1)
	refused.Item.Body = []byte("refused")
	storetest.MustAppend(t, s, refused) // in the journal: done
	s.drain()
	err = s.Append([]core.Op{itemOp(k, 2)}).Wait(context.Background())
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.EUNAVAILABLE || !strings.Contains(err.Error(), "refused by the test") {
		t.Fatalf("the write after the refused record: %v, want EUNAVAILABLE saying why", err)
	}
	MustClose(t, s)
	got := storetest.MustLoad(t, MustOpen(t, dir)).Items[k]
	if len(got) != 1 || got[0].Seq != 1 || string(got[0].Body) != "refused" {
		t.Fatalf("items after a reopen: %d, want the refused one, applied from the journal", len(got))
	}
}

// The applier does not wait out applyDelay once applyMaxBytes have
// gathered: with a delay of an hour, the records still reach SQLite.
func TestApplierAppliesAtOnceWhenMaxBytesGathered(t *testing.T) {
	defer func(d time.Duration, n int) { applyDelay, applyMaxBytes = d, n }(applyDelay, applyMaxBytes)
	applyDelay, applyMaxBytes = time.Hour, 1<<10
	s := MustOpen(t, t.TempDir())
	k := core.EntityKey{Protocol: core.RabbitMQ, Name: "/q"}
	storetest.MustAppend(t, s, entityOp(k))
	for seq := uint64(1); seq <= 50; seq++ {
		storetest.MustAppend(t, s, itemOp(k, seq))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.amu.Lock()
		applied, written := s.applied, s.written
		s.amu.Unlock()
		if applied > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("none of %d records applied, with a delay of an hour and a limit of %d bytes", written, applyMaxBytes)
		}
		time.Sleep(time.Millisecond)
	}
}

// A record of item puts and deletes, every field of the items set and
// whatever their bodies, fits the buffer that recordSize makes for it, so
// that a commit never grows it.
func TestRecordSizeHoldsItsRecord(t *testing.T) {
	k := core.EntityKey{Protocol: core.Cosmos, Name: "db/coll"}
	item := sampleBatch()[0].ops[1].Item
	for _, body := range []int{0, 1, 1 << 10, 1 << 16} {
		big := *item
		big.Body = make([]byte, body)
		var batch []pending
		for n := range 50 {
			batch = append(batch, pending{ops: []core.Op{{Kind: core.OpPutItem, Key: k, Item: &big}}})
			if n%2 == 0 {
				batch = append(batch, pending{ops: []core.Op{{Kind: core.OpDeleteItem, Key: k, Seq: uint64(n) << 40}}})
			}
		}
		size := recordSize(batch)
		rec, err := appendRecord(make([]byte, 0, size), batch)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec) > size {
			t.Errorf("bodies of %d bytes: the record is %d bytes, more than the %d recordSize made room for", body, len(rec), size)
		}
	}
}
