package script

import (
	"runtime/metrics"
	"time"

	"github.com/dop251/goja"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// checkEvery is how often a watch looks at the clock and the heap.
const checkEvery = 10 * time.Millisecond

// heapMetric is the bytes of the heap's objects, live or not yet swept.
const heapMetric = "/memory/classes/heap/objects:bytes"

// watch interrupts a runtime that runs past its time or grows the heap
// past its memory bound. It uses the wall clock: a script's budget is the
// machine's time, not lapse's clock, which tests move.
type watch struct {
	vm       *goja.Runtime
	start    time.Time
	limit    time.Duration
	base     uint64
	memory   uint64
	mu       lockorder.Mutex
	t        *time.Timer
	stopped  bool
	sample   []metrics.Sample
	budgeted time.Duration // past it, operations are refused
}

// watch starts watching vm.
func (r *Runner) watch(vm *goja.Runtime) *watch {
	w := &watch{vm: vm, start: time.Now(), limit: r.limits.Time, memory: r.limits.Memory,
		sample: []metrics.Sample{{Name: heapMetric}}, budgeted: r.limits.Time * 4 / 5}
	w.base = w.heap()
	w.mu.Lock()
	w.t = time.AfterFunc(checkEvery, w.check)
	w.mu.Unlock()
	return w
}

// heap reads the heap's size.
func (w *watch) heap() uint64 {
	metrics.Read(w.sample)
	if w.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return w.sample[0].Value.Uint64()
}

// check interrupts the runtime when a bound is passed, else looks again
// later.
func (w *watch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	switch {
	case time.Since(w.start) > w.limit:
		w.vm.Interrupt(Timeout)
		return
	case w.heap() > w.base+w.memory:
		w.vm.Interrupt(Memory)
		return
	}
	w.t.Reset(checkEvery)
}

// accepting reports whether the script's budget still takes operations.
func (w *watch) accepting() bool { return time.Since(w.start) < w.budgeted }

// stop ends the watch; no interrupt comes after it returns.
func (w *watch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.t.Stop()
}
