//go:build unix

package rabbitmq_test

import (
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// idleConns is how many connections the idle-connection figures are
// measured over: enough that a few kilobytes the test itself allocates
// meanwhile are lost in the per-connection figure.
const idleConns = 1000

// maxIdleConnBytes is what an idle connection may hold of the server's
// memory, heap and goroutine stacks together (issue 25.8).
const maxIdleConnBytes = 64 << 10

// goroutineSlack is how far the goroutines per connection may go past
// maxIdleConnGoroutines: a few goroutines come and go that are not the
// connections' (one finishing its work, the runtime's).
const goroutineSlack = 0.05

// maxIdleConnGoroutines is how many goroutines an idle connection runs:
// its reader, its writer and its heartbeats; each costs its stack.
const maxIdleConnGoroutines = 3

// memInUse is the heap and goroutine stacks in use after two collections,
// and the number of goroutines.
func memInUse() (bytes uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse, runtime.NumGoroutine()
}

// mustFiles fails tb unless the process may open n more files, raising
// its soft limit when the hard one allows.
func mustFiles(tb testing.TB, n uint64) {
	tb.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		tb.Fatal(err)
	}
	if rl.Cur >= n+256 {
		return
	}
	rl.Cur = min(rl.Max, n+256)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur < n+256 {
		tb.Fatalf("the process may open %d files (%v), the test needs %d", rl.Cur, err, n+256)
	}
}

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

// idleConnCost opens n idle connections (dialIdle) and returns what each
// adds to the server's heap and goroutine stacks, and its goroutines. The
// client's sockets are counted too, a few hundred bytes each.
func idleConnCost(tb testing.TB, n int, confirm bool) (bytesPerConn, goroutinesPerConn float64) {
	tb.Helper()
	mustFiles(tb, 2*uint64(n))
	f := MustServer(tb)
	MustDeclare(tb, f.MustChannel(), "q", nil)
	// A first connection, so that what the first of all sets up (the
	// queue's first message, pools) is in the starting figure.
	warm := f.dialIdle(tb, confirm)
	defer warm.Close()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	before, gBefore := memInUse()
	for range n {
		conns = append(conns, f.dialIdle(tb, confirm))
	}
	after, gAfter := memInUse()
	return (float64(after) - float64(before)) / float64(n), float64(gAfter-gBefore) / float64(n)
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
			perConn, goroutines := idleConnCost(t, idleConns, k.confirm)
			t.Logf("an idle connection: %.0f bytes of heap and stacks, %.1f goroutines", perConn, goroutines)
			if perConn > maxIdleConnBytes {
				t.Errorf("an idle connection holds %.0f bytes of heap and stacks (%.1f goroutines), want at most %d",
					perConn, goroutines, maxIdleConnBytes)
			}
			if goroutines > maxIdleConnGoroutines+goroutineSlack {
				t.Errorf("an idle connection runs %.1f goroutines, want at most %d", goroutines, maxIdleConnGoroutines)
			}
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
				perConn, goroutines = idleConnCost(b, idleConns, k.confirm)
			}
			b.ReportMetric(perConn, "bytes/conn")
			b.ReportMetric(goroutines, "goroutines/conn")
		})
	}
}
