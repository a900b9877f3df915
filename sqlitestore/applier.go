package sqlitestore

import (
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// applyDelay is how long the applier lets records gather before it
// applies them: the more a transaction holds, the less each write costs
// SQLite, and a write that a later one makes useless (a message published
// and then acked, an item replaced twice) is not written at all.
const applyDelay = 2 * time.Millisecond

// toApply hands the data of a record written to the journal to the
// applier.
func (s *Store) toApply(data []byte) {
	s.amu.Lock()
	s.aq = append(s.aq, data)
	s.written++
	if len(s.aq) == 1 {
		s.acond.Broadcast()
	}
	s.amu.Unlock()
}

// applier is the goroutine that applies the journal's records to SQLite,
// those that gathered in applyDelay in one transaction, until the store
// closes.
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
		urgent := s.aUrgent > 0 || s.aStop
		s.amu.Unlock()
		if !urgent {
			timer.Reset(applyDelay)
			select {
			case <-timer.C:
			case <-s.aNow:
				timer.Stop()
			}
		}
		s.amu.Lock()
		recs := s.aq
		s.aq = nil
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
