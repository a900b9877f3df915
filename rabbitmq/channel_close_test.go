package rabbitmq_test

import (
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// nextOn reads the next non-heartbeat method and the channel it came on.
func (c *rawConn) nextOn() (uint16, wire.Method) {
	c.tb.Helper()
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		f, err := c.r.ReadFrame()
		if err != nil {
			c.tb.Fatal(err)
		}
		if f.Type == wire.FrameHeartbeat {
			continue
		}
		m, err := wire.ReadMethod(f.Payload)
		if err != nil {
			c.tb.Fatal(err)
		}
		return f.Channel, m
	}
}

// expectOn reads the next method and fails unless it is like like, on
// channel ch.
func (c *rawConn) expectOn(ch uint16, like wire.Method) wire.Method {
	c.tb.Helper()
	got, m := c.nextOn()
	wc, wm := like.ClassMethod()
	if gc, gm := m.ClassMethod(); gc != wc || gm != wm || got != ch {
		c.tb.Fatalf("got %s on channel %d, want %s on channel %d (%+v)", wire.MethodName(gc, gm), got,
			wire.MethodName(wc, wm), ch, m)
	}
	return m
}

// issue 13.6: a client's channel.close that crosses the server's (here a
// publish to a missing exchange followed at once by the client's close) is
// answered with close-ok; the channel then ignores the client's other
// methods until the client's close-ok, and the connection and its other
// channels stay open, as in RabbitMQ.
func TestCrossingChannelCloseKeepsConnection(t *testing.T) {
	f := MustServer(t)
	c := MustRawOpen(t, f, 0)
	for _, id := range []uint16{1, 2} {
		c.send(id, &wire.ChannelOpen{})
		c.expectOn(id, &wire.ChannelOpenOk{})
	}
	// One write, so the server reads the client's close after it sent its own.
	b := wire.AppendMethodFrame(nil, 1, &wire.BasicPublish{Exchange: "missing", RoutingKey: "k"})
	b = wire.AppendContent(b, 1, wire.ClassBasic, (&wire.Properties{}).Append(nil), []byte("m"), 0)
	b = wire.AppendMethodFrame(b, 1, &wire.ChannelClose{ReplyCode: 200, ReplyText: "bye"})
	b = wire.AppendMethodFrame(b, 1, &wire.QueueDeclare{Queue: "ignored"})
	if _, err := c.nc.Write(b); err != nil {
		t.Fatal(err)
	}
	cl := c.expectOn(1, &wire.ChannelClose{}).(*wire.ChannelClose)
	if cl.ReplyCode != 404 || cl.ReplyText != "NOT_FOUND - no exchange 'missing' in vhost '/'" {
		t.Fatalf("channel closed with %d %q", cl.ReplyCode, cl.ReplyText)
	}
	c.expectOn(1, &wire.ChannelCloseOk{})
	// Still closing: a method before our close-ok is dropped, not answered.
	c.send(1, &wire.QueueDeclare{Queue: "ignored too"})
	c.send(1, &wire.ChannelCloseOk{})
	// The other channel and the connection live on.
	c.send(2, &wire.QueueDeclare{Queue: "kept"})
	c.expectOn(2, &wire.QueueDeclareOk{})
	// The number can be opened again, and what came before close-ok was
	// ignored: neither queue was declared.
	c.send(1, &wire.ChannelOpen{})
	c.expectOn(1, &wire.ChannelOpenOk{})
	for _, q := range []string{"ignored", "ignored too"} {
		c.send(1, &wire.QueueDeclare{Queue: q, Passive: true})
		if cl := c.expectOn(1, &wire.ChannelClose{}).(*wire.ChannelClose); cl.ReplyCode != 404 {
			t.Fatalf("passive declare of %q: %d %q, want 404", q, cl.ReplyCode, cl.ReplyText)
		}
		c.send(1, &wire.ChannelCloseOk{})
		c.send(1, &wire.ChannelOpen{})
		c.expectOn(1, &wire.ChannelOpenOk{})
	}
}

// The other order of issue 13.6's race: the client answers the server's
// channel.close with close-ok and sends its own close after it. The channel
// is gone by then, so the close is a method on a channel never opened: 504,
// naming channel.close (20, 40), and the connection closes, as RabbitMQ 3.10
// does (difftest's CloseAfterCloseOkIsAChannelError). amqp091-go's
// Channel.Close right after a failed publish can send this order, so no
// test here asserts that such a program always keeps its connection.
func TestCloseAfterCloseOkIsAChannelError(t *testing.T) {
	f := MustServer(t)
	c := MustRawOpen(t, f, 0)
	c.send(1, &wire.ChannelOpen{})
	c.expectOn(1, &wire.ChannelOpenOk{})
	b := wire.AppendMethodFrame(nil, 1, &wire.BasicPublish{Exchange: "missing", RoutingKey: "k"})
	b = wire.AppendContent(b, 1, wire.ClassBasic, (&wire.Properties{}).Append(nil), []byte("m"), 0)
	if _, err := c.nc.Write(b); err != nil {
		t.Fatal(err)
	}
	c.expectOn(1, &wire.ChannelClose{})
	c.send(1, &wire.ChannelCloseOk{})
	c.send(1, &wire.ChannelClose{ReplyCode: 200, ReplyText: "bye"})
	cl := c.expectOn(0, &wire.ConnectionClose{}).(*wire.ConnectionClose)
	if cl.ReplyCode != 504 || cl.ReplyText != "CHANNEL_ERROR - expected 'channel.open'" || cl.ClassID != 20 || cl.MethodID != 40 {
		t.Fatalf("connection closed with %d %q (%d, %d)", cl.ReplyCode, cl.ReplyText, cl.ClassID, cl.MethodID)
	}
}
