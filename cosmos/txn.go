package cosmos

import (
	"slices"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// txn is a transaction on one partition key of a container, as a
// transactional batch and a stored procedure make it: its operations are
// planned one after another against the items as stored at now (read)
// and as its own earlier operations left them, and what they write is
// written at once, all or nothing, by Server.change.
type txn struct {
	s      *Server
	ct     *container
	pk     partitionKey
	canon  string
	now    time.Time
	read   reader
	states map[string]*batchState
	// puts and removes are what the transaction writes so far; written
	// is the index in puts of each key, and writers[j] the operation (by
	// its number, from 0, in the order do planned them) that wrote puts[j].
	puts    []core.Item
	removes []string
	written map[string]int
	writers []int
	ops     int
}

// newTxn starts a transaction of ct's partition pk at now.
func (s *Server) newTxn(ct *container, pk partitionKey, now time.Time, read reader) *txn {
	return &txn{s: s, ct: ct, pk: pk, canon: pk.canon(), now: now, read: read,
		states: map[string]*batchState{}, written: map[string]int{}}
}

// state returns item id as the transaction sees it.
func (t *txn) state(id string) *batchState {
	key := itemKey(t.canon, id)
	if st := t.states[key]; st != nil {
		return st
	}
	st := &batchState{}
	// A container deleted meanwhile fails the write (core.Engine.Change).
	if it, ok, _ := t.read(key); ok {
		st.exists, st.body = true, it.Body
		st.etag, st.rid = splitMeta(it.Meta)
	}
	t.states[key] = st
	return st
}

// do plans one operation; a failed one changes nothing.
func (t *txn) do(op batchOp) (batchResult, error) {
	n := t.ops
	t.ops++
	res, err := t.s.planOp(t.ct, t.pk, op, t.state, t.now)
	if err != nil {
		return batchResult{}, err
	}
	key := itemKey(t.canon, op.id)
	if res.put != nil {
		// under the key it is written at: a replace's new id renames
		putKey := res.put.Key
		if j, ok := t.written[putKey]; ok {
			t.puts[j], t.writers[j] = *res.put, n
		} else {
			t.written[putKey] = len(t.puts)
			t.puts = append(t.puts, *res.put)
			t.writers = append(t.writers, n)
		}
	}
	if res.remove {
		if j, ok := t.written[key]; ok {
			t.puts = slices.Delete(t.puts, j, j+1)
			t.writers = slices.Delete(t.writers, j, j+1)
			delete(t.written, key)
			for k, n := range t.written {
				if n > j {
					t.written[k] = n - 1
				}
			}
		}
		t.removes = append(t.removes, key)
	}
	return res.result, nil
}
