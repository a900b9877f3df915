//go:build unix

// Package connmem measures what an idle connection costs a server that
// runs in the test's process (issue 25.8): the heap and goroutine stacks
// it adds, and its goroutines, over many connections. It is for tests.
package connmem

import (
	"net"
	"runtime"
	"syscall"
	"testing"
)

// Conns is how many connections a figure is measured over: enough that
// the few kilobytes a test allocates meanwhile vanish in the figure per
// connection.
const Conns = 1000

// MaxBytes is what an idle connection may hold of the server's memory,
// heap and goroutine stacks together.
const MaxBytes = 64 << 10

// goroutineSlack is how far the goroutines per connection may go past
// their bound: a few goroutines come and go that are not the
// connections' (one finishing its work, the runtime's).
const goroutineSlack = 0.05

// Cost opens a first connection with dial (so that what the first of all
// sets up is in the starting figure), then n more, and returns what each
// of the n adds to the process's heap and goroutine stacks, and its
// goroutines. dial returns the client's socket alone, so that the client
// keeps nothing else; its sockets are counted, a few hundred bytes each.
// The connections are closed when tb ends.
func Cost(tb testing.TB, n int, dial func() net.Conn) (bytesPerConn, goroutinesPerConn float64) {
	tb.Helper()
	mustFiles(tb, 2*uint64(n))
	conns := make([]net.Conn, 0, n+1)
	tb.Cleanup(func() {
		for _, nc := range conns {
			nc.Close()
		}
	})
	conns = append(conns, dial())
	before, gBefore := inUse()
	for range n {
		conns = append(conns, dial())
	}
	after, gAfter := inUse()
	return (float64(after) - float64(before)) / float64(n), float64(gAfter-gBefore) / float64(n)
}

// Check fails t unless an idle connection holds at most MaxBytes and runs
// at most maxGoroutines goroutines, and logs the figures.
func Check(t *testing.T, perConn, goroutines float64, maxGoroutines int) {
	t.Helper()
	t.Logf("an idle connection: %.0f bytes of heap and stacks, %.1f goroutines", perConn, goroutines)
	if perConn > MaxBytes {
		t.Errorf("an idle connection holds %.0f bytes of heap and stacks (%.1f goroutines), want at most %d",
			perConn, goroutines, MaxBytes)
	}
	if goroutines > float64(maxGoroutines)+goroutineSlack {
		t.Errorf("an idle connection runs %.1f goroutines, want at most %d", goroutines, maxGoroutines)
	}
}

// Report reports the figures of a benchmark.
func Report(b *testing.B, perConn, goroutines float64) {
	b.ReportMetric(perConn, "bytes/conn")
	b.ReportMetric(goroutines, "goroutines/conn")
}

// inUse is the heap and goroutine stacks in use after two collections,
// and the number of goroutines.
func inUse() (bytes uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse, runtime.NumGoroutine()
}

// mustFiles fails tb unless the process may open n more files, raising
// its soft limit when the hard one allows.
func mustFiles(tb testing.TB, n uint64) {
	tb.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		tb.Fatal(err)
	}
	if rl.Cur >= n+256 {
		return
	}
	rl.Cur = min(rl.Max, n+256)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur < n+256 {
		tb.Fatalf("the process may open %d files (%v), the test needs %d", rl.Cur, err, n+256)
	}
}
