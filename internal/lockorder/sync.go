//go:build !deadlock

package lockorder

import "sync"

// Mutex is sync.Mutex (go-deadlock's in a deadlock build).
type Mutex = sync.Mutex

// RWMutex is sync.RWMutex (go-deadlock's in a deadlock build).
type RWMutex = sync.RWMutex

// Checked reports whether this build checks the order of locks.
const Checked = false
