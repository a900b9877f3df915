package core

import "sort"

// seqQueue holds items in ascending Seq order. Items leave from the front,
// come in at the back (new sequence numbers are always the highest) or, when
// returned from a lock, at their place by Seq. An item removed from the
// middle stays as a tombstone (the caller's live test says which entries are
// live) until it reaches the front or the queue compacts.
type seqQueue struct {
	buf  []*item
	head int // index of the first entry
	dead int // tombstones between head and the end
}

// length returns the number of entries, tombstones included.
func (q *seqQueue) length() int { return len(q.buf) - q.head }

func (q *seqQueue) at(i int) *item { return q.buf[q.head+i] }

// pushBack appends it; its Seq must be the highest in the queue.
func (q *seqQueue) pushBack(it *item) {
	if q.head > 0 && q.head >= len(q.buf)/2 && len(q.buf) == cap(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf = q.buf[:n]
		q.head = 0
	}
	q.buf = append(q.buf, it)
}

// search returns the index of the first entry with Seq >= seq.
func (q *seqQueue) search(seq uint64) int {
	live := q.buf[q.head:]
	return sort.Search(len(live), func(i int) bool { return live[i].Seq >= seq })
}

// insert puts it at its place by Seq.
func (q *seqQueue) insert(it *item) {
	i := q.search(it.Seq)
	n := q.length()
	if i == n {
		q.pushBack(it)
		return
	}
	if q.head > 0 && i < n/2 {
		// Room in front: shift the shorter prefix left by one.
		copy(q.buf[q.head-1:], q.buf[q.head:q.head+i])
		q.head--
		q.buf[q.head+i] = it
		return
	}
	q.buf = append(q.buf, nil)
	copy(q.buf[q.head+i+1:], q.buf[q.head+i:])
	q.buf[q.head+i] = it
}

// front returns the first entry for which live is true, dropping the
// tombstones before it.
func (q *seqQueue) front(live func(*item) bool) *item {
	for head := q.head; q.head < len(q.buf); {
		it := q.buf[q.head]
		if live(it) {
			if q.head > head {
				q.fit()
			}
			return it
		}
		q.buf[q.head] = nil
		q.head++
		q.dead--
	}
	q.reset()
	return nil
}

// popFront removes the first entry, which the caller found with front.
func (q *seqQueue) popFront() {
	q.buf[q.head] = nil
	q.head++
	if q.head == len(q.buf) {
		q.reset()
		return
	}
	q.fit()
}

// reset empties the queue, and gives its room back when it has more than
// keepRoom.
func (q *seqQueue) reset() {
	if cap(q.buf) > keepRoom {
		q.buf = nil
	}
	q.buf = q.buf[:0]
	q.head = 0
	q.dead = 0
}

// fit gives the queue's room back when it holds less than a quarter of it.
func (q *seqQueue) fit() {
	if tooRoomy(q.length(), cap(q.buf)) {
		q.buf = refit(q.buf, q.head)
		q.head = 0
	}
}

// tombstone records that one entry is no longer live, and compacts the
// queue when most of it is dead.
func (q *seqQueue) tombstone(live func(*item) bool) {
	q.dead++
	for q.head < len(q.buf) && !live(q.buf[q.head]) {
		q.buf[q.head] = nil
		q.head++
		q.dead--
	}
	if q.head == len(q.buf) {
		q.reset()
		return
	}
	if q.dead > 64 && q.dead > q.length()/2 {
		q.compact(live)
	}
	q.fit()
}

func (q *seqQueue) compact(live func(*item) bool) {
	out := q.buf[:0]
	for _, it := range q.buf[q.head:] {
		if live(it) {
			out = append(out, it)
		}
	}
	clear(q.buf[len(out):])
	q.buf = out
	q.head = 0
	q.dead = 0
}
