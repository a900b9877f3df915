package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// issue 16.9: on every HTTP port (control, RabbitMQ management, Service
// Bus administration, Cosmos DB) a request body sent a byte at a time gets
// the connection closed once Config.HTTPBodyTimeout has passed.
func TestSlowBodyIsCutOnEveryHTTPPort(t *testing.T) {
	const limit = 300 * time.Millisecond
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags(serveArgs(filepath.Join(t.TempDir(), "data")), noEnv); err != nil {
		t.Fatal(err)
	}
	m.Config.HTTPBodyTimeout = limit
	m.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Cleanup, not defer: the parallel subtests run after this function.
	t.Cleanup(func() { m.Close(context.Background()) })
	for _, tc := range []struct {
		listener string
		request  string
	}{
		{"control", "POST /api/clock/advance HTTP/1.1\r\nContent-Type: application/json\r\n"},
		{"rabbitmqManagement", "PUT /api/queues/%2F/slow HTTP/1.1\r\nAuthorization: Basic Z3Vlc3Q6Z3Vlc3Q=\r\nContent-Type: application/json\r\n"},
		{"servicebusAdmin", "PUT /slow HTTP/1.1\r\nContent-Type: application/atom+xml\r\n"},
		{"cosmos", "POST /dbs HTTP/1.1\r\nContent-Type: application/json\r\n"},
	} {
		t.Run(tc.listener, func(t *testing.T) {
			t.Parallel()
			addr := dialable(m.Addrs()[tc.listener].String())
			took, sent, err := sendSlowBody(addr, tc.request+"Host: localhost\r\n")
			if err != nil {
				t.Fatal(err)
			}
			if took < limit {
				t.Errorf("closed after %v, before the body timeout %v", took, limit)
			}
			t.Logf("closed after %v, %d body bytes sent", took, sent)
		})
	}
}

// sendSlowBody sends the request line and headers head, announcing a body
// of 1,000 bytes, then the body one byte every 20 ms (20 s in all), and
// waits (at most 10 s) for the server to close the connection. It returns
// how long that took from the first byte and how many body bytes were
// sent.
func sendSlowBody(addr, head string) (time.Duration, int64, error) {
	const size = 1000
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	start := time.Now()
	if _, err := fmt.Fprintf(c, "%sContent-Length: %d\r\n\r\n", head, size); err != nil {
		return 0, 0, err
	}
	var sent atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range size {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := c.Write([]byte{'{'}); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	defer func() { close(stop); <-done }()
	c.SetReadDeadline(start.Add(10 * time.Second))
	_, err = io.Copy(io.Discard, c)
	took := time.Since(start)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return took, sent.Load(), fmt.Errorf("connection still open after %v, %d of %d body bytes sent", took, sent.Load(), size)
	case err != nil && !errors.Is(err, syscall.ECONNRESET):
		// A reset is a close with the client's bytes unread.
		return took, sent.Load(), err
	case sent.Load() >= size:
		return took, sent.Load(), errors.New("the whole body was sent before the connection closed")
	}
	return took, sent.Load(), nil
}
