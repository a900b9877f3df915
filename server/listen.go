package server

import (
	"errors"
	"fmt"
	"net"
	"os"
)

// listenerFlag is one listener of lapse: what it serves, the flag of its
// address and the address.
type listenerFlag struct {
	name, flag, addr string
}

// listenerFlags are the listeners of c, in the order of the flags and of
// the port numbers (portAMQP...).
func (c Config) listenerFlags() []listenerFlag {
	return []listenerFlag{
		{"AMQP", "amqp-addr", c.AMQPAddr},
		{"AMQPS", "amqps-addr", c.AMQPSAddr},
		{"Cosmos DB", "cosmos-addr", c.CosmosAddr},
		{"Service Bus administration", "servicebus-admin-addr", c.ServiceBusAdminAddr},
		{"Service Bus WebSockets", "servicebus-websocket-addr", c.ServiceBusWebSocketAddr},
		{"RabbitMQ management", "rabbitmq-management-addr", c.RabbitMQManagementAddr},
		{"control API", "control-addr", c.ControlAddr},
	}
}

// ListenError is a listener that cannot bind its address.
type ListenError struct {
	// Name is what the listener serves ("AMQP"), Flag the flag of its
	// address without dashes, Addr the address.
	Name, Flag, Addr string
	// Err is why, as net.Listen said.
	Err error
}

// Error is one line: "cannot listen on :5672 (AMQP, --amqp-addr): address
// already in use".
func (e *ListenError) Error() string {
	reason := e.Err
	var sys *os.SyscallError
	var op *net.OpError
	switch {
	case errors.As(e.Err, &sys):
		reason = sys.Err
	case errors.As(e.Err, &op):
		reason = op.Err
	}
	return fmt.Sprintf("cannot listen on %s (%s, --%s): %v", e.Addr, e.Name, e.Flag, reason)
}

func (e *ListenError) Unwrap() error { return e.Err }

// The listeners of lapse, numbered in the order of listenerFlags.
const (
	portAMQP = iota
	portAMQPS
	portCosmos
	portServiceBusAdmin
	portServiceBusWebSocket
	portRabbitMQManagement
	portControl
	numPorts
)

// ports are lapse's bound listeners, by number. Each is nil once its
// server has it (take), which then closes it.
type ports [numPorts]net.Listener

// listen binds the address of every listener of c, each once, and keeps
// them bound for the servers, which take them as they start: a port is
// never released between a check and the server's bind, where another
// process could take it (issue 25.7). It binds them all before lapse
// opens anything, so that it reports every address it cannot have rather
// than the first: the errors are *ListenError, joined, and none stays
// bound. Two listeners given the same address are reported too.
func listen(c Config) (*ports, error) {
	p := &ports{}
	var errs []error
	for i, l := range c.listenerFlags() {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			errs = append(errs, &ListenError{Name: l.name, Flag: l.flag, Addr: l.addr, Err: err})
			continue
		}
		p[i] = ln
	}
	if len(errs) > 0 {
		p.close()
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// take hands listener i to its server, which closes it from then on.
func (p *ports) take(i int) net.Listener {
	ln := p[i]
	p[i] = nil
	return ln
}

// serve hands listener i to s, an HTTP server, and closes it if s cannot
// serve it.
func (p *ports) serve(s interface{ Serve(net.Listener) error }, i int) error {
	ln := p.take(i)
	err := s.Serve(ln)
	if err != nil {
		ln.Close()
	}
	return err
}

// close closes the listeners no server has taken; safe on nil p.
func (p *ports) close() {
	if p == nil {
		return
	}
	for i, ln := range p {
		if ln != nil {
			ln.Close()
			p[i] = nil
		}
	}
}
