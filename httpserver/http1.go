package httpserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The limits of the own HTTP/1.1 loop, net/http's defaults.
const (
	// http1HeaderTimeout bounds a TLS handshake and a request's headers,
	// counted from the request's first byte (ReadHeaderTimeout).
	http1HeaderTimeout = 10 * time.Second
	// http1MaxHeaderBytes bounds a request's line and headers
	// (http.DefaultMaxHeaderBytes, and the slack net/http allows for its
	// buffer).
	http1MaxHeaderBytes = http.DefaultMaxHeaderBytes + 4096
	// http1DiscardLimit is how much of a body its handler left unread is
	// read and dropped so that the connection can serve another request;
	// past it the connection is closed after the answer.
	http1DiscardLimit = 256 << 10
	// http1HeaderHint is the size an answer's header map starts with: a
	// Cosmos DB answer has about twenty headers, and a map grown to them
	// a step at a time was 1% of lapse's CPU (pprof).
	http1HeaderHint = 24
)

// http1Server serves HTTP/1.x with a connection loop of lapse's own
// (Server.ServeOwnHTTP1): one goroutine per connection reads a request,
// runs the handler and writes the answer, then waits for the next
// request. net/http's server does the same but, for every request, also
// starts a goroutine that reads the connection while the handler runs (to
// see the client hang up) and stops it after; on a small machine, without
// it, a Cosmos DB request at one worker costs lapse a quarter to a third
// less CPU (docs/benchmarks.md). The price: a
// request's context ends when its handler returns or the server closes,
// not when its client hangs up.
type http1Server struct {
	handler     http.Handler
	log         *slog.Logger
	connState   func(net.Conn, http.ConnState)
	connContext func(context.Context, net.Conn) context.Context
	// headerTimeout bounds a request's line and headers, bodyTimeout its
	// body (Server.SetBodyTimeout); the watchdog enforces both.
	headerTimeout, bodyTimeout time.Duration
	// start is the origin of the watchdog's clock (clock).
	start time.Time

	closing atomic.Bool // Shutdown or Close was called
	date    atomic.Pointer[http1Date]

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*http1Conn]struct{}
	watching  bool          // the watchdog runs
	drained   chan struct{} // closed once closing with no connection left
	isDrained bool
}

// http1Date is the Date header of the answers of one second.
type http1Date struct {
	sec  int64
	text string
}

func newHTTP1Server(handler http.Handler, log *slog.Logger, connState func(net.Conn, http.ConnState), connContext func(context.Context, net.Conn) context.Context, headerTimeout, bodyTimeout time.Duration) *http1Server {
	return &http1Server{
		handler: handler, log: log, connState: connState, connContext: connContext,
		headerTimeout: headerTimeout, bodyTimeout: bodyTimeout, start: time.Now(),
		listeners: make(map[net.Listener]struct{}), conns: make(map[*http1Conn]struct{}),
		drained: make(chan struct{}),
	}
}

// The read timeouts of the own loop's connections (a request's headers
// and its body) are kept by one watchdog goroutine per server, not by a
// read deadline armed for each request: arming a deadline starts a
// runtime timer, and starting one wakes an idle processor's thread to
// watch it, a wake-up per request that cost lapse about a tenth of its
// rate in point reads at one worker on two cores (docs/benchmarks.md). A
// connection says by when its next read is to be done (readWithin, an
// atomic store); the watchdog, ticking at a tenth of the shorter timeout
// (at most a second), cuts a read that is late with a deadline in the
// past. A timeout thus ends up to a tick after its bound.

// http1Cut is the readBy of a connection whose read the watchdog cut.
const http1Cut = -1

// clock is the watchdog's time: nanoseconds since the server started, on
// the monotonic clock.
func (s *http1Server) clock() int64 { return int64(time.Since(s.start)) }

// watchdogTick is how often the watchdog looks: a tenth of the shorter
// timeout, between 5 ms and a second.
func (s *http1Server) watchdogTick() time.Duration {
	return min(max(min(s.headerTimeout, s.bodyTimeout)/10, 5*time.Millisecond), time.Second)
}

// watch is the watchdog: it cuts the connections' late reads until the
// server is closing and has no connection left.
func (s *http1Server) watch() {
	t := time.NewTicker(s.watchdogTick())
	defer t.Stop()
	for {
		select {
		case <-s.drained:
			return
		case <-t.C:
		}
		now := s.clock()
		s.mu.Lock()
		for c := range s.conns {
			c.cutIfLate(now)
		}
		s.mu.Unlock()
	}
}

// drainedLocked ends the watchdog once the server is closing and has no
// connection left.
func (s *http1Server) drainedLocked() {
	if s.closing.Load() && len(s.conns) == 0 && !s.isDrained {
		s.isDrained = true
		close(s.drained)
	}
}

// Serve accepts connections on l and serves each in a goroutine of its
// own until l fails or the server closes; then it returns, with
// http.ErrServerClosed in the second case, as http.Server.Serve does; it
// closes l.
func (s *http1Server) Serve(l net.Listener) error {
	defer l.Close()
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	if !s.watching {
		s.watching = true
		go s.watch()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	var retry AcceptRetry
	for {
		rwc, err := l.Accept()
		if s.closing.Load() {
			if err == nil {
				rwc.Close()
			}
			return http.ErrServerClosed
		}
		if errors.Is(err, net.ErrClosed) {
			return err
		}
		if err != nil {
			s.log.Debug("http: accept failed", "err", err)
			time.Sleep(retry.Failed())
			continue
		}
		retry.Succeeded()
		ctx := context.Background()
		if s.connContext != nil {
			ctx = s.connContext(ctx, rwc)
		}
		c := &http1Conn{srv: s, rwc: rwc}
		ctx, c.cancel = context.WithCancel(ctx)
		if !s.track(c) {
			c.cancel()
			rwc.Close()
			return http.ErrServerClosed
		}
		go c.serve(ctx)
	}
}

// track adds c to the open connections, unless the server is closing.
func (s *http1Server) track(c *http1Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.conns[c] = struct{}{}
	if s.connState != nil {
		s.connState(c.rwc, http.StateNew)
	}
	return true
}

func (s *http1Server) forget(c *http1Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if s.connState != nil {
		s.connState(c.rwc, http.StateClosed)
	}
	s.drainedLocked()
}

// stop marks the server closing and closes its listeners.
func (s *http1Server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing.Store(true)
	for l := range s.listeners {
		l.Close()
	}
	s.drainedLocked()
}

// Shutdown stops accepting, closes the idle connections and waits for
// the rest to finish their request, until ctx ends (http.Server.Shutdown).
func (s *http1Server) Shutdown(ctx context.Context) error {
	s.stop()
	wait := time.Millisecond
	for {
		if s.closeIdle() {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// closeIdle closes the connections that wait for a request; true when no
// connection is left.
func (s *http1Server) closeIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if !c.active.Load() {
			c.rwc.Close()
		}
	}
	return len(s.conns) == 0
}

// Close stops accepting, closes every connection at once and ends the
// context of the requests they were serving.
func (s *http1Server) Close() error {
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.cancel()
		c.rwc.Close()
	}
	return nil
}

// dateHeader returns the Date header's value for now.
func (s *http1Server) dateHeader() string {
	now := time.Now()
	if d := s.date.Load(); d != nil && d.sec == now.Unix() {
		return d.text
	}
	d := &http1Date{sec: now.Unix(), text: now.UTC().Format(http.TimeFormat)}
	s.date.Store(d)
	return d.text
}

// http1Conn is one client connection of an http1Server.
type http1Conn struct {
	srv    *http1Server
	rwc    net.Conn
	active atomic.Bool // a request is being served (not idle)
	// readBy is when the read the connection awaits is to be done, on
	// the server's clock; 0 while it may wait for ever, http1Cut once the
	// watchdog has cut it (readWithin, cutIfLate).
	readBy atomic.Int64
	// cutting is held by the watchdog while it cuts the connection's read.
	cutting sync.Mutex
	// cancel ends the context of the connection's requests, when it
	// closes or the server does (Close).
	cancel context.CancelFunc
	r      budgetReader
	br     *bufio.Reader
	bw     *bufio.Writer
	remote string
	tls    *tls.ConnectionState
	// resp and body are reused by each request in turn.
	resp http1Response
	body http1Body
}

// serve serves the connection's requests in turn until it closes.
func (c *http1Conn) serve(ctx context.Context) {
	defer c.srv.forget(c)
	defer c.cancel()
	defer c.rwc.Close()
	c.remote = c.rwc.RemoteAddr().String()
	if tc, ok := c.rwc.(*tls.Conn); ok {
		tc.SetDeadline(time.Now().Add(http1HeaderTimeout))
		if err := tc.HandshakeContext(ctx); err != nil {
			c.srv.log.Debug("http: TLS handshake failed", "remote", c.remote, "err", err)
			return
		}
		tc.SetDeadline(time.Time{})
		st := tc.ConnectionState()
		c.tls = &st
	}
	c.r = budgetReader{conn: c.rwc, remain: math.MaxInt64}
	c.br = bufio.NewReaderSize(&c.r, 4<<10)
	c.bw = bufio.NewWriterSize(c.rwc, 4<<10)
	c.readWithin(c.srv.headerTimeout)
	for first := true; ; first = false {
		// As net/http's: the first request's header timeout starts
		// with the connection; a next one is awaited with no deadline
		// (no IdleTimeout), its timeout starting with its first bytes,
		// and a connection that ends with fewer than 4 bytes is closed
		// without an answer.
		n := 4
		if first {
			n = 1
		}
		if _, err := c.br.Peek(n); err != nil {
			return
		}
		c.active.Store(true)
		if c.srv.closing.Load() || !c.serveRequest(ctx) {
			return
		}
		c.active.Store(false)
		if c.srv.closing.Load() {
			return
		}
	}
}

// serveRequest reads one request, serves it and writes its answer; false
// when the connection is to close.
func (c *http1Conn) serveRequest(connCtx context.Context) (keepAlive bool) {
	c.readWithin(c.srv.headerTimeout)
	c.r.remain = http1MaxHeaderBytes
	req, err := http.ReadRequest(c.br)
	tooLarge := c.r.remain <= 0
	c.r.remain = math.MaxInt64
	if err != nil {
		c.refuse(err, tooLarge)
		return false
	}
	if refusal := refusal(req); refusal != "" {
		c.writeBare(refusal, refusal)
		c.closeWrite()
		return false
	}
	req.RemoteAddr = c.remote
	req.TLS = c.tls
	ctx, cancel := context.WithCancel(connCtx)
	defer cancel()
	req = req.WithContext(ctx)
	expect := req.Header.Get("Expect")
	var body *http1Body
	if req.Body == http.NoBody {
		c.readWithin(0)
	} else {
		// The body is bounded from the end of the headers, and no more
		// once it is read to its end, as limitBody bounds it on net/http's
		// loop.
		c.readWithin(c.srv.bodyTimeout)
		body = &c.body
		*body = http1Body{rc: req.Body, c: c, expect: req.ProtoAtLeast(1, 1) && hasToken(expect, "100-continue")}
		req.Body = body
	}
	w := &c.resp
	*w = http1Response{c: c, req: req, header: make(http.Header, http1HeaderHint), contentLength: -1, buf: w.buf[:0], isHEAD: req.Method == http.MethodHead}
	w.closeAfter = req.Close // an HTTP/1.0 request without keep-alive too
	if expect != "" && !hasToken(expect, "100-continue") {
		// An expectation this server cannot meet (net/http's answer).
		w.header.Set("Connection", "close")
		w.WriteHeader(http.StatusExpectationFailed)
		w.finish()
		return false
	}
	if !c.runHandler(w, req) {
		return false
	}
	unread := body != nil && !body.finish()
	if unread {
		w.closeAfter = true
	}
	c.readWithin(0) // the wait for the next request has no bound
	if err := w.finish(); err != nil {
		return false
	}
	if cap(w.buf) > 16<<10 {
		w.buf = nil // a large answer's buffer is not kept for the next one
	}
	if unread {
		c.closeWrite()
	}
	return !w.closeAfter
}

// readWithin bounds the connection's next reads to d from now, until
// it is called again; d = 0 lifts the bound. When the watchdog has cut a
// read since the last call, that read has ended (had it failed, the
// connection would be closing): the deadline the watchdog set is lifted
// once it is set.
func (c *http1Conn) readWithin(d time.Duration) {
	by := int64(0)
	if d > 0 {
		by = c.srv.clock() + int64(d)
	}
	if c.readBy.Swap(by) == http1Cut {
		c.cutting.Lock()
		c.rwc.SetReadDeadline(time.Time{})
		c.cutting.Unlock()
	}
}

// cutIfLate cuts the connection's read when it was to be done by now:
// the read, and every read after it until readWithin, fails at once with
// a timeout.
func (c *http1Conn) cutIfLate(now int64) {
	by := c.readBy.Load()
	if by <= 0 || by > now {
		return
	}
	c.cutting.Lock()
	defer c.cutting.Unlock()
	if c.readBy.CompareAndSwap(by, http1Cut) {
		c.rwc.SetReadDeadline(time.Unix(1, 0))
	}
}

// runHandler runs the handler; false when it panicked, and the connection
// is to close without an answer (what net/http does).
func (c *http1Conn) runHandler(w *http1Response, req *http.Request) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				c.srv.log.Error("http: panic serving "+c.remote, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
			ok = false
		}
	}()
	c.srv.handler.ServeHTTP(w, req)
	return true
}

// refuse answers a request that could not be read, as net/http does: 431
// for headers too large, 501 for a transfer coding other than chunked,
// nothing when the client went away or fell silent, 400 otherwise.
func (c *http1Conn) refuse(err error, tooLarge bool) {
	switch {
	case tooLarge:
		c.writeBare("431 Request Header Fields Too Large", "431 Request Header Fields Too Large")
	case isCommonNetReadError(err):
		return
	case strings.HasPrefix(err.Error(), "unsupported transfer encoding"):
		c.writeBare("501 Not Implemented", "Unsupported transfer encoding")
	default:
		c.writeBare("400 Bad Request", "400 Bad Request")
	}
	c.closeWrite()
}

// isCommonNetReadError says whether err is a connection's end or its
// deadline rather than a malformed request (net/http's test).
func isCommonNetReadError(err error) bool {
	if err == io.EOF {
		return true
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return true
	}
	if oe, ok := err.(*net.OpError); ok && oe.Op == "read" {
		return true
	}
	return false
}

// refusal is the status net/http's server answers a request it read but
// does not serve with, "" for a request to serve: an HTTP version other
// than 1.x, an HTTP/1.1 request without a Host, a malformed Host, a header
// name or value that is not valid.
func refusal(req *http.Request) string {
	switch {
	case req.ProtoMajor != 1:
		return "505 HTTP Version Not Supported: unsupported protocol version"
	case req.ProtoAtLeast(1, 1) && req.Host == "" && req.Method != http.MethodConnect:
		return "400 Bad Request: missing required Host header"
	case !httpguts.ValidHostHeader(req.Host):
		return "400 Bad Request: malformed Host header"
	}
	for k, vv := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return "400 Bad Request: invalid header name"
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return "400 Bad Request: invalid header value"
			}
		}
	}
	return ""
}

// writeBare writes an answer of a status line and a text alone, which
// ends with the connection, as net/http's own refusals (no Date, no
// Content-Length).
func (c *http1Conn) writeBare(status, text string) {
	c.bw.WriteString("HTTP/1.1 " + status + "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" + text)
	c.bw.Flush()
}

// closeWrite ends the connection's sending side and gives the client a
// moment to read the answer before the connection closes: closing at once
// with the client's bytes unread would reset the connection, and the
// client could lose the answer (net/http does the same).
func (c *http1Conn) closeWrite() {
	cw, ok := c.rwc.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	c.rwc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	io.Copy(io.Discard, c.rwc)
}

// budgetReader reads conn, and no more than remain bytes: it bounds the
// bytes of a request's line and headers.
type budgetReader struct {
	conn   net.Conn
	remain int64
}

func (r *budgetReader) Read(p []byte) (int, error) {
	if r.remain <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.remain {
		p = p[:r.remain]
	}
	n, err := r.conn.Read(p)
	r.remain -= int64(n)
	return n, err
}
