package core

// timerKind says what a timer does when it fires.
type timerKind uint8

const (
	timerNone     timerKind = iota
	timerExpire             // an active item's expiry
	timerLock               // a locked item's lock runs out
	timerSchedule           // a scheduled item becomes active
	timerIdle               // an entity's idle deadline
	timerChain              // the first due time of an entity's expiry chain
	timerSession            // a session's lock runs out (Engine.sessionTimers)
)

// timer is one due time in the scheduler. Items and entities embed one each:
// an item waits for at most one thing at a time.
type timer struct {
	at   int64 // Unix nanoseconds
	idx  int   // position in the heap, -1 when not in it
	kind timerKind
	it   *item   // for item timers
	ent  *entity // for idle and chain timers
}

// heapEntry keeps the due time, and the item's sequence number that breaks
// ties, next to the pointer so that comparisons do not touch the timer
// itself. Timers due at the same instant fire in sequence order: two
// messages scheduled for the same time are enqueued, and handed to a
// waiting receiver, in the order they were sent (SB-4).
type heapEntry struct {
	at  int64
	seq uint64
	t   *timer
}

// before says whether a fires before b.
func (a heapEntry) before(b heapEntry) bool {
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

// entryOf is t's heap entry at time at.
func entryOf(t *timer, at int64) heapEntry {
	e := heapEntry{at: at, t: t}
	if t.it != nil {
		e.seq = t.it.Seq
	}
	return e
}

// timerHeap is a 4-ary min-heap of timers by due time: O(log n) push, pop,
// remove and fix, with fewer cache misses than a binary heap.
type timerHeap []heapEntry

func (h timerHeap) min() (*timer, bool) {
	if len(h) == 0 {
		return nil, false
	}
	return h[0].t, true
}

func (h *timerHeap) push(t *timer) {
	t.idx = len(*h)
	*h = append(*h, entryOf(t, t.at))
	h.up(t.idx)
}

// remove takes t out of the heap if it is in it.
func (h *timerHeap) remove(t *timer) {
	i := t.idx
	if i < 0 || i >= len(*h) || (*h)[i].t != t {
		return
	}
	last := len(*h) - 1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = heapEntry{}
	*h = (*h)[:last]
	t.idx = -1
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
	// A heap that held a burst gives its room back as it drains
	// (issue 16.5); entries keep their indexes.
	if tooRoomy(len(*h), cap(*h)) {
		*h = refit(*h, 0)
	}
}

// set puts t in the heap at time at, moving it if it is there already.
func (h *timerHeap) set(t *timer, at int64) {
	t.at = at
	if t.idx >= 0 && t.idx < len(*h) && (*h)[t.idx].t == t {
		(*h)[t.idx] = entryOf(t, at)
		if !h.down(t.idx) {
			h.up(t.idx)
		}
		return
	}
	h.push(t)
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].t.idx = i
	h[j].t.idx = j
}

func (h timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 4
		if !h[i].before(h[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down moves entry i towards the leaves and reports whether it moved.
func (h timerHeap) down(i int) bool {
	start := i
	n := len(h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if h[k].before(h[m]) {
				m = k
			}
		}
		if !h[m].before(h[i]) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}
