package sqlitestore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Reading a journal tells a torn tail from damage (docs/architecture.md: a
// file that keeps acknowledged data tells one from the other).
//
// A commit appends its record with one write(2), after the write of the
// record before it has returned, and a failed write is cut off again
// (journal.write). So a lapse that is killed leaves at most one bad
// record, the last, cut short: a torn tail. It held no acknowledged write
// and is dropped. A record that does not decode is the torn tail when
//
//   - no record that decodes starts anywhere after it, and
//   - it is cut short (its header, or the length its header gives, runs
//     past the end of the file), or it is whole and its checksum does not
//     match and nothing but zero bytes follows it, or it is zero bytes to
//     the end: the pages of a last write that a power loss kept from the
//     disk.
//
// Anything else is damage: a record before the end whose bytes changed
// after it was written (a bit flip, a bad sector, a stray write), which
// acknowledged writes may follow, or more bytes after a bad record than
// the torn write of that one record could leave, or a whole record whose
// checksum matches but that does not decode. Damage stops Open: dropping
// it would drop acknowledged writes without a word (Options.RepairJournal
// says what it drops and opens).
//
// After a bad record, the next record is looked for where the bad one's
// header says it ends and then at every later byte: a record starts where
// a length that fits, a checksum that matches and data that decodes are
// found. Records are self-delimiting and their replay is idempotent (the
// package doc), so those found after damage can be applied on their own.

// journalScan is what reading a journal's bytes found.
type journalScan struct {
	records [][]byte // the data of the records that decode, in order
	// end is where the last record that decodes ends: with no damage,
	// the journal is cut there (the torn tail dropped).
	end  int64
	torn *badSpan   // the torn tail, if any
	bad  []*badSpan // the damage, in order
	size int64      // the journal's size
	kept string     // where a copy of a damaged journal is kept
}

// badSpan is a run of bytes of a journal that holds no record that
// decodes.
type badSpan struct {
	off, end int64  // the bytes [off, end)
	why      string // what is wrong with the record at off
	after    int    // records that decode after it
}

// resyncBudget bounds the bytes checksummed while looking for the next
// record after a bad one (a length read from a message body can make
// every byte a candidate of a megabyte). Past it the scan gives up: what
// follows is taken to be damage, never a torn tail, so that it is not
// dropped without a word.
var resyncBudget int64 = 1 << 30 // a variable for the tests

// scanJournal reads the records of a journal's bytes b, which start with
// journalMagic.
func scanJournal(b []byte) *journalScan {
	sc := &journalScan{size: int64(len(b))}
	budget := resyncBudget
	off := len(journalMagic)
	for off < len(b) {
		n, why := recordAt(b, off)
		if why == "" {
			sc.records = append(sc.records, b[off+recordHeader:off+recordHeader+n])
			off += recordHeader + n
			sc.end = int64(off)
			for _, span := range sc.bad {
				span.after++
			}
			continue
		}
		next := nextRecord(b, off, &budget)
		if next < 0 && budget > 0 && isTornTail(b, off) {
			sc.torn = &badSpan{off: int64(off), end: int64(len(b)), why: why}
			break
		}
		if next < 0 {
			sc.bad = append(sc.bad, &badSpan{off: int64(off), end: int64(len(b)), why: why})
			break
		}
		sc.bad = append(sc.bad, &badSpan{off: int64(off), end: int64(next), why: why})
		off = next
	}
	if sc.end == 0 {
		sc.end = int64(len(journalMagic))
	}
	return sc
}

// recordAt returns the length of the data of the record at off, or why
// there is none that decodes there.
func recordAt(b []byte, off int) (int, string) {
	if len(b)-off < recordHeader {
		return 0, "its header is cut short"
	}
	n := binary.LittleEndian.Uint32(b[off:])
	if uint64(n) > uint64(len(b)-off-recordHeader) {
		return 0, "its length runs past the end of the file"
	}
	data := b[off+recordHeader : off+recordHeader+int(n)]
	if crc32.Checksum(data, crcTable) != binary.LittleEndian.Uint32(b[off+4:]) {
		return 0, "its checksum does not match"
	}
	if _, err := decodeRecord(data); err != nil {
		return 0, "its checksum matches but it does not decode"
	}
	return int(n), ""
}

// nextRecord returns where the first record that decodes after the bad
// one at off starts, or -1: first where the bad one's header says it ends,
// then at every byte after off. It spends budget on the bytes it
// checksums, and returns -1 once that is spent.
func nextRecord(b []byte, off int, budget *int64) int {
	if len(b)-off >= recordHeader {
		if end := off + recordHeader + int(binary.LittleEndian.Uint32(b[off:])); end > off && end < len(b) {
			if _, why := recordAt(b, end); why == "" {
				return end
			}
		}
	}
	for p := off + 1; p+recordHeader <= len(b); p++ {
		n := int64(binary.LittleEndian.Uint32(b[p:]))
		if n > int64(len(b)-p-recordHeader) {
			continue
		}
		if *budget -= recordHeader + n; *budget <= 0 {
			return -1
		}
		if _, why := recordAt(b, p); why == "" {
			return p
		}
	}
	return -1
}

// isTornTail reports whether the bad record at off, after which no record
// decodes, is what a write cut short leaves (see above).
func isTornTail(b []byte, off int) bool {
	if len(bytes.Trim(b[off:], "\x00")) == 0 {
		return true // no write reached these pages of the file
	}
	if len(b)-off < recordHeader {
		return true
	}
	end := off + recordHeader + int(binary.LittleEndian.Uint32(b[off:]))
	if end > len(b) || end < off {
		return true
	}
	data := b[off+recordHeader : end]
	if crc32.Checksum(data, crcTable) == binary.LittleEndian.Uint32(b[off+4:]) {
		return false // written whole: it does not decode for another reason
	}
	return len(bytes.Trim(b[end:], "\x00")) == 0
}

// droppedBytes is how many bytes of the journal the damage holds.
func (sc *journalScan) droppedBytes() int64 {
	var n int64
	for _, span := range sc.bad {
		n += span.end - span.off
	}
	return n
}

// damage says, on one line, where the journal is damaged and what
// decodes after that.
func (sc *journalScan) damage() string {
	first := sc.bad[0]
	var b strings.Builder
	fmt.Fprintf(&b, "is damaged at byte %d (a record: %s)", first.off, first.why)
	if len(sc.bad) > 1 {
		fmt.Fprintf(&b, " and in %d more places", len(sc.bad)-1)
	}
	fmt.Fprintf(&b, "; %d bytes do not decode, and %d records after byte %d do", sc.droppedBytes(), first.after, first.off)
	if sc.torn != nil {
		fmt.Fprintf(&b, ", then the last %d bytes are a write cut short", sc.torn.end-sc.torn.off)
	}
	return b.String()
}

// keepAside copies the damaged journal at path, whose bytes are b, to a
// file next to it named after it and the time, and returns that file's
// path. A copy with the same bytes, kept by an earlier Open, is kept
// once.
func keepAside(path string, b []byte, now time.Time) (string, error) {
	prefix := path + ".corrupt-"
	if olds, err := filepath.Glob(prefix + "*"); err == nil {
		for _, old := range olds {
			if fi, err := os.Stat(old); err != nil || fi.Size() != int64(len(b)) {
				continue
			}
			if kept, err := os.ReadFile(old); err == nil && bytes.Equal(kept, b) {
				return old, nil
			}
		}
	}
	name := prefix + now.UTC().Format("20060102T150405Z")
	for i := 2; ; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if os.IsExist(err) && i < 100 {
			name = prefix + now.UTC().Format("20060102T150405Z") + "-" + strconv.Itoa(i)
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(b)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
}
