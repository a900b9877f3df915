package sqlitestore

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

// recordOffsets returns where each record of journal bytes b starts.
func recordOffsets(tb testing.TB, b []byte) []int {
	tb.Helper()
	var offs []int
	for off := len(journalMagic); off < len(b); off += recordHeader + int(binary.LittleEndian.Uint32(b[off:])) {
		offs = append(offs, off)
	}
	return offs
}

// MustSevenRecords returns a data folder whose journal holds seven
// records that SQLite does not have, as a kill -9 leaves it: an entity
// "/other" with an item, the durable queue "/q", and five items of it,
// one record each; and where the records start.
func MustSevenRecords(tb testing.TB) (dir string, offs []int) {
	tb.Helper()
	live, dir := tb.TempDir(), tb.TempDir()
	s := MustOpen(tb, live)
	s.connMu.Lock() // the applier stays out of SQLite
	other, q := core.EntityKey{Protocol: core.RabbitMQ, Name: "/other"}, core.EntityKey{Protocol: core.RabbitMQ, Name: "/q"}
	storetest.MustAppend(tb, s, entityOp(other), itemOp(other, 1))
	storetest.MustAppend(tb, s, entityOp(q))
	for seq := uint64(1); seq <= 5; seq++ {
		storetest.MustAppend(tb, s, itemOp(q, seq))
	}
	copyFolder(tb, live, dir)
	s.connMu.Unlock()
	b, err := os.ReadFile(filepath.Join(dir, journalName))
	if err != nil {
		tb.Fatal(err)
	}
	if offs = recordOffsets(tb, b); len(offs) != 7 {
		tb.Fatalf("the journal holds %d records, want 7", len(offs))
	}
	return dir, offs
}

// flipBit flips one bit of the file at path, at byte off.
func flipBit(tb testing.TB, path string, off int) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	b[off] ^= 0x10
	MustWriteFile(tb, path, b)
	return b
}

// keptCopies returns the copies of the journal kept aside in dir.
func keptCopies(tb testing.TB, dir string) []string {
	tb.Helper()
	kept, err := filepath.Glob(filepath.Join(dir, journalName+".corrupt-*"))
	if err != nil {
		tb.Fatal(err)
	}
	return kept
}

// issue 25: kill -9 during confirmed persistent publishes leaves seven
// records in the journal; a bit flips in the second. Open refuses the
// folder, naming the journal and the offset of the bad record, keeps a
// copy of the journal aside and changes nothing else; with RepairJournal it
// says what it drops and what it keeps, and opens.
func TestBitFlipInSecondOfSevenRecordsStopsOpen(t *testing.T) {
	other, q := core.EntityKey{Protocol: core.RabbitMQ, Name: "/other"}, core.EntityKey{Protocol: core.RabbitMQ, Name: "/q"}
	for _, tc := range []struct {
		name   string
		record int // which record (from 0) the bit flips in
		at     int // where in it
		// what repairing keeps of /q: its items, or -1 for no /q
		items  int
		resync bool // the bad record's length is what flipped
	}{
		// The declare of /q is lost: its items are of no entity.
		{"InTheData", 1, recordHeader + 3, -1, false},
		{"InTheChecksum", 1, 5, -1, false},
		// The length of the record of item 2 is wrong: the records after
		// it are found by looking for one at every byte.
		{"InTheLengthOfAnItem", 3, 3, 4, true},
		{"InTheLowByteOfALength", 3, 0, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, offs := MustSevenRecords(t)
			path := filepath.Join(dir, journalName)
			bad := offs[tc.record]
			damaged := flipBit(t, path, bad+tc.at)
			before, err := os.ReadFile(filepath.Join(dir, dbName))
			if err != nil {
				t.Fatal(err)
			}

			err = MustFailOpen(t, dir, core.EINVALID, `journal "`+path+`" is damaged at byte `+strconv.Itoa(bad)+" ")
			for _, want := range []string{"5 records after byte", "A copy is kept as", "--repair-journal"} {
				if want == "5 records after byte" {
					want = strconv.Itoa(6-tc.record) + " records after byte"
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Open: %v, want it to say %q", err, want)
				}
			}
			kept := keptCopies(t, dir)
			if len(kept) != 1 || !strings.Contains(err.Error(), kept[0]) {
				t.Fatalf("copies kept aside: %q, want one, named in the error %q", kept, err)
			}
			for _, f := range []string{kept[0], path} {
				if got, err := os.ReadFile(f); err != nil || !bytes.Equal(got, damaged) {
					t.Errorf("%s after the refused Open: %d bytes, %v; want the damaged journal's %d", f, len(got), err, len(damaged))
				}
			}
			if after, err := os.ReadFile(filepath.Join(dir, dbName)); err != nil || !bytes.Equal(after, before) {
				t.Errorf("the refused Open changed %s", dbName)
			}
			// Refused again, with no second copy.
			MustFailOpen(t, dir, core.EINVALID, "is damaged at byte "+strconv.Itoa(bad)+" ")
			if n := len(keptCopies(t, dir)); n != 1 {
				t.Errorf("%d copies after a second refused Open, want 1", n)
			}

			var logged bytes.Buffer
			s, err := Open(dir, Options{RepairJournal: true, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatalf("Open with RepairJournal: %v", err)
			}
			t.Cleanup(func() { MustClose(t, s) })
			t.Logf("repair log:\n%s", logged.String())
			dropped := offs[tc.record+1] - bad
			for _, want := range []string{
				"offset=" + strconv.Itoa(bad) + " ", "bytes=" + strconv.Itoa(dropped) + " ", "recordsAfter=" + strconv.Itoa(6-tc.record),
				"recordsKept=6", "droppedBytes=" + strconv.Itoa(dropped), "copy=" + kept[0],
			} {
				if !strings.Contains(logged.String(), want) {
					t.Errorf("the repair's log lacks %q", want)
				}
			}
			if tc.resync != strings.Contains(logged.String(), "its length runs past the end") {
				t.Errorf("the repair's log says why %q; want the length to be the trouble: %v", logged.String(), tc.resync)
			}
			snap := storetest.MustLoad(t, s)
			if got := snap.Items[other]; len(got) != 1 {
				t.Errorf("/other has %d items, want the 1 of the record before the damage", len(got))
			}
			_, hasQ := snap.Entity(q)
			switch {
			case tc.items < 0 && hasQ:
				t.Errorf("/q, whose record was dropped, is stored")
			case tc.items >= 0 && (!hasQ || len(snap.Items[q]) != tc.items):
				t.Errorf("/q stored: %v, with %d items; want %d, those of the records after the damage", hasQ, len(snap.Items[q]), tc.items)
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(journalMagic)) {
				t.Errorf("the journal after the repair: %v; want it emptied", err)
			}
			// The repaired folder takes writes and opens as any other.
			storetest.MustAppend(t, s, entityOp(q), itemOp(q, 9))
			MustClose(t, s)
			if got := storetest.MustLoad(t, MustOpen(t, dir)).Items[q]; len(got) != max(tc.items, 0)+1 {
				t.Errorf("%d items of /q after a write and a reopen, want %d", len(got), max(tc.items, 0)+1)
			}
		})
	}
}

// What a torn write can leave at the end of the journal is dropped, what
// it cannot is damage: scanJournal tells them apart by the bytes alone.
func TestScanJournalTellsTornTailFromDamage(t *testing.T) {
	rec := func(data []byte) []byte {
		b := append(make([]byte, recordHeader), data...)
		binary.LittleEndian.PutUint32(b, uint32(len(data)))
		binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(data, crcTable))
		return b
	}
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	good := func(seq uint64) []byte {
		data, err := appendRecord(nil, []pending{{ops: []core.Op{itemOp(k, seq)}}})
		if err != nil {
			t.Fatal(err)
		}
		return rec(data)
	}
	badCRC := func(seq uint64) []byte {
		r := good(seq)
		r[recordHeader+2] ^= 1
		return r
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(append([][]byte{journalMagic}, parts...), nil) }
	undecodable := rec([]byte{1, 1, 99}) // one Append of one op of kind 99
	g1, g2, g3 := good(1), good(2), good(3)
	for _, tc := range []struct {
		name    string
		b       []byte
		records int
		torn    bool
		bad     int // damaged places
		after   int // records after the first
	}{
		{"Empty", cat(), 0, false, 0, 0},
		{"Whole", cat(g1, g2, g3), 3, false, 0, 0},
		{"HeaderCutShort", cat(g1, g2[:5]), 1, true, 0, 0},
		{"DataCutShort", cat(g1, g2, g3[:len(g3)-1]), 2, true, 0, 0},
		{"LastChecksumBad", cat(g1, badCRC(2)), 1, true, 0, 0},
		{"LastChecksumBadThenZeros", cat(g1, badCRC(2), make([]byte, 4096)), 1, true, 0, 0},
		{"ZerosOnly", cat(g1, make([]byte, 100)), 1, true, 0, 0},
		{"MiddleChecksumBad", cat(g1, badCRC(2), g3), 2, false, 1, 1},
		{"FirstChecksumBad", cat(badCRC(1), g2, g3), 2, false, 1, 2},
		{"LastChecksumBadThenGarbage", cat(g1, badCRC(2), []byte("garbage")), 1, false, 1, 0},
		{"TwoBadRecords", cat(g1, badCRC(2), badCRC(3)), 1, false, 1, 0},
		{"WholeButUndecodable", cat(g1, undecodable), 1, false, 1, 0},
		{"LengthTooLong", cat(g1, append([]byte{0xff, 0xff, 0, 0}, g2[4:]...), g3), 2, false, 1, 1},
		{"LengthTooShort", cat(g1, append([]byte{byte(len(g2) - recordHeader - 3), 0, 0, 0}, g2[4:]...), g3), 2, false, 1, 1},
		{"TwoDamagedPlaces", cat(badCRC(1), g2, badCRC(3), g1, g3[:4]), 2, true, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scanJournal(tc.b)
			if len(sc.records) != tc.records || (sc.torn != nil) != tc.torn || len(sc.bad) != tc.bad {
				t.Fatalf("%d records, torn %v, %d damaged places; want %d, %v, %d", len(sc.records), sc.torn != nil, len(sc.bad), tc.records, tc.torn, tc.bad)
			}
			if tc.bad > 0 && sc.bad[0].after != tc.after {
				t.Errorf("%d records after the damage, want %d", sc.bad[0].after, tc.after)
			}
			for _, r := range sc.records {
				if _, err := decodeRecord(r); err != nil {
					t.Errorf("a record kept does not decode: %v", err)
				}
			}
		})
	}
}
