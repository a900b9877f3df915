package httpserver

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// sniffTimeout bounds the wait for a new connection's first byte.
const sniffTimeout = 10 * time.Second

// sniffListener serves TLS and plain HTTP on one port: a connection whose
// first byte is 0x16 (a TLS handshake record, which a ClientHello starts
// with) is served over TLS, any other in the clear. Reading the first byte
// happens off the accept loop, so a silent client holds up nobody.
type sniffListener struct {
	net.Listener
	tls      *tls.Config
	conns    chan net.Conn
	done     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
	mu       sync.Mutex
	sniffing map[net.Conn]struct{} // connections whose first byte is awaited
	err      error                 // Accept's error once the loop ends
}

func newSniffListener(ln net.Listener, cfg *tls.Config) *sniffListener {
	l := &sniffListener{Listener: ln, tls: cfg, conns: make(chan net.Conn), done: make(chan struct{}), sniffing: make(map[net.Conn]struct{})}
	l.wg.Add(1)
	go l.acceptLoop()
	return l
}

func (l *sniffListener) acceptLoop() {
	defer l.wg.Done()
	var retry AcceptRetry
	for {
		c, err := l.Listener.Accept()
		if err != nil && !errors.Is(err, net.ErrClosed) {
			// Out of files, say: accept again later (AcceptRetry).
			select {
			case <-time.After(retry.Failed()):
			case <-l.done:
				return
			}
			continue
		}
		if err != nil {
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			l.close()
			return
		}
		retry.Succeeded()
		l.mu.Lock()
		select {
		case <-l.done:
			l.mu.Unlock()
			c.Close()
			continue
		default:
		}
		l.sniffing[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go l.sniff(c)
	}
}

// sniff reads the first byte of c and hands c to Accept as it should be
// served.
func (l *sniffListener) sniff(c net.Conn) {
	defer l.wg.Done()
	c.SetReadDeadline(time.Now().Add(sniffTimeout))
	var first [1]byte
	_, err := io.ReadFull(c, first[:])
	l.mu.Lock()
	delete(l.sniffing, c)
	l.mu.Unlock()
	if err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	var out net.Conn = &peekedConn{Conn: c, first: first[0], unread: true}
	if first[0] == 0x16 {
		out = tls.Server(out, l.tls)
	}
	select {
	case l.conns <- out:
	case <-l.done:
		c.Close()
	}
}

// Accept returns the next connection, TLS or plain.
func (l *sniffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.err != nil {
			return nil, l.err
		}
		return nil, net.ErrClosed
	}
}

// close ends Accept and cuts the connections still being sniffed.
func (l *sniffListener) close() {
	l.once.Do(func() {
		l.mu.Lock()
		close(l.done)
		for c := range l.sniffing {
			c.Close()
		}
		l.mu.Unlock()
	})
}

// Close stops accepting and waits for the goroutines it started.
func (l *sniffListener) Close() error {
	err := l.Listener.Close()
	l.close()
	l.wg.Wait()
	return err
}

// peekedConn is a connection whose first byte was read already: its first
// Read returns that byte, the rest read the connection itself. (Not a
// bufio.Reader: every read of a request would go through it, and the
// deeper stack made net/http's per-request background read, which runs in
// a new goroutine, grow its stack on each request.)
type peekedConn struct {
	net.Conn
	first  byte
	unread bool
}

func (c *peekedConn) Read(p []byte) (int, error) {
	if c.unread && len(p) > 0 {
		c.unread = false
		p[0] = c.first
		return 1, nil
	}
	return c.Conn.Read(p)
}
