package server

import (
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// headerRoute is where the AMQP port sends a connection after its 8-byte
// protocol header.
type headerRoute int

const (
	// routeRefuse answers the header in reply, then closes.
	routeRefuse headerRoute = iota
	// routeRabbitMQ serves AMQP 0-9-1 (RabbitMQ front-end).
	routeRabbitMQ
	// routeServiceBus serves AMQP 1.0, with or without SASL (Service Bus
	// front-end).
	routeServiceBus
)

// headerTLS is AMQP 1.0's header asking for an in-band TLS upgrade
// (§5.2.1), which neither Service Bus nor RabbitMQ offers.
var headerTLS = [8]byte{'A', 'M', 'Q', 'P', 2, 1, 0, 0}

// classifyHeader says where a connection that opened with protocol header
// h goes, and for a refusal the header to answer with. The answers are
// RabbitMQ 3.10's (with its AMQP 1.0 plugin) as measured against Debian's
// rabbitmq-server:
//
//   - "AMQP" 0 0 9 1 is AMQP 0-9-1; "AMQP" 1 1 0 9, AMQP 0-9's header,
//     is served as 0-9-1 too (RabbitMQ's connection.start says 0-9 to both).
//   - "AMQP" 0 1 0 0 is AMQP 1.0 and "AMQP" 3 1 0 0 AMQP 1.0 with SASL.
//   - "AMQP" 2 1 0 0, a TLS upgrade, gets the SASL header and a close.
//   - AMQP 0-8's headers ("AMQP" 1 1 8 0 and 1 1 9 1), which RabbitMQ still
//     serves with its 0-8 framing, and anything else get the 0-9-1
//     header and a close, which tells a client what lapse speaks.
//
// The header handed on for routeRabbitMQ is always 0-9-1's.
func classifyHeader(h [8]byte) (route headerRoute, handOn [8]byte) {
	switch h {
	case wire.ProtocolHeader, [8]byte{'A', 'M', 'Q', 'P', 1, 1, 0, 9}:
		return routeRabbitMQ, wire.ProtocolHeader
	case amqp.HeaderAMQP, amqp.HeaderSASL:
		return routeServiceBus, h
	case headerTLS:
		return routeRefuse, amqp.HeaderSASL
	}
	return routeRefuse, wire.ProtocolHeader
}
