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
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/cosmos"
)

// idleConns is how many connections the idle-connection figures are
// measured over: enough that a few kilobytes the test itself allocates
// meanwhile are lost in the per-connection figure.
const idleConns = 1000

// maxIdleConnBytes is what an idle connection may hold of the server's
// memory, heap and goroutine stacks together (issue 25.8).
const maxIdleConnBytes = 64 << 10

// goroutineSlack is how far the goroutines per connection may go past
// maxIdleConnGoroutines: a few goroutines come and go that are not the
// connections' (one finishing its work, the runtime's).
const goroutineSlack = 0.05

// maxIdleConnGoroutines is how many goroutines an idle connection runs:
// the HTTP server's for the connection; each costs its stack.
const maxIdleConnGoroutines = 1

// memInUse is the heap and goroutine stacks in use after two collections,
// and the number of goroutines.
func memInUse() (bytes uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse, runtime.NumGoroutine()
}

// mustFiles fails tb unless the process may open n more files, raising
// its soft limit when the hard one allows.
func mustFiles(tb testing.TB, n uint64) {
	tb.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		tb.Fatal(err)
	}
	if rl.Cur >= n+256 {
		return
	}
	rl.Cur = min(rl.Max, n+256)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur < n+256 {
		tb.Fatalf("the process may open %d files (%v), the test needs %d", rl.Cur, err, n+256)
	}
}

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

// idleConnCost opens n idle connections (dialIdle) and returns what each
// adds to the server's heap and goroutine stacks, and its goroutines. The
// client's sockets are counted too, a few hundred bytes each.
func idleConnCost(tb testing.TB, n int, secure bool) (bytesPerConn, goroutinesPerConn float64) {
	tb.Helper()
	mustFiles(tb, 2*uint64(n))
	f := MustServer(tb)
	f.MustDatabase("db")
	// A first connection, so that what the first of all sets up is in the
	// starting figure.
	warm := f.dialIdle(tb, secure)
	defer warm.Close()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	before, gBefore := memInUse()
	for range n {
		conns = append(conns, f.dialIdle(tb, secure))
	}
	after, gAfter := memInUse()
	return (float64(after) - float64(before)) / float64(n), float64(gAfter-gBefore) / float64(n)
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
			perConn, goroutines := idleConnCost(t, idleConns, k.secure)
			t.Logf("an idle connection: %.0f bytes of heap and stacks, %.1f goroutines", perConn, goroutines)
			if perConn > maxIdleConnBytes {
				t.Errorf("an idle connection holds %.0f bytes of heap and stacks (%.1f goroutines), want at most %d",
					perConn, goroutines, maxIdleConnBytes)
			}
			if goroutines > maxIdleConnGoroutines+goroutineSlack {
				t.Errorf("an idle connection runs %.1f goroutines, want at most %d", goroutines, maxIdleConnGoroutines)
			}
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
				perConn, goroutines = idleConnCost(b, idleConns, k.secure)
			}
			b.ReportMetric(perConn, "bytes/conn")
			b.ReportMetric(goroutines, "goroutines/conn")
		})
	}
}
