package rabbitmq

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/internal/watchconn"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// A client that stops reading and then breaks the protocol leaves the
// server's connection.close stuck behind the frames it does not read. A
// close of the server then still closes the socket and returns: every
// close arms the backstop that closes it, the server's own close too. A
// forced close of a connection already closing used to arm none, and the
// connection outlived the server.
func TestCloseOfAConnectionThatStoppedReading(t *testing.T) {
	s, _, _ := mustBareServer(t)
	srv, cli := net.Pipe()
	defer cli.Close()
	// The first write above the writer's high water.
	w := watchconn.New(srv, func(b []byte) bool { return len(b) > highWater })
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.ServeConn(w, wire.ProtocolHeader)
	}()
	r := wire.NewReader(cli)
	send := func(ch uint16, m wire.Method) {
		if _, err := cli.Write(wire.AppendMethodFrame(nil, ch, m)); err != nil {
			t.Fatal(err)
		}
	}
	expect := func() {
		for {
			fr, err := r.ReadFrame()
			if err != nil {
				t.Fatal(err)
			}
			if fr.Type == wire.FrameMethod {
				return
			}
		}
	}
	expect() // connection.start
	send(0, &wire.ConnectionStartOk{Mechanism: "PLAIN", Response: "\x00guest\x00guest", Locale: "en_US"})
	expect() // connection.tune
	send(0, &wire.ConnectionTuneOk{ChannelMax: 10, FrameMax: 131072})
	send(0, &wire.ConnectionOpen{VirtualHost: "/"})
	expect() // connection.open-ok
	send(1, &wire.ChannelOpen{})
	expect()
	send(1, &wire.QueueDeclare{Queue: "q"})
	expect()
	body := bytes.Repeat([]byte("x"), 1500<<10) // above the writer's high water
	for range 2 {
		b := wire.AppendMethodFrame(nil, 1, &wire.BasicPublish{RoutingKey: "q"})
		b = wire.AppendContent(b, 1, wire.ClassBasic, (&wire.Properties{}).Append(nil), body, 131072)
		if _, err := cli.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	// From here the client reads nothing: the first message holds the
	// writer in its write, the second fills its buffer.
	send(1, &wire.BasicGet{Queue: "q", NoAck: true})
	<-w.Began()
	send(1, &wire.BasicGet{Queue: "q", NoAck: true})
	// A frame without its end octet: 501 FRAME_ERROR, whose
	// connection.close waits behind both.
	bad := wire.AppendFrame(nil, wire.FrameMethod, 1, []byte{0, 20, 0, 10, 0})
	bad[len(bad)-1] = 0
	if _, err := cli.Write(bad); err != nil {
		t.Fatal(err)
	}
	var c *conn
	s.conns.Range(func(k, _ any) bool { c = k.(*conn); return false })
	for i := 0; ; i++ {
		c.mu.Lock()
		closing := c.closing
		c.mu.Unlock()
		if closing {
			break
		}
		if i == 10000 {
			t.Fatal("the server never began to close the connection")
		}
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("closing the server: %v", err)
	}
	<-served
}
