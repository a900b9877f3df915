package httpserver_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/httpserver"
)

func TestConnectionsCountsOpenConnections(t *testing.T) {
	forEachLoop(t, testConnectionsCountsOpenConnections)
}

func testConnectionsCountsOpenConnections(t *testing.T, loop func(*httpserver.Server)) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	s := httpserver.New("test API", "127.0.0.1:0", h, nil)
	loop(s)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if n := s.Connections(); n != 0 {
		t.Fatalf("%d connections before any client", n)
	}
	// Two clients of their own, each keeping its connection alive.
	var clients []*http.Client
	for range 2 {
		c := &http.Client{Transport: &http.Transport{}}
		clients = append(clients, c)
		resp, err := c.Get("http://" + s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n := s.Connections(); n != 2 {
		t.Fatalf("%d connections with two clients connected, want 2", n)
	}
	for _, c := range clients {
		c.CloseIdleConnections()
	}
	// The server sees the clients go as its connections read EOF.
	waitFor(t, func() bool { return s.Connections() == 0 })
}

// waitFor polls cond, which I/O on other goroutines makes true, for up to
// 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
