//go:build unix

package cosmos_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/internal/connmem"
)

// maxIdleConnGoroutines is how many goroutines an idle connection runs:
// the HTTP server's for the connection; each costs its stack.
const maxIdleConnGoroutines = 1

// dialIdle opens a keep-alive connection, over TLS if secure, reads
// database db on it as the SDKs do (signed, HTTP/1.1) and returns the
// connection alone, so that the client keeps nothing more of the heap than
// its socket (and its TLS state, which the figures then count too).
func (f *fixture) dialIdle(tb testing.TB, secure bool) net.Conn {
	tb.Helper()
	var nc net.Conn
	var err error
	if secure {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(f.certPEM)
		nc, err = tls.Dial("tcp", f.s.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	} else {
		nc, err = net.Dial("tcp", f.s.Addr().String())
	}
	if err != nil {
		tb.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	d := time.Now().UTC().Format(http.TimeFormat)
	fmt.Fprintf(nc, "GET /dbs/db HTTP/1.1\r\nHost: %s\r\nx-ms-date: %s\r\nx-ms-version: 2020-11-05\r\nAuthorization: %s\r\n\r\n",
		f.s.Addr(), d, sign(cosmos.EmulatorKey, "GET", "dbs", "dbs/db", d))
	resp, err := http.ReadResponse(bufio.NewReaderSize(nc, 1024), nil)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		tb.Fatalf("status %d, close %v; want 200 on a connection kept alive", resp.StatusCode, resp.Close)
	}
	nc.SetDeadline(time.Time{})
	return nc
}

// idleConnCost opens n idle connections (dialIdle) to a new server and
// returns what each costs it (connmem.Cost).
func idleConnCost(tb testing.TB, n int, secure bool) (bytesPerConn, goroutinesPerConn float64) {
	tb.Helper()
	f := MustServer(tb)
	f.MustDatabase("db")
	return connmem.Cost(tb, n, func() net.Conn { return f.dialIdle(tb, secure) })
}

// idleKinds are the idle connections measured: plain HTTP, and HTTPS,
// whose figure counts the client's TLS state as well as the server's.
var idleKinds = []struct {
	name   string
	secure bool
}{{"HTTP", false}, {"HTTPS", true}}

// issue 25.8: an idle keep-alive connection that has served a request
// holds under 64 KB of the server's heap and stacks, and runs at most
// maxIdleConnGoroutines goroutines.
func TestIdleConnectionMemory(t *testing.T) {
	for _, k := range idleKinds {
		t.Run(k.name, func(t *testing.T) {
			perConn, goroutines := idleConnCost(t, connmem.Conns, k.secure)
			connmem.Check(t, perConn, goroutines, maxIdleConnGoroutines)
		})
	}
}

// BenchmarkIdleConnectionMemory reports what an idle connection holds,
// measured over 1,000 of them per iteration: run it with -benchtime 1x.
func BenchmarkIdleConnectionMemory(b *testing.B) {
	for _, k := range idleKinds {
		b.Run(k.name, func(b *testing.B) {
			var perConn, goroutines float64
			for b.Loop() {
				perConn, goroutines = idleConnCost(b, connmem.Conns, k.secure)
			}
			connmem.Report(b, perConn, goroutines)
		})
	}
}
