package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/lapse-emulator/lapse/rabbitmq"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
	"github.com/lapse-emulator/lapse/servicebus"
)

// amqpListener is the AMQP port: it reads each connection's 8-byte protocol
// header and hands AMQP 0-9-1 to the RabbitMQ front-end and AMQP 1.0 (plain
// or SASL) to the Service Bus front-end. Anything else gets what RabbitMQ
// answers to a protocol it does not speak: the header it supports, then
// close.
type amqpListener struct {
	ln     net.Listener
	rabbit *rabbitmq.Server
	sb     *servicebus.Server
	log    *slog.Logger
	wg     sync.WaitGroup
	mu     sync.Mutex
	hello  map[net.Conn]struct{} // connections still sending their header
	closed bool
}

// headerTimeout bounds the wait for a protocol header.
const headerTimeout = 10 * time.Second

// openAMQP binds addr; serving starts at once.
func openAMQP(addr string, rabbit *rabbitmq.Server, sb *servicebus.Server, log *slog.Logger) (*amqpListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &amqpListener{ln: ln, rabbit: rabbit, sb: sb, log: log, hello: map[net.Conn]struct{}{}}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// Addr is the bound address.
func (l *amqpListener) Addr() net.Addr { return l.ln.Addr() }

func (l *amqpListener) accept() {
	defer l.wg.Done()
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			return
		}
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

// handle reads the protocol header and hands the connection on.
func (l *amqpListener) handle(nc net.Conn) {
	defer l.wg.Done()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	var h [8]byte
	nc.SetReadDeadline(time.Now().Add(headerTimeout))
	_, err := io.ReadFull(nc, h[:])
	nc.SetReadDeadline(time.Time{})
	l.mu.Lock()
	delete(l.hello, nc)
	closed := l.closed
	l.mu.Unlock()
	if err != nil || closed {
		nc.Close()
		return
	}
	if string(h[:4]) == "AMQP" && h[4] == 0 {
		l.rabbit.ServeConn(nc, h)
		return
	}
	if string(h[:4]) == "AMQP" && (h[4] == 0 || h[4] == 3) && h[5] == 1 && h[6] == 0 && h[7] == 0 {
		l.sb.ServeConn(nc, h)
		return
	}
	nc.Write(wire.ProtocolHeader[:])
	nc.Close()
}

// Close stops accepting, closes every connection and waits for them.
func (l *amqpListener) Close(ctx context.Context) error {
	l.mu.Lock()
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
