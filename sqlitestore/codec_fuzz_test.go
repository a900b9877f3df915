package sqlitestore

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

// opsOf returns the ops of a decoded record, Append by Append.
func opsOf(batch []pending) [][]core.Op {
	out := make([][]core.Op, len(batch))
	for i, p := range batch {
		out[i] = p.ops
	}
	return out
}

// FuzzDecodeRecord feeds decodeRecord any bytes: it never panics, and what
// it decodes, encoded again, decodes to the same ops (encode, then decode,
// round-trips). The seeds are records of every op kind, and the same cut
// short, as the journal holds them.
func FuzzDecodeRecord(f *testing.F) {
	batch := sampleBatch()
	whole, err := appendRecord(nil, batch)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(whole)
	f.Add(whole[:len(whole)/2])
	for _, p := range batch {
		rec, err := appendRecord(nil, []pending{p})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rec)
	}
	k := core.EntityKey{Protocol: core.RabbitMQ, Name: "/q"}
	for _, ops := range [][]core.Op{{entityOp(k)}, {itemOp(k, 1), itemOp(k, 2)}, {{Kind: core.OpDeleteItem, Key: k, Seq: 1}}} {
		rec, err := appendRecord(nil, []pending{{ops: ops}})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rec)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 1, 99})

	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeRecord(b)
		if err != nil {
			return
		}
		again, err := appendRecord(nil, got)
		if err != nil {
			t.Fatalf("a decoded record does not encode: %v", err)
		}
		back, err := decodeRecord(again)
		if err != nil {
			t.Fatalf("a decoded record, encoded again, does not decode: %v", err)
		}
		if diff := cmp.Diff(opsOf(got), opsOf(back), storetest.CmpOptions()); diff != "" {
			t.Fatalf("decoded, encoded and decoded again, the record changed (-first +second):\n%s", diff)
		}
	})
}

// FuzzScanJournal feeds scanJournal any journal: it never panics, keeps
// only records that decode, in the order of the file, and finds the
// records of a good journal that follow any damage.
func FuzzScanJournal(f *testing.F) {
	whole, err := appendRecord(nil, sampleBatch())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(append(append([]byte{}, journalMagic...), 1, 0, 0, 0, 0, 0, 0, 0, 0), whole)
	f.Add([]byte{}, whole)
	f.Add(append(append([]byte{}, journalMagic...), make([]byte, 64)...), whole)
	f.Fuzz(func(t *testing.T, b, rec []byte) {
		if !bytes.HasPrefix(b, journalMagic) {
			b = append(append([]byte{}, journalMagic...), b...)
		}
		sc := scanJournal(b)
		for _, r := range sc.records {
			if _, err := decodeRecord(r); err != nil {
				t.Fatalf("a record kept does not decode: %v", err)
			}
		}
		if sc.end < int64(len(journalMagic)) || sc.end > sc.size {
			t.Fatalf("end %d, outside the journal of %d bytes", sc.end, sc.size)
		}
		// Damage, then a record that decodes: the record is found.
		if _, err := decodeRecord(rec); err != nil || len(rec) == 0 {
			return
		}
		framed := append(make([]byte, recordHeader), rec...)
		binary.LittleEndian.PutUint32(framed, uint32(len(rec)))
		binary.LittleEndian.PutUint32(framed[4:], crc32.Checksum(rec, crcTable))
		sc = scanJournal(append(append([]byte{}, b...), framed...))
		if len(sc.records) == 0 || !bytes.Equal(sc.records[len(sc.records)-1], rec) || sc.torn != nil {
			t.Fatalf("the good record at the end was not found: %d records, torn %v, %d damaged places", len(sc.records), sc.torn != nil, len(sc.bad))
		}
	})
}
