// Package testdeadline runs a step of a test that must not hang: a step
// that does not return in time ends the test binary with every
// goroutine's stack, so that a deadlock is reported with its cycle
// instead of running into the binary's timeout.
package testdeadline

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// Within runs fn on a goroutine of its own and, unless fn returns within
// d, prints every goroutine's stack and ends the test binary with exit
// status 1. Neither a failed test nor a panic would do: the test's
// cleanups run first, and a deadlock blocks them too (closing a server
// waits for its connections).
func Within(tb testing.TB, d time.Duration, what string, fn func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		fmt.Fprintf(os.Stderr, "--- FAIL: %s: %s did not return within %v; the goroutines:\n%s\n", tb.Name(), what, d, buf)
		os.Exit(1)
	}
}
