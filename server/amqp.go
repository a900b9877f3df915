package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/lapse-emulator/lapse/httpserver"
	"github.com/lapse-emulator/lapse/rabbitmq"
	"github.com/lapse-emulator/lapse/servicebus"
)

// amqpListener is an AMQP port: it reads each connection's 8-byte protocol
// header and hands AMQP 0-9-1 to the RabbitMQ front-end and AMQP 1.0 (plain
// or SASL) to the Service Bus front-end (classifyHeader). With a TLS
// configuration it is the AMQPS port: each connection's TLS handshake comes
// first, then the same protocol header, as on RabbitMQ's TLS listener and
// Service Bus's port 5671. There an HTTP request, which starts with a
// method name rather than "AMQP", goes to https (the Service Bus
// administration API), as on the service's one host name: SDKs without
// emulator support build https://host:port/ from the same connection
// string as the AMQP client.
//
// The plain AMQP port takes TLS too when a connection starts with a TLS
// handshake record rather than a protocol header (issue 27): the
// administration client of azure-servicebus 7.9 and later, given the
// emulator's connection string (UseDevelopmentEmulator=true), builds
// https://host:port/ from its endpoint, the AMQP port, so one connection
// string serves both of its clients once lapse's certificate is trusted.
type amqpListener struct {
	ln       net.Listener
	tls      *tls.Config // nil: plain AMQP only
	tlsFirst bool        // the AMQPS port: every connection is TLS
	https    func(net.Conn)
	rabbit   *rabbitmq.Server
	sb       *servicebus.Server
	log      *slog.Logger
	wg       sync.WaitGroup
	mu       sync.Mutex
	hello    map[net.Conn]struct{} // connections still sending their header
	closed   bool
	stop     chan struct{} // closed by Close
}

// headerTimeout bounds the wait for a protocol header, and the TLS
// handshake before it.
const headerTimeout = 10 * time.Second

// newAMQPListener serves ln, bound already; serving starts at once. cfg,
// if not nil, serves TLS: on every connection when tlsFirst (an AMQPS
// port), else on those that start with a TLS handshake; https serves the
// HTTP requests that come over TLS. Close closes ln.
func newAMQPListener(ln net.Listener, cfg *tls.Config, tlsFirst bool, https func(net.Conn), rabbit *rabbitmq.Server, sb *servicebus.Server, log *slog.Logger) *amqpListener {
	l := &amqpListener{ln: ln, tls: cfg, tlsFirst: tlsFirst, https: https, rabbit: rabbit, sb: sb, log: log, hello: map[net.Conn]struct{}{}, stop: make(chan struct{})}
	l.wg.Add(1)
	go l.accept()
	return l
}

// Addr is the bound address.
func (l *amqpListener) Addr() net.Addr { return l.ln.Addr() }

func (l *amqpListener) accept() {
	defer l.wg.Done()
	var retry httpserver.AcceptRetry
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			wait := retry.Failed()
			l.log.Warn("accepting a connection failed; accepting again later", "err", err, "in", wait)
			select {
			case <-time.After(wait):
			case <-l.stop:
				return
			}
			continue
		}
		retry.Succeeded()
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			nc.Close()
			return
		}
		l.hello[nc] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go l.handle(nc)
	}
}

// handle runs the TLS handshake of an AMQPS port (or of a plain port's
// connection that starts one), reads the protocol header and hands the
// connection on.
func (l *amqpListener) handle(nc net.Conn) {
	defer l.wg.Done()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	raw := nc
	var h [8]byte
	nc.SetDeadline(time.Now().Add(headerTimeout))
	var err error
	overTLS := l.tls != nil && l.tlsFirst
	if overTLS {
		nc, err = l.handshake(nc)
	}
	if err == nil {
		_, err = io.ReadFull(nc, h[:])
	}
	if err == nil && l.tls != nil && !overTLS && h[0] == tlsHandshakeRecord {
		overTLS = true
		if nc, err = l.handshake(&replayConn{Conn: nc, pending: h[:]}); err == nil {
			_, err = io.ReadFull(nc, h[:])
		}
	}
	nc.SetDeadline(time.Time{})
	l.mu.Lock()
	delete(l.hello, raw)
	closed := l.closed
	l.mu.Unlock()
	if err != nil || closed {
		nc.Close()
		return
	}
	if overTLS && l.https != nil && isHTTPMethod(h) {
		l.https(&replayConn{Conn: nc, pending: h[:]})
		return
	}
	route, handOn := classifyHeader(h)
	switch route {
	case routeRabbitMQ:
		l.rabbit.ServeConn(nc, handOn)
	case routeServiceBus:
		l.sb.ServeConn(nc, handOn)
	default:
		l.log.Debug("protocol header refused", "remote", nc.RemoteAddr().String(), "header", fmt.Sprintf("%q", h[:]))
		nc.Write(handOn[:])
		nc.Close()
	}
}

// tlsHandshakeRecord is the first byte of a TLS connection: the content
// type of the record that carries the ClientHello (RFC 8446 §5.1), which
// no AMQP protocol header starts with.
const tlsHandshakeRecord = 0x16

// handshake runs the server side of a TLS handshake on nc.
func (l *amqpListener) handshake(nc net.Conn) (net.Conn, error) {
	tc := tls.Server(nc, l.tls)
	err := tc.Handshake()
	if err != nil {
		l.log.Debug("TLS handshake failed", "remote", nc.RemoteAddr().String(), "err", err)
	}
	return tc, err
}

// isHTTPMethod says whether h starts an HTTP/1 request: a method name in
// capitals and a space.
func isHTTPMethod(h [8]byte) bool {
	for i, b := range h {
		switch {
		case b == ' ':
			return i > 0
		case b < 'A' || b > 'Z':
			return false
		}
	}
	return false
}

// replayConn is a connection whose first bytes, already read, are read
// again first.
type replayConn struct {
	net.Conn
	pending []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// Close stops accepting, closes every connection and waits for them.
func (l *amqpListener) Close(ctx context.Context) error {
	l.mu.Lock()
	if !l.closed {
		close(l.stop)
	}
	l.closed = true
	for nc := range l.hello {
		nc.Close()
	}
	l.mu.Unlock()
	l.ln.Close()
	err := errors.Join(l.rabbit.Close(ctx), l.sb.Close(ctx))
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return err
}
