package httpserver_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/httpserver"
)

// The header timeout bounds a request that has begun, and a new
// connection's first request, and nothing else: a keep-alive connection
// waits for its next request as long as its client likes (net/http with
// no IdleTimeout), and one that serves requests back to back for longer
// than the timeout is never cut. The own loop keeps its timeouts with a
// watchdog rather than a deadline per request; both loops must agree.
func TestHeaderTimeoutCutsOnlyARequestThatStalls(t *testing.T) {
	forEachLoop(t, testHeaderTimeoutCutsOnlyARequestThatStalls)
}

func testHeaderTimeoutCutsOnlyARequestThatStalls(t *testing.T, loop func(*httpserver.Server)) {
	const limit = 200 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	})
	s := httpserver.New("test API", "127.0.0.1:0", h, nil)
	loop(s)
	httpserver.SetHeaderTimeout(s, limit)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	dial := func(t *testing.T) (net.Conn, *bufio.Reader) {
		t.Helper()
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		return c, bufio.NewReader(c)
	}
	ask := func(t *testing.T, c net.Conn, br *bufio.Reader, req string) {
		t.Helper()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "ok" {
			t.Fatalf("answer %d %q", resp.StatusCode, b)
		}
	}
	// closedAfter waits for the server to close c, and says how long
	// after start it did, failing if it answered anything.
	closedAfter := func(t *testing.T, c net.Conn, start time.Time) time.Duration {
		t.Helper()
		b, err := io.ReadAll(c)
		took := time.Since(start)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection still open after %v", took)
		}
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("read: %v", err)
		}
		if len(b) > 0 {
			t.Errorf("answer %q to a request cut short", b)
		}
		return took
	}
	const get = "GET / HTTP/1.1\r\nHost: lapse\r\n\r\n"
	const post = "POST / HTTP/1.1\r\nHost: lapse\r\nContent-Length: 2\r\n\r\n{}"

	t.Run("IdleKeepAliveOutlivesIt", func(t *testing.T) {
		c, br := dial(t)
		ask(t, c, br, get)
		time.Sleep(3 * limit) // idle: nothing is to happen
		ask(t, c, br, post)
		time.Sleep(3 * limit)
		ask(t, c, br, get)
	})
	t.Run("BusyConnectionOutlivesIt", func(t *testing.T) {
		c, br := dial(t)
		n := 0
		for start := time.Now(); time.Since(start) < 4*limit; n++ {
			if n%2 == 0 {
				ask(t, c, br, get)
			} else {
				ask(t, c, br, post)
			}
			time.Sleep(limit / 20)
		}
		if n < 10 {
			t.Fatalf("only %d requests in %v", n, 4*limit)
		}
	})
	t.Run("StalledHeadersAreCut", func(t *testing.T) {
		c, br := dial(t)
		ask(t, c, br, get) // a second request's headers are bounded too
		start := time.Now()
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: lapse\r\n"); err != nil {
			t.Fatal(err)
		}
		if took := closedAfter(t, c, start); took < limit {
			t.Errorf("cut after %v, before the header timeout %v", took, limit)
		}
	})
	t.Run("SilentConnectionIsCut", func(t *testing.T) {
		start := time.Now()
		c, _ := dial(t)
		closedAfter(t, c, start)
	})
}
