package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// benchWatch is the context of an operation that ends with its parent,
// with the first error given to fail, or when step has not been called
// for benchStall.
type benchWatch struct {
	ctx     context.Context
	cancel  context.CancelCauseFunc
	steps   atomic.Int64
	stopped chan struct{} // closed by stop
	exited  chan struct{} // closed when the watching goroutine returns
	once    sync.Once
}

// newBenchWatch starts watching an operation that waits for what.
func newBenchWatch(parent context.Context, what string) *benchWatch {
	w := &benchWatch{stopped: make(chan struct{}), exited: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancelCause(parent)
	go func() {
		defer close(w.exited)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		seen, idle := int64(-1), time.Duration(0)
		for {
			select {
			case <-w.ctx.Done():
				return
			case <-w.stopped:
				return
			case <-tick.C:
			}
			if cur := w.steps.Load(); cur != seen {
				seen, idle = cur, 0
				continue
			}
			if idle += time.Second; idle >= benchStall {
				w.cancel(fmt.Errorf("no %s for %s after %d", what, benchStall, seen))
				return
			}
		}
	}()
	return w
}

// step records that the operation moved.
func (w *benchWatch) step() { w.steps.Add(1) }

// fail ends the operation with err, unless it ended already.
func (w *benchWatch) fail(err error) { w.cancel(err) }

// err is why the operation ended early, or nil.
func (w *benchWatch) err() error {
	if w.ctx.Err() == nil {
		return nil
	}
	return context.Cause(w.ctx)
}

// stop ends the watch and its context.
func (w *benchWatch) stop() {
	w.once.Do(func() { close(w.stopped) })
	<-w.exited
	w.cancel(nil)
}
