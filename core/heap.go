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

// heapEntry keeps the due time next to the pointer so that comparisons do
// not touch the timer itself.
type heapEntry struct {
	at int64
	t  *timer
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
	*h = append(*h, heapEntry{at: t.at, t: t})
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
}

// set puts t in the heap at time at, moving it if it is there already.
func (h *timerHeap) set(t *timer, at int64) {
	t.at = at
	if t.idx >= 0 && t.idx < len(*h) && (*h)[t.idx].t == t {
		(*h)[t.idx].at = at
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
		if h[p].at <= h[i].at {
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
			if h[k].at < h[m].at {
				m = k
			}
		}
		if h[i].at <= h[m].at {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}
