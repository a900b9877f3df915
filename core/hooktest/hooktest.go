// Package hooktest lets a test reach the moment between an engine call
// and a hook it queued: it holds a protocol's Deleted hook back until the
// test lets it run.
package hooktest

import (
	"sync"
	"testing"

	"github.com/lapse-emulator/lapse/core"
)

// Gate holds back the Deleted hooks of the hooks it wrapped.
type Gate struct {
	release chan struct{}
	once    sync.Once
}

// HoldDeleted returns a closed gate, opened at the end of the test at the
// latest, so that the lane's goroutine ends.
func HoldDeleted(tb testing.TB) *Gate {
	g := &Gate{release: make(chan struct{})}
	tb.Cleanup(g.Open)
	return g
}

// Wrap returns h with a Deleted hook that waits for the gate to open
// before it runs h's.
func (g *Gate) Wrap(h core.ProtocolHooks) core.ProtocolHooks {
	deleted := h.Deleted
	h.Deleted = func(en core.Entity) {
		<-g.release
		if deleted != nil {
			deleted(en)
		}
	}
	return h
}

// Open lets the held hooks run, and those to come; it may be called more
// than once.
func (g *Gate) Open() { g.once.Do(func() { close(g.release) }) }
