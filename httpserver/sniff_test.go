package httpserver

import (
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

// issue 16 (the standing test's 1,000 connections): a port whose Accept
// fails because lapse is out of files accepts again once it is not, where
// it used to close for good.
func TestSniffListenerAcceptsAgainAfterAnAcceptFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: ln}
	fl.fails.Store(3)
	l := newSniffListener(fl, nil)
	defer l.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\n")); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		sc, err := l.Accept()
		if err == nil {
			sc.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("Accept after three failed accepts: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Accept returned nothing within 10 s")
	}
}

// The waits between failed Accepts start at 5 ms, double up to 1 s, and
// start over after an Accept that succeeded.
func TestAcceptRetryWaits(t *testing.T) {
	var r AcceptRetry
	var got []time.Duration
	for range 10 {
		got = append(got, r.Failed())
	}
	r.Succeeded()
	got = append(got, r.Failed())
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 5}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("waits %v, want %v ms", got, want)
		}
	}
}
