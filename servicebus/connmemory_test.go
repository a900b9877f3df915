//go:build unix

package servicebus_test

import (
	"bufio"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/servicebus"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
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
// its reader and its writer; each costs its stack.
const maxIdleConnGoroutines = 2

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

// idleConnCost opens n idle connections (dialIdle) and returns what each
// adds to the server's heap and goroutine stacks, and its goroutines. The
// client's sockets are counted too, a few hundred bytes each.
func idleConnCost(tb testing.TB, n int) (bytesPerConn, goroutinesPerConn float64) {
	tb.Helper()
	mustFiles(tb, 2*uint64(n))
	f := MustServer(tb)
	f.MustQueue("q", nil)
	// A first connection, so that what the first of all sets up (the
	// queue's first message, pools) is in the starting figure.
	warm := f.dialIdle(tb)
	defer warm.Close()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	before, gBefore := memInUse()
	for range n {
		conns = append(conns, f.dialIdle(tb))
	}
	if got := f.s.Connections(); got != n+1 {
		tb.Fatalf("%d connections open, want %d", got, n+1)
	}
	after, gAfter := memInUse()
	return (float64(after) - float64(before)) / float64(n), float64(gAfter-gBefore) / float64(n)
}

// issue 25.8: an idle connection (a session, a sender link, one message
// sent unsettled and acknowledged) holds under 64 KB of the server's heap
// and stacks, and runs at most maxIdleConnGoroutines goroutines.
func TestIdleConnectionMemory(t *testing.T) {
	perConn, goroutines := idleConnCost(t, idleConns)
	t.Logf("an idle connection: %.0f bytes of heap and stacks, %.1f goroutines", perConn, goroutines)
	if perConn > maxIdleConnBytes {
		t.Errorf("an idle connection holds %.0f bytes of heap and stacks (%.1f goroutines), want at most %d",
			perConn, goroutines, maxIdleConnBytes)
	}
	if goroutines > maxIdleConnGoroutines+goroutineSlack {
		t.Errorf("an idle connection runs %.1f goroutines, want at most %d", goroutines, maxIdleConnGoroutines)
	}
}

// BenchmarkIdleConnectionMemory reports what an idle connection holds,
// measured over 1,000 of them per iteration: run it with -benchtime 1x.
func BenchmarkIdleConnectionMemory(b *testing.B) {
	var perConn, goroutines float64
	for b.Loop() {
		perConn, goroutines = idleConnCost(b, idleConns)
	}
	b.ReportMetric(perConn, "bytes/conn")
	b.ReportMetric(goroutines, "goroutines/conn")
}
