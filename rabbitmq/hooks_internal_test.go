package rabbitmq

import (
	"context"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/testdeadline"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// Issue 25.0: the Available hook takes the server's mu; it does not run on
// the goroutine of an engine call, so an engine call made while mu is held
// does not wait for itself. (The Deleted hook, under topoMu, is
// hooks_test.go's.)
func TestAvailableDoesNotRunUnderTheCallersLock(t *testing.T) {
	s, e, clock := mustBareServer(t)
	if _, _, _, err := s.queueDeclare(nil, "/", &wire.QueueDeclare{Queue: "q"}); err != nil {
		t.Fatal(err)
	}
	q := s.findQueue("/", "q")
	testdeadline.Within(t, 10*time.Second, "an enqueue under the server's mu (Available)", func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, _, err := e.Enqueue(clock.Now(), q.key, core.Item{Body: []byte("a")}); err != nil {
			t.Error(err)
		}
	})
	if err := e.WaitHooks(context.Background()); err != nil {
		t.Fatal(err)
	}
}
