//go:build unix

package servicebus_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/internal/connmem"
	"github.com/lapse-emulator/lapse/servicebus"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

// maxIdleConnGoroutines is how many goroutines an idle connection runs:
// its reader and its writer; each costs its stack.
const maxIdleConnGoroutines = 2

// dialIdle opens an AMQP connection as the SDKs do (SASL PLAIN here, an
// idle time-out of a minute, one session and one sender link to queue q),
// sends one message unsettled, waits for its disposition and returns the
// socket alone, so that the client keeps nothing more of the heap.
func (f *fixture) dialIdle(tb testing.TB) net.Conn {
	tb.Helper()
	nc, err := net.Dial("tcp", f.ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	r := &rawConn{tb: tb, nc: nc, br: bufio.NewReaderSize(nc, 512)}
	r.write(codec.HeaderSASL[:])
	r.readHeader(codec.HeaderSASL)
	rawNext[*codec.SASLMechanisms](r)
	k := servicebus.DefaultKey
	r.sendType(codec.FrameSASL, &codec.SASLInit{Mechanism: "PLAIN", InitialResponse: []byte("\x00" + k.Name + "\x00" + k.Value)}, nil)
	if o := rawNext[*codec.SASLOutcome](r); o.Code != codec.SASLCodeOK {
		tb.Fatalf("SASL PLAIN: outcome %d", o.Code)
	}
	r.write(codec.HeaderAMQP[:])
	r.readHeader(codec.HeaderAMQP)
	r.send(&codec.Open{ContainerID: "idle", Hostname: f.ln.Addr().String(), MaxFrameSize: 65536, IdleTimeOut: 60000}, nil)
	rawNext[*codec.Open](r)
	r.send(&codec.Begin{IncomingWindow: 5000, OutgoingWindow: 5000}, nil)
	rawNext[*codec.Begin](r)
	r.send(&codec.Attach{Name: "idle-sender", Handle: 0, Role: codec.RoleSender, SndSettleMode: ptrTo(codec.SndMixed),
		Source: &codec.Source{Address: "idle"}, Target: &codec.Target{Address: "q"}, InitialDeliveryCount: ptrTo(uint32(0))}, nil)
	rawNext[*codec.Attach](r)
	rawNext[*codec.Flow](r)
	msg, err := codec.AppendMessage(nil, &codec.Message{Data: [][]byte{[]byte("hello")}})
	if err != nil {
		tb.Fatal(err)
	}
	r.send(&codec.Transfer{Handle: 0, DeliveryID: ptrTo(uint32(0)), DeliveryTag: []byte("0"), MessageFormat: ptrTo(uint32(0)),
		Settled: ptrTo(false)}, msg)
	if d := rawNext[*codec.Disposition](r); d.First != 0 {
		tb.Fatalf("disposition of delivery %d, want 0", d.First)
	}
	nc.SetDeadline(time.Time{})
	return nc
}

// idleConnCost opens n idle connections (dialIdle) to a new server and
// returns what each costs it (connmem.Cost).
func idleConnCost(tb testing.TB, n int) (bytesPerConn, goroutinesPerConn float64) {
	tb.Helper()
	f := MustServer(tb)
	f.MustQueue("q", nil)
	perConn, goroutines := connmem.Cost(tb, n, func() net.Conn { return f.dialIdle(tb) })
	if got := f.s.Connections(); got != n+1 {
		tb.Fatalf("%d connections open, want %d", got, n+1)
	}
	return perConn, goroutines
}

// issue 25.8: an idle connection (a session, a sender link, one message
// sent unsettled and acknowledged) holds under 64 KB of the server's heap
// and stacks, and runs at most maxIdleConnGoroutines goroutines.
func TestIdleConnectionMemory(t *testing.T) {
	perConn, goroutines := idleConnCost(t, connmem.Conns)
	connmem.Check(t, perConn, goroutines, maxIdleConnGoroutines)
}

// BenchmarkIdleConnectionMemory reports what an idle connection holds,
// measured over 1,000 of them per iteration: run it with -benchtime 1x.
func BenchmarkIdleConnectionMemory(b *testing.B) {
	var perConn, goroutines float64
	for b.Loop() {
		perConn, goroutines = idleConnCost(b, connmem.Conns)
	}
	connmem.Report(b, perConn, goroutines)
}
