//go:build reliability

package reliability

import (
	"testing"
	"time"
)

// The harness itself: the binary starts with every listener, answers its
// control API, moves its clock, and stops on SIGTERM with exit code 0.
func TestHarness(t *testing.T) {
	l := Start(t, "")
	m := l.Memory()
	if m.Goroutines == 0 || m.HeapInuse == 0 || m.RSS == 0 {
		t.Fatalf("memory figures missing: %+v", m)
	}
	l.Freeze()
	before := l.Now()
	l.Advance(time.Hour)
	if got := l.Now().Sub(before); got != time.Hour {
		t.Errorf("the clock moved %v, want 1h", got)
	}
	t.Logf("at start: %v; listeners %v", m, l.Addrs)
	l.Stop()
}
