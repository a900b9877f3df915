package servicebus

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// armedWrite is a connection that closes writing when a write begins
// after armed is set.
type armedWrite struct {
	net.Conn
	armed   atomic.Bool
	began   atomic.Bool
	writing chan struct{}
}

func (w *armedWrite) Write(b []byte) (int, error) {
	if w.armed.Load() && w.began.CompareAndSwap(false, true) {
		close(w.writing)
	}
	return w.Conn.Write(b)
}

// A client that reads nothing holds the connection's writer in a write.
// The server's close still returns within its bound: it used to wait for
// that write, up to the writer's deadline of minutes, before it even
// began to wait for its context.
func TestCloseOfAConnectionThatStoppedReading(t *testing.T) {
	clock := core.NewClock(time.Now)
	e := core.NewEngine(core.Config{Store: core.NewMemStore()})
	s := New(Config{Engine: e, Now: clock.Now, Version: "test"})
	e.Register(core.ServiceBus, s.Hooks())
	if err := e.Recover(context.Background(), clock.Now()); err != nil {
		t.Fatal(err)
	}
	srv, cli := net.Pipe()
	defer cli.Close()
	w := &armedWrite{Conn: srv, writing: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.ServeConn(w, amqp.HeaderAMQP)
	}()
	var h [8]byte
	if _, err := io.ReadFull(cli, h[:]); err != nil {
		t.Fatal(err)
	}
	b, _ := amqp.AppendFrame(nil, amqp.FrameAMQP, 0, &amqp.Open{ContainerID: "c"}, nil)
	if _, err := cli.Write(b); err != nil {
		t.Fatal(err)
	}
	if _, _, err := amqp.ReadFrame(cli, nil, 1<<20); err != nil { // open
		t.Fatal(err)
	}
	// From here the client reads nothing: the answer to its begin holds
	// the writer.
	w.armed.Store(true)
	b, _ = amqp.AppendFrame(nil, amqp.FrameAMQP, 0, &amqp.Begin{IncomingWindow: 100, OutgoingWindow: 100}, nil)
	if _, err := cli.Write(b); err != nil {
		t.Fatal(err)
	}
	<-w.writing
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		closed <- s.Close(ctx)
	}()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("closing the server: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("closing the server took more than its context's 10 s")
	}
	<-served
}
