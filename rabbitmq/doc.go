// Package rabbitmq is lapse's RabbitMQ front-end: an AMQP 0-9-1 server that
// RabbitMQ clients cannot tell from RabbitMQ 3.10, exchanges and routing,
// dead-lettering as RabbitMQ writes it, and the management HTTP API. Its
// queues are core entities whose policies come from the adapters package,
// so every expiry rule (RB-1..RB-15; a delayed exchange's held
// messages are its entity's items) is the engine's; everything it keeps
// (queues, exchanges, bindings, policies, messages) goes through core.
//
// rabbitmq/wire is its codec.
//
// # Concurrency
//
// Each connection has one goroutine reading frames and handling methods in
// order, and one writing; each queue with consumers has one goroutine
// handing its messages to them. The topology (vhosts, exchanges, bindings,
// queues) is under one RWMutex that is never held while calling the engine,
// because the engine calls back into it (dead-lettering routes through the
// dead-letter exchange inside the engine's critical section).
package rabbitmq
