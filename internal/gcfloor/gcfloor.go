// Package gcfloor keeps the garbage collector's heap goal at least a floor
// above the live heap, for the lapse binary.
//
// Go's collector starts a cycle when the heap has grown by GOGC percent
// (100) of what the last cycle left live. lapse's live heap under load is
// small (about 20 MB with 5,000 Cosmos DB items) while each request
// allocates tens of kilobytes, so at GOGC 100 it collected ten times a
// second, and each cycle marks the whole live heap: 5-6% of the server's
// CPU in durable Cosmos DB writes at eight workers. A floor of a few tens of
// MiB above the live heap makes those cycles a fraction as many, and costs
// at most the floor in memory; once the live heap is large (a million
// pending messages), GOGC's own headroom is the larger and nothing changes.
//
// Start is for a process that is lapse alone: it sets the process's GC
// percent, so lapsetest, which runs lapse inside a user's tests, never
// calls it. A user who sets GOGC keeps it: Start then does nothing.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Floor is the lapse binary's floor: 32 MiB. Side by side in lapse-bench's
// Cosmos DB scenarios at 1 and 8 workers it took the server's CPU per
// operation down by 2-8% and a round's CPU by 6-8%; 64 MiB did no better
// (docs/benchmarks.md). It is memory that lapse may hold beyond what a GC
// at GOGC 100 would, so the reliability suite's bounds on resident memory
// allow for it.
const Floor = 32 << 20

// liveHeap is the runtime metric of the heap the last cycle found live.
const liveHeap = "/gc/heap/live:bytes"

// Tuner moves the GC percent after every cycle. Stop ends it.
type Tuner struct {
	floor  uint64
	base   int // the GC percent the process had: GOGC's, 100 by default
	sample []metrics.Sample

	mu      sync.Mutex
	stopped bool
	percent int    // the last percent set
	live    uint64 // the live heap of the last cycle
}

// running is set while a Tuner runs: a process has one GC percent, and a
// second tuner would take the first one's percent for the process's.
var running atomic.Bool

// Start keeps the heap goal at least floor bytes above the live heap, from
// the next cycle on, until Stop. It returns nil, and does nothing, when
// GOGC is set in the environment, floor is 0, or a Tuner runs already (a
// test that serves twice in one process).
func Start(floor uint64) *Tuner {
	if floor == 0 || os.Getenv("GOGC") != "" || !running.CompareAndSwap(false, true) {
		return nil
	}
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 {
		running.Store(false)
		return nil // GC off, by debug.SetGCPercent
	}
	t := &Tuner{floor: floor, base: base, percent: base, sample: []metrics.Sample{{Name: liveHeap}}}
	t.arm()
	return t
}

// sentinel is what the tuner's finalizer hangs on: an object of its own
// size class (a finalizer on a tiny allocation may never run), reachable
// from nothing, so that every cycle frees it.
type sentinel struct{ _ [32]byte }

// arm sets a finalizer on a fresh sentinel: it runs after the next cycle,
// tunes, and arms the next.
func (t *Tuner) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if t.tune() {
			t.arm()
		}
	})
}

// tune sets the GC percent for the live heap the last cycle left, and
// reports whether the tuner is still running.
func (t *Tuner) tune() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	live := uint64(0)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	p := Percent(live, t.floor, t.base)
	if live < t.live/2 {
		// The heap shrank (a queue purged). The runtime's scavenger, which
		// gives freed pages back to the system, aims at the heap in use
		// scaled by the new goal over the last: a goal raised now would
		// keep hundreds of MiB resident (a million messages purged: 400
		// MiB kept two minutes after, against 60 MiB at GOGC's). The
		// percent waits for the next cycle, once the pages are back.
		p = t.base
	}
	t.live = live
	if p != t.percent {
		debug.SetGCPercent(p)
		t.percent = p
	}
	return true
}

// Percent is the GC percent that makes the heap goal of a live heap at
// least floor bytes above it, and never less than base.
//
// The runtime's goal is also never below its heap minimum, 4 MiB times the
// percent over 100: for a live heap under 4 MiB, the percent is figured
// for 4 MiB, or a live heap of 1 MiB and a floor of 64 MiB would make a
// goal of 256 MiB.
func Percent(live, floor uint64, base int) int {
	const heapMinimum = 4 << 20
	live = max(live, heapMinimum)
	const most = 1 << 20
	if floor/live >= most/100 {
		return max(most, base)
	}
	return max(int(floor*100/live), base)
}

// Percent is the GC percent the tuner set last.
func (t *Tuner) Percent() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.percent
}

// Stop ends the tuning and gives the process its GC percent back.
func (t *Tuner) Stop() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		debug.SetGCPercent(t.base)
		running.Store(false)
	}
}
