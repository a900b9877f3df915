//go:build unix

package rabbitmq_test

import (
	"net"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/internal/connmem"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// maxIdleConnGoroutines is how many goroutines an idle connection runs:
// its reader, its writer and its heartbeats; each costs its stack.
const maxIdleConnGoroutines = 3

// dialIdle opens a connection as amqp091-go does (its client properties,
// the server's frame-max, a heartbeat), opens channel 1 and, if confirm,
// puts it in confirm mode and publishes one message to queue q, which is
// confirmed; it returns the socket alone, so that the client keeps nothing
// more of the heap.
func (f *fixture) dialIdle(tb testing.TB, confirm bool) net.Conn {
	tb.Helper()
	nc, err := net.Dial("tcp", f.ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	c := &rawConn{tb: tb, nc: nc, r: wire.NewReader(nc)}
	if _, err := nc.Write(wire.ProtocolHeader[:]); err != nil {
		tb.Fatal(err)
	}
	c.expect(&wire.ConnectionStart{})
	c.send(0, &wire.ConnectionStartOk{Mechanism: "PLAIN", Response: "\x00guest\x00guest", Locale: "en_US",
		ClientProperties: map[string]any{
			"product": "idle", "version": "1", "platform": "golang",
			"capabilities": map[string]any{"connection.blocked": true, "consumer_cancel_notify": true,
				"basic.nack": true, "publisher_confirms": true, "authentication_failure_close": true},
		}})
	c.expect(&wire.ConnectionTune{})
	c.send(0, &wire.ConnectionTuneOk{ChannelMax: 2047, FrameMax: 131072, Heartbeat: 60})
	c.send(0, &wire.ConnectionOpen{VirtualHost: "/"})
	c.expect(&wire.ConnectionOpenOk{})
	c.send(1, &wire.ChannelOpen{})
	c.expect(&wire.ChannelOpenOk{})
	if confirm {
		c.send(1, &wire.ConfirmSelect{})
		c.expect(&wire.ConfirmSelectOk{})
		b := wire.AppendMethodFrame(nil, 1, &wire.BasicPublish{RoutingKey: "q"})
		b = wire.AppendContent(b, 1, wire.ClassBasic, (&wire.Properties{}).Append(nil), []byte("hello"), 131072)
		if _, err := nc.Write(b); err != nil {
			tb.Fatal(err)
		}
		if ack := c.expect(&wire.BasicAck{}).(*wire.BasicAck); ack.DeliveryTag != 1 {
			tb.Fatalf("basic.ack of %d, want 1", ack.DeliveryTag)
		}
	}
	nc.SetReadDeadline(time.Time{})
	return nc
}

// idleConnCost opens n idle connections (dialIdle) to a new server and
// returns what each costs it (connmem.Cost).
func idleConnCost(tb testing.TB, n int, confirm bool) (bytesPerConn, goroutinesPerConn float64) {
	tb.Helper()
	f := MustServer(tb)
	MustDeclare(tb, f.MustChannel(), "q", nil)
	return connmem.Cost(tb, n, func() net.Conn { return f.dialIdle(tb, confirm) })
}

// idleKinds are the idle connections measured: with a channel just
// opened, and with a channel in confirm mode that published a message.
var idleKinds = []struct {
	name    string
	confirm bool
}{{"Channel", false}, {"ConfirmedPublish", true}}

// issue 25.8: an idle connection (open, with one channel, which may have
// published a message in confirm mode) holds under 64 KB of the server's
// heap and stacks, and runs at most maxIdleConnGoroutines goroutines.
func TestIdleConnectionMemory(t *testing.T) {
	for _, k := range idleKinds {
		t.Run(k.name, func(t *testing.T) {
			perConn, goroutines := idleConnCost(t, connmem.Conns, k.confirm)
			connmem.Check(t, perConn, goroutines, maxIdleConnGoroutines)
		})
	}
}

// BenchmarkIdleConnectionMemory reports what an idle connection holds,
// measured over 1,000 of them per iteration: run it with -benchtime 1x.
func BenchmarkIdleConnectionMemory(b *testing.B) {
	for _, k := range idleKinds {
		b.Run(k.name, func(b *testing.B) {
			var perConn, goroutines float64
			for b.Loop() {
				perConn, goroutines = idleConnCost(b, connmem.Conns, k.confirm)
			}
			connmem.Report(b, perConn, goroutines)
		})
	}
}
