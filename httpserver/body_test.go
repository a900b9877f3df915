package httpserver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/httpserver"
)

// issue 16.9: a body sent a byte at a time fails to read once the body
// timeout has passed, and the connection is closed, over plain HTTP and
// TLS on the one port.
func TestSlowBodyIsCutAfterTheBodyTimeout(t *testing.T) {
	forEachLoop(t, testSlowBodyIsCutAfterTheBodyTimeout)
}

func testSlowBodyIsCutAfterTheBodyTimeout(t *testing.T, loop func(*httpserver.Server)) {
	for _, useTLS := range []bool{false, true} {
		name := "Plain"
		if useTLS {
			name = "TLS"
		}
		t.Run(name, func(t *testing.T) {
			const limit = 300 * time.Millisecond
			readErr := make(chan error, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, err := io.ReadAll(r.Body)
				readErr <- err
				if err != nil {
					http.Error(w, "unreadable body", http.StatusBadRequest)
					return
				}
				io.WriteString(w, "read")
			})
			s := httpserver.New("test API", "127.0.0.1:0", h, nil)
			loop(s)
			s.SetBodyTimeout(limit)
			var pool *tlsPool
			if useTLS {
				pool = newTLSPool(t)
				s.ServeTLS(pool.server)
			}
			if err := s.Open(); err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			c, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if useTLS {
				c = pool.client(c)
			}
			const size = 1000
			start := time.Now() // before the server can set its deadline
			if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: lapse\r\nContent-Length: 1000\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			// One byte every 20 ms: the whole body would take 20 s.
			var sent atomic.Int64
			stop := make(chan struct{})
			senderDone := make(chan struct{})
			go func() {
				defer close(senderDone)
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for range size {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					if _, err := c.Write([]byte{'x'}); err != nil {
						return
					}
					sent.Add(1)
				}
			}()
			defer func() { close(stop); <-senderDone }()

			c.SetReadDeadline(start.Add(10 * time.Second))
			answer, err := io.ReadAll(c)
			took := time.Since(start)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("connection still open after %v, %d of %d body bytes sent", took, sent.Load(), size)
			}
			// The server closes with the client's bytes unread: a reset
			// may come in place of the end of the stream.
			if err != nil && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("read: %v", err)
			}
			if took < limit {
				t.Errorf("connection closed after %v, before the body timeout %v", took, limit)
			}
			if n := sent.Load(); n >= size {
				t.Errorf("the whole body was sent before the connection closed")
			}
			select {
			case err := <-readErr:
				if err == nil {
					t.Error("the handler read the whole body")
				}
			default:
				t.Error("the handler never ended its read")
			}
			if len(answer) > 0 && !strings.HasPrefix(string(answer), "HTTP/1.1 400 ") {
				t.Errorf("answer %q", answer)
			}
		})
	}
}

// issue 16.9: the body timeout bounds the body only: a handler that works
// longer than it after reading its body, and one with no body (a stream of
// server-sent events), keep their request's context and their keep-alive
// connection.
func TestBodyTimeoutSparesWhatComesAfterTheBody(t *testing.T) {
	forEachLoop(t, testBodyTimeoutSparesWhatComesAfterTheBody)
}

func testBodyTimeoutSparesWhatComesAfterTheBody(t *testing.T, loop func(*httpserver.Server)) {
	const limit = 100 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "request cancelled", http.StatusServiceUnavailable)
			return
		case <-time.After(3 * limit):
		}
		io.WriteString(w, "done")
	})
	s := httpserver.New("test API", "127.0.0.1:0", h, nil)
	loop(s)
	s.SetBodyTimeout(limit)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	url := "http://" + s.Addr().String() + "/"
	for _, method := range []string{"POST", "GET", "POST"} {
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader(`{"by":"15m"}`)
		}
		req, _ := http.NewRequest(method, url, body)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", method, resp.StatusCode, b)
		}
	}
	if n := s.Connections(); n != 1 {
		t.Errorf("%d connections after three requests, want the one kept alive", n)
	}
}

// tlsPool is a self-signed certificate for a server and what a client
// needs to trust it.
type tlsPool struct {
	server *tls.Config
	roots  *x509.CertPool
}

func newTLSPool(tb testing.TB) *tlsPool {
	tb.Helper()
	certPEM, keyPEM, err := httpserver.SelfSignedCert([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		tb.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM)
	return &tlsPool{server: &tls.Config{Certificates: []tls.Certificate{cert}}, roots: roots}
}

// client is c as a TLS client of the pool's server.
func (p *tlsPool) client(c net.Conn) net.Conn {
	return tls.Client(c, &tls.Config{RootCAs: p.roots, ServerName: "127.0.0.1"})
}
