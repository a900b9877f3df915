// Package lockorder gives lapse's servers their mutexes: sync's in every
// build, and those of github.com/sasha-s/go-deadlock in a build with the
// tag "deadlock", which the server packages' tests run with in CI. There a
// goroutine that takes a lock it already holds, two locks taken in both
// orders, or a lock waited for longer than Timeout is reported with the
// stacks involved and ends the test binary, so that the next lock cycle
// is reported instead of hanging (docs/architecture.md, "Locks").
//
// Use Mutex and RWMutex for every lock of core and the front-ends that is
// held across a call of another package or of a hook.
package lockorder

import "time"

// Timeout is how long a lock may be waited for in a deadlock build before
// the wait is reported as a deadlock.
const Timeout = 30 * time.Second
