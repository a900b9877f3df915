package httpserver

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// A read the watchdog cut ends at once with a timeout, and so does every
// read after it, until the connection moves to its next read
// (readWithin): then the deadline the watchdog set is lifted, for a cut
// that came as the read it was meant for ended.
func TestWatchdogCutLastsUntilTheNextRead(t *testing.T) {
	srv := newHTTP1Server(nil, nil, nil, nil, time.Second, time.Second)
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	c := &http1Conn{srv: srv, rwc: server}

	c.readWithin(time.Millisecond)
	c.cutIfLate(srv.clock()) // not late yet
	if got := c.readBy.Load(); got == http1Cut {
		t.Fatal("cut before its time")
	}
	c.cutIfLate(srv.clock() + int64(time.Second))
	if got := c.readBy.Load(); got != http1Cut {
		t.Fatalf("readBy %d after a late read, want the cut", got)
	}
	buf := make([]byte, 1)
	for range 2 {
		if _, err := server.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read after the cut: %v, want a timeout", err)
		}
	}

	c.readWithin(0)
	go io.WriteString(client, "x")
	server.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := server.Read(buf); err != nil {
		t.Fatalf("read after readWithin: %v", err)
	}
	c.cutIfLate(srv.clock() + int64(time.Hour)) // no bound: never late
	if got := c.readBy.Load(); got != 0 {
		t.Fatalf("readBy %d with no bound", got)
	}
}
