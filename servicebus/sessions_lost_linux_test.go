package servicebus_test

import (
	"context"
	"net"
	"testing"
	"time"

	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
	"golang.org/x/sys/unix"
)

// SS-3: when the hooks of the clock move that lost a session have run
// (the control API's clock calls wait for them), the detach of the link
// that held it is in the client's socket already, not on its way: a
// client that moved the clock and then settles a message of the session
// must find the link gone, else its disposition crosses the detach and the
// Java SDK reports a closed link instead of the lost session lock. The
// check reads nothing but what has arrived (FIONREAD), so it cannot pass by
// waiting.
func TestSS3_ALostSessionsDetachIsWrittenBeforeTheHooksReturn(t *testing.T) {
	f, r := MustSessionHolder(t)

	f.advance(90 * time.Second) // past the session's one-minute lock
	if err := f.e.WaitHooks(context.Background()); err != nil {
		t.Fatal(err)
	}
	for {
		if r.br.Buffered() == 0 && arrived(t, r.nc) == 0 {
			t.Fatal("the hooks have run and the detach of the lost session has not been written")
		}
		fr := r.next()
		d, ok := fr.Body.(*codec.Detach)
		if !ok {
			continue // a flow
		}
		if d.Handle != 2 || !d.Closed || d.Error == nil || d.Error.Condition != "com.microsoft:session-lock-lost" {
			t.Fatalf("detach %+v, want handle 2 closed with com.microsoft:session-lock-lost", d)
		}
		return
	}
}

// arrived is how many octets the socket has received that nothing has
// read yet.
func arrived(tb testing.TB, nc net.Conn) int {
	tb.Helper()
	sc, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		tb.Fatal(err)
	}
	var n int
	var ioErr error
	if err := sc.Control(func(fd uintptr) { n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		tb.Fatal(err)
	}
	if ioErr != nil {
		tb.Fatal(ioErr)
	}
	return n
}
