//go:build deadlock

package lockorder

import (
	"fmt"
	"os"

	deadlock "github.com/sasha-s/go-deadlock"
)

// Mutex is go-deadlock's Mutex (sync.Mutex in other builds).
type Mutex = deadlock.Mutex

// RWMutex is go-deadlock's RWMutex (sync.RWMutex in other builds).
type RWMutex = deadlock.RWMutex

// Checked reports whether this build checks the order of locks.
const Checked = true

func init() {
	deadlock.Opts.DeadlockTimeout = Timeout
	deadlock.Opts.OnPotentialDeadlock = func() {
		fmt.Fprintln(os.Stderr, "lockorder: a potential deadlock (above); ending")
		os.Exit(2)
	}
}
