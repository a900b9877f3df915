package httpserver_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/httpserver"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// forEachLoop runs test on a server of net/http and on one of the own
// HTTP/1.1 loop (ServeOwnHTTP1): loop makes a new server the one or the
// other.
func forEachLoop(t *testing.T, test func(t *testing.T, loop func(*httpserver.Server))) {
	t.Run("NetHTTP", func(t *testing.T) { test(t, func(*httpserver.Server) {}) })
	t.Run("OwnHTTP1", func(t *testing.T) { test(t, (*httpserver.Server).ServeOwnHTTP1) })
}

func TestLifecycle(t *testing.T) { forEachLoop(t, testLifecycle) }

func testLifecycle(t *testing.T, loop func(*httpserver.Server)) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	s := httpserver.New("test API", "127.0.0.1:0", h, nil)
	loop(s)
	if s.Addr() != nil {
		t.Fatal("an address before Open")
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); core.ErrorCode(err) != core.ECONFLICT {
		t.Fatalf("second Open: %v", err)
	}
	resp, err := http.Get("http://" + s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" {
		t.Fatalf("served %q", b)
	}
	// A taken port fails at Open.
	other := httpserver.New("other API", s.Addr().String(), h, nil)
	if err := other.Open(); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Fatalf("Open on a taken port: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := s.Close(context.Background()); err != nil {
			t.Fatalf("Close %d: %v", i+1, err)
		}
	}
	if err := s.Open(); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Fatalf("Open after Close: %v", err)
	}
	if err := httpserver.New("never opened", ":0", h, nil).Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// issue 25.7: Serve takes a listener bound already, rather than binding the
// address given to New; Close closes it.
func TestServeTakesABoundListener(t *testing.T) { forEachLoop(t, testServeTakesABoundListener) }

func testServeTakesABoundListener(t *testing.T, loop func(*httpserver.Server)) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The address of New is not bound: the one of the listener is served.
	s := httpserver.New("test API", "256.0.0.1:1", h, nil)
	loop(s)
	if err := s.Serve(ln); err != nil {
		t.Fatal(err)
	}
	if s.Addr() != ln.Addr() {
		t.Errorf("Addr %v, want the listener's %v", s.Addr(), ln.Addr())
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := s.Serve(other); core.ErrorCode(err) != core.ECONFLICT {
		t.Fatalf("second Serve: %v", err)
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" {
		t.Fatalf("served %q", b)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, err := net.Listen("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("Close left the listener bound: %v", err)
	}
	again.Close()
	if err := s.Serve(other); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Fatalf("Serve after Close: %v", err)
	}
}

func TestTLSAndPlainOnOnePort(t *testing.T) {
	forEachLoop(t, func(t *testing.T, loop func(*httpserver.Server)) {
		t.Run("Open", func(t *testing.T) { testTLSAndPlainOnOnePort(t, loop, false) })
		// The Cosmos DB port: a listener bound already, sniffed as well.
		t.Run("Serve", func(t *testing.T) { testTLSAndPlainOnOnePort(t, loop, true) })
	})
}

func testTLSAndPlainOnOnePort(t *testing.T, loop func(*httpserver.Server), bound bool) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			io.WriteString(w, "tls")
			return
		}
		io.WriteString(w, "plain")
	})
	certPEM, keyPEM, err := httpserver.SelfSignedCert([]string{"localhost", "127.0.0.1", "::1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	s := httpserver.New("test API", "127.0.0.1:0", h, nil)
	loop(s)
	s.ServeTLS(&tls.Config{Certificates: []tls.Certificate{cert}})
	open := s.Open
	if bound {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		open = func() error { return s.Serve(ln) }
	}
	if err := open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())

	// A client that says nothing holds up neither the others nor Close.
	silent, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		t.Fatal("the certificate does not parse")
	}
	secure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer secure.CloseIdleConnections()
	port := s.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		client *http.Client
		url    string
		want   string
	}{
		{http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/", port), "plain"},
		{secure, fmt.Sprintf("https://127.0.0.1:%d/", port), "tls"},
		{secure, fmt.Sprintf("https://localhost:%d/", port), "tls"},
	} {
		resp, err := tc.client.Get(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tc.want {
			t.Errorf("%s answered %q, want %q", tc.url, b, tc.want)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A connection handed over from another listener is served as one of the
// server's own; after Close a handed connection is closed.
func TestHandoff(t *testing.T) { forEachLoop(t, testHandoff) }

func testHandoff(t *testing.T, loop func(*httpserver.Server)) {
	s := httpserver.New("test API", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "handed "+r.URL.Path)
	}), nil)
	loop(s)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	client, server := net.Pipe()
	go s.Handoff(server)
	client.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(client, "GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "handed /x" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	c2, s2 := net.Pipe()
	s.Handoff(s2)
	if _, err := c2.Write([]byte("x")); err == nil {
		t.Fatal("a connection handed to a closed server is open")
	}
}
