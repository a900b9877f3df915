package servicebus

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/internal/testdeadline"
	"github.com/lapse-emulator/lapse/internal/watchconn"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// A client that reads nothing holds the connection's writer in a write.
// The server's close still returns within its bound: it used to wait for
// that write, up to the writer's deadline of minutes, before it even
// began to wait for its context.
func TestCloseOfAConnectionThatStoppedReading(t *testing.T) {
	s, _, _ := mustBareServer(t)
	srv, cli := net.Pipe()
	defer cli.Close()
	var armed atomic.Bool
	w := watchconn.New(srv, func([]byte) bool { return armed.Load() })
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
	armed.Store(true)
	b, _ = amqp.AppendFrame(nil, amqp.FrameAMQP, 0, &amqp.Begin{IncomingWindow: 100, OutgoingWindow: 100}, nil)
	if _, err := cli.Write(b); err != nil {
		t.Fatal(err)
	}
	<-w.Began()
	testdeadline.Within(t, 15*time.Second, "closing the server behind a writer held by its client", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	<-served
}
