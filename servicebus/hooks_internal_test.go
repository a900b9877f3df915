package servicebus

import (
	"context"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/testdeadline"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Issue 25.0: each hook the front-end handles under a lock of its own
// (Available under mu, SessionAvailable and SessionLost under a node's
// mu) is not run on the goroutine of an engine call, so an engine call
// made while that lock is held does not wait for itself. Each case holds
// the lock across an engine call whose hook takes it.
func TestHooksDoNotRunUnderTheCallersLock(t *testing.T) {
	s, e, clock := mustBareServer(t)
	if _, err := s.createQueue("plain", atom.DefaultQueue()); err != nil {
		t.Fatal(err)
	}
	sp := atom.DefaultQueue()
	sp.RequiresSession = true
	sq, err := s.createQueue("sessions", sp)
	if err != nil {
		t.Fatal(err)
	}
	plain, sessions := key("plain"), key("sessions")

	testdeadline.Within(t, 10*time.Second, "an enqueue under the server's mu (Available)", func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, _, err := e.Enqueue(clock.Now(), plain, core.Item{Body: []byte("a")}); err != nil {
			t.Error(err)
		}
	})
	testdeadline.Within(t, 10*time.Second, "an enqueue under the node's mu (SessionAvailable)", func() {
		sq.main.mu.Lock()
		defer sq.main.mu.Unlock()
		if _, _, err := e.Enqueue(clock.Now(), sessions, core.Item{Body: []byte("a"), Group: "g"}); err != nil {
			t.Error(err)
		}
	})
	if _, err := e.AcceptSession(clock.Now(), sessions, "g", "holder", clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := clock.Advance(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	testdeadline.Within(t, 10*time.Second, "an engine call that finds a session's lock run out, under the node's mu (SessionLost)", func() {
		sq.main.mu.Lock()
		defer sq.main.mu.Unlock()
		if _, _, err := e.Counts(clock.Now(), plain); err != nil {
			t.Error(err)
		}
	})
	if err := e.WaitHooks(context.Background()); err != nil {
		t.Fatal(err)
	}
}
