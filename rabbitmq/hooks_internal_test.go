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
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := core.NewClock(func() time.Time { return t0 })
	clock.Freeze()
	e := core.NewEngine(core.Config{Store: core.NewMemStore()})
	s := New(Config{Engine: e, Now: clock.Now, Version: "test"})
	e.Register(core.RabbitMQ, s.Hooks())
	if err := e.Recover(context.Background(), clock.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
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
