package rabbitmq

import (
	"context"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// mustBareServer returns a started server on a new engine and store, its
// clock frozen, with no listener: for the tests of package rabbitmq that
// call the front-end's own functions or serve a connection of their own.
func mustBareServer(tb testing.TB) (*Server, *core.Engine, *core.Clock) {
	tb.Helper()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := core.NewClock(func() time.Time { return t0 })
	clock.Freeze()
	e := core.NewEngine(core.Config{Store: core.NewMemStore()})
	s := New(Config{Engine: e, Now: clock.Now, Version: "test"})
	e.Register(core.RabbitMQ, s.Hooks())
	if err := e.Recover(context.Background(), clock.Now()); err != nil {
		tb.Fatal(err)
	}
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	return s, e, clock
}
