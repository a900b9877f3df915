package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentKeepsTheGoalAFloorAboveTheLiveHeap(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		base, want  int
	}{
		{live: 16 * mib, floor: 32 * mib, base: 100, want: 200},    // goal 48 MiB
		{live: 20 * mib, floor: 32 * mib, base: 100, want: 160},    // goal 52 MiB
		{live: 64 * mib, floor: 32 * mib, base: 100, want: 100},    // GOGC's own headroom is larger
		{live: 1 * mib, floor: 32 * mib, base: 100, want: 800},     // figured for the 4 MiB minimum: goal 36 MiB, not 33
		{live: 0, floor: 32 * mib, base: 100, want: 800},           // before the first cycle
		{live: 16 * mib, floor: 32 * mib, base: 300, want: 300},    // never below the process's percent
		{live: 16 * mib, floor: 1 << 62, base: 100, want: 1 << 20}, // bounded
	} {
		if got := Percent(c.live, c.floor, c.base); got != c.want {
			t.Errorf("Percent(live %d MiB, floor %d MiB, base %d) = %d, want %d", c.live/mib, c.floor/mib, c.base, got, c.want)
		}
		if p := Percent(c.live, c.floor, c.base); p > c.base && p < 1<<20 {
			// The goal the runtime figures from p, for the live heap or its
			// minimum, is at least the floor above the live heap, and not a
			// percent point more than it takes.
			live := max(c.live, 4*mib)
			if goal := live + live*uint64(p)/100; goal < live+c.floor-live/100 || goal > live+c.floor+live/100 {
				t.Errorf("Percent(live %d, floor %d) = %d: goal %d, want about %d", c.live, c.floor, p, goal, live+c.floor)
			}
		}
	}
}

// TestStartTunesAfterACycleAndStopRestores runs the tuner in this process:
// after a collection its finalizer sets the percent the live heap needs,
// and Stop gives the process its percent back.
func TestStartTunesAfterACycleAndStopRestores(t *testing.T) {
	t.Setenv("GOGC", "") // Start reads it; an unset and an empty GOGC are alike to it
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	const floor = 256 << 20 // far above this test's live heap: the percent must rise
	tu := Start(floor)
	if tu == nil {
		t.Fatal("Start returned nil with GOGC unset")
	}
	if second := Start(floor); second != nil {
		second.Stop()
		t.Error("a second Start while one runs returned a Tuner")
	}
	deadline := time.Now().Add(10 * time.Second)
	for tu.Percent() == 100 {
		if time.Now().After(deadline) {
			t.Fatal("the percent is still 100 ten seconds after the first collection: the tuner's finalizer did not run")
		}
		runtime.GC() // the finalizer runs after a cycle, on the runtime's finalizer goroutine
		time.Sleep(time.Millisecond)
	}
	if p := tu.Percent(); p < 800 {
		t.Errorf("percent %d for a floor of 256 MiB, want at least 800 (a live heap under 32 MiB)", p)
	}
	if got := runtimePercent(); got != tu.Percent() {
		t.Errorf("the runtime's percent is %d, the tuner's %d", got, tu.Percent())
	}

	tu.Stop()
	if got := runtimePercent(); got != 100 {
		t.Errorf("after Stop the percent is %d, want the process's 100 back", got)
	}
	runtime.GC()
	runtime.GC()
	if got := runtimePercent(); got != 100 {
		t.Errorf("a cycle after Stop set the percent to %d", got)
	}
}

// runtimePercent reads the process's GC percent without setting it, as
// debug.SetGCPercent would.
func runtimePercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func TestStartLeavesAPercentTheUserSet(t *testing.T) {
	t.Setenv("GOGC", "150")
	if tu := Start(64 << 20); tu != nil {
		tu.Stop()
		t.Error("Start tuned the GC with GOGC set")
	}
	t.Setenv("GOGC", "")
	if tu := Start(0); tu != nil {
		tu.Stop()
		t.Error("Start tuned the GC with a floor of 0")
	}
	var tu *Tuner
	tu.Stop() // a nil Tuner stops as a no-op, so that callers may defer it
}
