package rabbitmq_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	gosync "sync"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// issue 16.2: connections handed to ServeConn while Close runs are either
// refused or closed by it; Close waits for every one it let in, and the race
// detector sees no Add of the server's WaitGroup racing its Wait.
func TestCloseWhileConnectionsArriveServesNoneAfter(t *testing.T) {
	const rounds, perRound = 100, 16
	for range rounds {
		clock := core.NewClock(func() time.Time { return t0 })
		clock.Freeze()
		e := core.NewEngine(core.Config{Store: core.NewMemStore()})
		s := rabbitmq.New(rabbitmq.Config{Engine: e, Now: clock.Now, Version: "test"})
		e.Register(core.RabbitMQ, s.Hooks())
		if err := e.Recover(context.Background(), clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		served := make(chan struct{}, perRound)
		var clients gosync.WaitGroup
		start := make(chan struct{})
		for range perRound {
			srv, cli := net.Pipe()
			clients.Add(1)
			go func() { // a client that reads what it is sent and says nothing
				defer clients.Done()
				io.Copy(io.Discard, cli)
				cli.Close()
			}()
			go func() {
				<-start
				for range rand.IntN(64) {
					runtime.Gosched()
				}
				s.ServeConn(srv, wire.ProtocolHeader)
				served <- struct{}{}
			}()
		}
		close(start)
		for range rand.IntN(64) {
			runtime.Gosched()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.Close(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
		// Every ServeConn returns without the client closing: those that
		// came after Close began were refused, the others were closed.
		deadline := time.After(5 * time.Second)
		for range perRound {
			select {
			case <-served:
			case <-deadline:
				t.Fatal("a connection is still served after Close returned")
			}
		}
		clients.Wait()
	}
}
