// Package httpserver is the lifecycle every HTTP listener of lapse shares
// (docs/architecture.md, conventions): Open binds at once, so that a taken port fails there
// (or Serve takes a listener bound already);
// Addr is the bound address; Close is safe twice and before Open, and
// waits for the serving goroutine. The control API, the RabbitMQ
// management API and the front-ends to come each wrap one.
package httpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// Server serves one handler on one address.
type Server struct {
	name    string
	addr    string
	handler http.Handler
	log     *slog.Logger
	tls     *tls.Config

	mu     sync.Mutex
	ln     net.Listener
	srv    httpServing
	done   chan struct{} // closed when the serving goroutines end
	closed bool
	// handoff serves the connections Handoff is given.
	handoff *handoffListener
	// conns counts the open client connections (connState).
	conns atomic.Int64
	// bodyTimeout bounds a request body's arrival (SetBodyTimeout).
	bodyTimeout time.Duration
	// headerTimeout bounds a request's line and headers: 0 for
	// http1HeaderTimeout (tests set it shorter).
	headerTimeout time.Duration
	// connContext, if set, gives each connection's requests a context of
	// its own (SetConnContext).
	connContext func(ctx context.Context, c net.Conn) context.Context
	// ownHTTP1: the connections are served by lapse's own HTTP/1.1 loop
	// (ServeOwnHTTP1).
	ownHTTP1 bool
}

// httpServing is what Server needs of an HTTP server: net/http's, or the
// own HTTP/1.1 loop of ServeOwnHTTP1.
type httpServing interface {
	Serve(net.Listener) error
	Shutdown(context.Context) error
	Close() error
}

// New returns a server of handler on addr (":0" picks a free port); name
// says which API it is in errors and the log.
func New(name, addr string, handler http.Handler, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{name: name, addr: addr, handler: handler, log: log}
}

// ServeTLS makes the server answer TLS as well as plain HTTP on its one
// port, telling them apart by a connection's first byte; call it before
// Open.
func (s *Server) ServeTLS(cfg *tls.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tls = cfg
}

// SetConnContext makes f derive the context of each connection's requests
// from the server's, as http.Server.ConnContext does: a front-end keeps
// what it learnt of a connection there. Call it before Open.
func (s *Server) SetConnContext(f func(ctx context.Context, c net.Conn) context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.connContext = f
}

// ServeOwnHTTP1 makes the server serve its connections with lapse's own
// HTTP/1.1 connection loop (http1Server) rather than net/http's, which
// spends a goroutine per request watching for the client to hang up. Its
// handlers' request contexts then end when they return, not when their
// client goes. Call it before Open.
func (s *Server) ServeOwnHTTP1() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ownHTTP1 = true
}

// Handler returns the handler the server serves, for a front-end that
// serves it behind another's port.
func (s *Server) Handler() http.Handler { return s.handler }

// Open binds the address at once, so a taken port fails here, and serves in
// the background until Close.
func (s *Server) Open() error {
	if err := s.usable(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return core.Errorf(core.EUNAVAILABLE, "%s: %v", s.name, err)
	}
	if err := s.Serve(ln); err != nil {
		ln.Close()
		return err
	}
	return nil
}

// Serve serves on ln, a listener bound already (lapse binds all its ports
// at once, before it starts anything, and each only once), in the
// background until Close, which closes ln; the address given to New is not
// used. It fails, leaving ln open, when the server is open already or
// closed.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	s.ln = ln
	var serveLn net.Listener = ln
	if s.tls != nil {
		serveLn = newSniffListener(ln, s.tls)
	}
	bodyTimeout := s.bodyTimeout
	if bodyTimeout <= 0 {
		bodyTimeout = DefaultBodyTimeout
	}
	headerTimeout := s.headerTimeout
	if headerTimeout <= 0 {
		headerTimeout = http1HeaderTimeout
	}
	if s.ownHTTP1 {
		// The own loop bounds bodies itself (its watchdog).
		s.srv = newHTTP1Server(s.handler, s.log, s.connState, s.connContext, headerTimeout, bodyTimeout)
	} else {
		s.srv = &http.Server{
			Handler:           limitBody(s.handler, bodyTimeout),
			ReadHeaderTimeout: headerTimeout,
			ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
			ConnState:         s.connState,
			ConnContext:       s.connContext,
		}
	}
	s.done = make(chan struct{})
	s.handoff = newHandoffListener(ln.Addr())
	var wg sync.WaitGroup
	srv := s.srv
	for _, l := range []net.Listener{serveLn, s.handoff} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error(s.name+" stopped", "err", err)
			}
		}()
	}
	go func(done chan struct{}) {
		wg.Wait()
		close(done)
	}(s.done)
	return nil
}

// usable says why the server cannot open, if it cannot: it is open
// already or closed.
func (s *Server) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usableLocked()
}

func (s *Server) usableLocked() error {
	if s.closed {
		return core.Errorf(core.EUNAVAILABLE, "the %s is closed", s.name)
	}
	if s.ln != nil {
		return core.Errorf(core.ECONFLICT, "the %s is open already", s.name)
	}
	return nil
}

// Handoff serves c, a connection accepted by another listener (an HTTP
// request that arrived on the AMQPS port), as if it had come to this
// server's port. It closes c when the server is not open.
func (s *Server) Handoff(c net.Conn) {
	s.mu.Lock()
	h := s.handoff
	s.mu.Unlock()
	if h == nil || !h.give(c) {
		c.Close()
	}
}

// Addr returns the address the server listens on, nil before Open.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Connections returns the number of open client connections: those the
// HTTP server accepted (past the TLS sniffing of ServeTLS) and has not
// closed yet, idle keep-alive connections included.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// connState counts the connections as the HTTP server opens and closes
// them; a hijacked connection is no longer the server's.
func (s *Server) connState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.conns.Add(1)
	case http.StateHijacked, http.StateClosed:
		s.conns.Add(-1)
	}
}

// Close stops the server: no new connections, in-flight requests finish
// until ctx ends, then the rest are cut. It waits for the serving goroutine
// and is safe to call twice, and before Open.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	srv, done := s.srv, s.done
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, srv.Close())
	}
	<-done
	return err
}
