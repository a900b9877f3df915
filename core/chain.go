package core

// chainQueue is an entity's expiry chain: active items whose due times do
// not decrease in the order they joined it, the usual case of one TTL per
// entity counted from the enqueue. Items in it need no timer of their own:
// one timer at the due time of the first live entry serves them all
// (armActive, expireChain), which spares a heap push and pop per item.
//
// An item leaves the chain by clearing its chained flag; its entry stays
// as a tombstone until it reaches the front or the queue compacts. Each
// entry carries the join number the item got when it joined (unique in the
// engine), so an entry left behind by an item that later joined again, or
// whose memory was reused for another item, is never taken for live.
type chainQueue struct {
	buf  []chainEntry
	head int // index of the first entry
	dead int // tombstones between head and the end
}

type chainEntry struct {
	x   *item
	n   uint64 // the item's join number
	due int64  // its due time, Unix nanoseconds
}

func (c *chainEntry) live() bool { return c.x.chained && c.x.chainN == c.n }

// length returns the number of entries, tombstones included.
func (q *chainQueue) length() int { return len(q.buf) - q.head }

// pushBack appends an entry; its due time must not be before the last one's.
func (q *chainQueue) pushBack(c chainEntry) {
	if q.head > 0 && q.head >= len(q.buf)/2 && len(q.buf) == cap(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf = q.buf[:n]
		q.head = 0
	}
	q.buf = append(q.buf, c)
}

// front returns the first live entry, dropping the tombstones before it,
// or nil.
func (q *chainQueue) front() *chainEntry {
	for head := q.head; q.head < len(q.buf); {
		if q.buf[q.head].live() {
			if q.head > head {
				q.fit()
			}
			return &q.buf[q.head]
		}
		q.buf[q.head] = chainEntry{}
		q.head++
		q.dead--
	}
	q.reset()
	return nil
}

// popFront removes the first entry, which the caller found with front.
func (q *chainQueue) popFront() {
	q.buf[q.head] = chainEntry{}
	q.head++
	if q.head == len(q.buf) {
		q.reset()
		return
	}
	q.fit()
}

// reset empties the queue, and gives its room back when it has more than
// keepRoom.
func (q *chainQueue) reset() {
	if cap(q.buf) > keepRoom {
		q.buf = nil
	}
	clear(q.buf)
	q.buf = q.buf[:0]
	q.head = 0
	q.dead = 0
}

// fit gives the queue's room back when it holds less than a quarter of it.
// It moves the entries: a *chainEntry from front is stale after it.
func (q *chainQueue) fit() {
	if tooRoomy(q.length(), cap(q.buf)) {
		q.buf = refit(q.buf, q.head)
		q.head = 0
	}
}

// tombstone records that one entry is no longer live, and compacts the
// queue when most of it is dead.
func (q *chainQueue) tombstone() {
	q.dead++
	if q.front() == nil {
		return
	}
	if q.dead > 64 && q.dead > q.length()/2 {
		out := q.buf[:0]
		for _, c := range q.buf[q.head:] {
			if c.live() {
				out = append(out, c)
			}
		}
		clear(q.buf[len(out):])
		q.buf = out
		q.head = 0
		q.dead = 0
		q.fit()
	}
}

// dueCount returns how many entries from the front, tombstones included,
// are due at or before at.
func (q *chainQueue) dueCount(at int64) int {
	n := 0
	for _, c := range q.buf[q.head:] {
		if c.due > at {
			break
		}
		n++
	}
	return n
}
