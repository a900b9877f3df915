package sqlitestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
)

// The journal is the file a commit writes: one record, the ops of the
// Appends it commits, appended with one write(2) (see the package doc).
// The writes reach SQLite later, in the applier's transactions; once
// SQLite has them all, the journal is emptied. At Open, whatever it still
// holds, the records of a lapse that was killed, is applied first.
//
//	file   = journalMagic { record }
//	record = uint32 length, uint32 CRC-32C of the data, data (codec.go)
//
// in little-endian order. A last record cut short is the write of a
// process killed half way through it, whose Commits were not done: it is
// dropped. A bad record that more data follows is damage, and stops Open
// unless Options.RepairJournal is set (journalscan.go).
const journalName = "lapse.journal"

// journalMagic starts a journal file: it names the format, so that a lapse
// that does not know it refuses the folder rather than lose its writes.
var journalMagic = []byte("lapse journal 1\n")

// journalLimit is how large the journal grows before a commit waits for
// the applier to catch up and empties it: the most of the writes held in
// memory for the applier, too.
var journalLimit int64 = 32 << 20 // a variable for the tests

// recordHeader is the length of a record's length and CRC.
const recordHeader = 8

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// journal is the open journal file. Its methods are the committer's: one
// goroutine at a time.
type journal struct {
	f    *os.File
	size int64 // where the next record goes
	sync bool  // fsync each record (Options.FullSync)
}

// readJournal reads the journal at path, if there is one, and its
// records (journalscan.go); sc is nil when b is not a journal of this
// format.
func readJournal(path string) (b []byte, sc *journalScan, err error) {
	b, err = os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &journalScan{}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !bytes.HasPrefix(b, journalMagic) {
		if len(b) < len(journalMagic) && bytes.HasPrefix(journalMagic, b) {
			return b, &journalScan{}, nil // cut short as it was made
		}
		return b, nil, nil
	}
	return b, scanJournal(b), nil
}

// openJournal opens the journal at path, whose bytes b and records sc
// readJournal returned, making it when there is none. Without damage, it
// cuts the torn tail, if any, and leaves size after the last whole
// record; with damage, it leaves the file as it is, for Open to repair.
func openJournal(path string, sync bool, b []byte, sc *journalScan) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	j := &journal{f: f, sync: sync}
	if err := j.prepare(b, sc); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func (j *journal) prepare(b []byte, sc *journalScan) error {
	if sc == nil {
		return fmt.Errorf("%s is not a journal this lapse can read", journalName)
	}
	if len(b) < len(journalMagic) {
		// None, empty, or cut short as it was made: nothing was written
		// to it.
		if _, err := j.f.WriteAt(journalMagic, 0); err != nil {
			return err
		}
		j.size = int64(len(journalMagic))
		return nil
	}
	if len(sc.bad) > 0 {
		j.size = sc.size
		return nil
	}
	// Drop the torn tail, if any, so that the next record follows the
	// last whole one.
	if sc.end < sc.size {
		if err := j.f.Truncate(sc.end); err != nil {
			return err
		}
	}
	j.size = sc.end
	return nil
}

// write appends a record holding data (which starts with recordHeader
// bytes left free for the header). A failed write leaves the journal as
// it was before it.
func (j *journal) write(rec []byte) error {
	data := rec[recordHeader:]
	binary.LittleEndian.PutUint32(rec, uint32(len(data)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(data, crcTable))
	_, err := j.f.WriteAt(rec, j.size)
	if err == nil && j.sync {
		err = j.f.Sync()
	}
	if err != nil {
		// Cut what was written of it, so that no later record follows a
		// torn one.
		if terr := j.f.Truncate(j.size); terr != nil {
			return errors.Join(err, terr)
		}
		return err
	}
	j.size += int64(len(rec))
	return nil
}

// empty drops every record: SQLite holds them all.
func (j *journal) empty() error {
	if err := j.f.Truncate(int64(len(journalMagic))); err != nil {
		return err
	}
	j.size = int64(len(journalMagic))
	if j.sync {
		return j.f.Sync()
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }
