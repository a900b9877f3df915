package server

import (
	"io"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// failingListener fails its first Accepts with EMFILE, as a process out of
// files does, then accepts.
type failingListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// issue 16 (the standing test's 1,000 connections): the AMQP port whose
// Accept fails because lapse is out of files accepts again once it is not,
// where it used to stop accepting for good: a connection that comes after
// three failed accepts gets its protocol header answered.
func TestAMQPListenerAcceptsAgainAfterAnAcceptFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: ln}
	fl.fails.Store(3)
	l := newAMQPListener(fl, nil, false, nil, nil, nil, slog.New(slog.NewTextHandler(t.Output(), nil)))
	defer func() {
		// Its Close closes the front-ends too, which this test has not.
		close(l.stop)
		ln.Close()
		l.wg.Wait()
	}()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("GARBAGE!")); err != nil {
		t.Fatal(err)
	}
	var h [8]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		t.Fatalf("no protocol header back after three failed accepts: %v", err)
	}
	if string(h[:4]) != "AMQP" {
		t.Errorf("answered %q, want the AMQP protocol header", h)
	}
}
