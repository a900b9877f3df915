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

// listenerFlags are the listeners of c, in the order of the flags.
func (c Config) listenerFlags() []listenerFlag {
	return []listenerFlag{
		{"AMQP", "amqp-addr", c.AMQPAddr},
		{"AMQPS", "amqps-addr", c.AMQPSAddr},
		{"Cosmos DB", "cosmos-addr", c.CosmosAddr},
		{"Service Bus administration", "servicebus-admin-addr", c.ServiceBusAdminAddr},
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

// checkListen binds the address of every listener of c at once, then
// releases them all, so that lapse reports every address it cannot have
// before it starts anything, rather than the first: the errors are
// *ListenError, joined. Two listeners given the same address are reported
// too. Addresses with port 0 are skipped: any free port will do.
func checkListen(c Config) error {
	var errs []error
	for _, l := range c.listenerFlags() {
		if _, port, err := net.SplitHostPort(l.addr); err == nil && port == "0" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			errs = append(errs, &ListenError{Name: l.name, Flag: l.flag, Addr: l.addr, Err: err})
			continue
		}
		defer ln.Close()
	}
	return errors.Join(errs...)
}
