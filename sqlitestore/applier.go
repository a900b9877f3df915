package sqlitestore

import (
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// applyDelay is how long the applier lets records gather, from the first,
// before it applies them: the more a transaction holds, the less each
// write costs SQLite, and a write that a later one makes useless (a
// message published and then acked, an item replaced twice) is not
// written at all. At 100 ms rather than 2, a transaction holds hundreds
// of writes even from one client: lapse's CPU per Cosmos DB write with one
// azcosmos worker went from 349-380 µs to 323-347, and from 197-223 to
// 178-214 with eight. The journal holds the writes meanwhile, so a Commit
// does not wait for it.
var applyDelay = 100 * time.Millisecond // a variable for the tests

// applyMaxBytes is how much the applier lets gather before it applies at
// once. Without it, a store whose applier runs behind (as under
// BenchmarkAcknowledgedWrites) made transactions twice as large and
// 8-15% slower; at 1 MB they cost what they did with the 2 ms delay.
var applyMaxBytes = 1 << 20 // a variable for the tests

// toApply hands the data of a record written to the journal to the
// applier.
func (s *Store) toApply(data []byte) {
	s.amu.Lock()
	s.aq = append(s.aq, data)
	before := s.aBytes
	s.aBytes += len(data)
	s.written++
	if len(s.aq) == 1 {
		s.aFirst = time.Now()
		s.acond.Broadcast()
	}
	// Wake a waiting applier once, as the queue passes the limit.
	full := before < applyMaxBytes && s.aBytes >= applyMaxBytes
	s.amu.Unlock()
	if full {
		select {
		case s.aNow <- struct{}{}:
		default:
		}
	}
}

// applier is the goroutine that applies the journal's records to SQLite,
// those that gathered in applyDelay from the first in one transaction,
// until the store closes.
func (s *Store) applier() {
	defer close(s.aDone)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		s.amu.Lock()
		for len(s.aq) == 0 && !s.aStop {
			s.acond.Wait()
		}
		if s.aStop && (len(s.aq) == 0 || s.aAbandon) {
			s.amu.Unlock()
			return
		}
		// The delay runs from the first record's commit: records that
		// gathered while the last transaction ran have waited already.
		wait := applyDelay - time.Since(s.aFirst)
		if s.aUrgent > 0 || s.aStop || s.aBytes >= applyMaxBytes {
			wait = 0
		}
		s.amu.Unlock()
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-s.aNow:
				timer.Stop()
			}
		}
		s.amu.Lock()
		recs := s.aq
		s.aq, s.aBytes = nil, 0
		s.amu.Unlock()
		err := s.applyRecords(recs)
		s.amu.Lock()
		if err != nil && s.aErr == nil {
			s.aErr = err
		}
		s.applied += int64(len(recs))
		s.acond.Broadcast()
		s.amu.Unlock()
	}
}

// applyRecords applies the records' Appends in one transaction or, if
// that fails, each in a transaction of its own, and returns the first
// error.
func (s *Store) applyRecords(recs [][]byte) error {
	var batch []pending
	for _, r := range recs {
		ps, err := decodeRecord(r)
		if err != nil {
			return core.Errorf(core.EINTERNAL, "data folder %q: a record of the journal does not decode: %v", s.folder, err)
		}
		batch = append(batch, ps...)
	}
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.dbClosed {
		return core.Errorf(core.EUNAVAILABLE, "the store is closed")
	}
	err := s.apply(batch)
	if err == nil || len(batch) == 1 {
		return err
	}
	err = nil
	for i := range batch {
		if e := s.apply(batch[i : i+1]); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// drain returns once the applier has applied every record written before
// it was called.
func (s *Store) drain() {
	s.amu.Lock()
	target := s.written
	if s.applied >= target {
		s.amu.Unlock()
		return
	}
	s.aUrgent++
	s.acond.Broadcast()
	s.amu.Unlock()
	select {
	case s.aNow <- struct{}{}:
	default:
	}
	s.amu.Lock()
	for s.applied < target {
		s.acond.Wait()
	}
	s.aUrgent--
	s.amu.Unlock()
}

// applyFailure is the error of a record the applier could not apply, if
// any: the store then takes no more writes, and keeps its journal for the
// next Open to apply.
func (s *Store) applyFailure() error {
	s.amu.Lock()
	defer s.amu.Unlock()
	if s.aErr != nil {
		return core.Errorf(core.EUNAVAILABLE, "data folder %q takes no more writes: %v", s.folder, s.aErr)
	}
	return nil
}

// stopApplier ends the applier: once it has applied every record, or at
// once when abandon is set (the journal keeps them for the next Open).
func (s *Store) stopApplier(abandon bool) {
	s.amu.Lock()
	s.aStop, s.aAbandon = true, abandon
	s.acond.Broadcast()
	s.amu.Unlock()
	select {
	case s.aNow <- struct{}{}:
	default:
	}
	<-s.aDone
}
