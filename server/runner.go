package server

import (
	"sync"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// runnerGranularity is the shortest sleep of the expiry runner.
const runnerGranularity = time.Millisecond

// runner is the expiry runner: one goroutine that applies what falls due as
// the clock runs (EM-4). It sleeps until the engine's next due time,
// measured on lapse's clock, and wakes early when the engine reports an
// earlier due time or the clock changes. A frozen clock only moves through
// the control API, which applies what it made due itself; the runner then
// waits for a wake.
type runner struct {
	clock  *core.Clock
	engine *core.Engine

	wake chan struct{} // size 1: a pending wake-up
	quit chan struct{}
	done chan struct{}

	mu               sync.Mutex
	started, stopped bool
}

func newRunner(clock *core.Clock) *runner {
	return &runner{
		clock: clock,
		wake:  make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
}

// Wake makes the runner look at the engine and the clock again. It never
// blocks: the engine calls it as its Wake hook and the clock on every change.
func (r *runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// start runs the runner for engine in its own goroutine; after stop it
// does nothing.
func (r *runner) start(engine *core.Engine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.stopped {
		return
	}
	r.started = true
	r.engine = engine
	go r.loop()
}

// stop ends the runner and waits for its goroutine; safe twice and before
// start.
func (r *runner) stop() {
	r.mu.Lock()
	if !r.stopped {
		r.stopped = true
		close(r.quit)
	}
	started := r.started
	r.mu.Unlock()
	if started {
		<-r.done
	}
}

func (r *runner) loop() {
	defer close(r.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		r.engine.Advance(r.clock.Now())
		var due <-chan time.Time
		if next, ok := r.engine.NextDue(); ok && r.clock.Mode() != core.ClockFrozen {
			// The clock may run ahead of the wall (offset), but at its speed:
			// the wait is the distance on the clock.
			d := next.Sub(r.clock.Now())
			if d <= 0 {
				select {
				case <-r.quit:
					return
				default:
					continue
				}
			}
			// Items due microseconds apart (a burst of messages expiring in
			// publish order) are applied a millisecond's worth at a time,
			// rather than with one wake-up each: far within EM-4's 50 ms.
			timer.Reset(max(d, runnerGranularity))
			due = timer.C
		}
		select {
		case <-r.quit:
			return
		case <-r.wake:
		case <-due:
		}
		timer.Stop()
	}
}
