package difftest

import (
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// QOpts are queue.declare's flags and arguments.
type QOpts struct {
	Durable, AutoDelete, Exclusive bool
	Args                           amqp.Table
}

// Declare records a queue.declare and its declare-ok (the queue's name, which
// the broker picks when name is "", and its counts) or error. It returns the
// queue's name and whether the declare succeeded.
func (ch *Ch) Declare(name string, o QOpts) (string, bool) {
	ch.s.tb.Helper()
	op := fmt.Sprintf("queue.declare %q%s%s", name,
		flags("durable", o.Durable, "auto-delete", o.AutoDelete, "exclusive", o.Exclusive), argsSuffix(o.Args))
	ch.live(op)
	q, err := ch.ch.QueueDeclare(name, o.Durable, o.AutoDelete, o.Exclusive, false, o.Args)
	ok := ch.result(op, err, fmt.Sprintf("ok name=%q messages=%d consumers=%d", q.Name, q.Messages, q.Consumers))
	return q.Name, ok
}

// Queue declares a non-durable queue with args; see Declare.
func (ch *Ch) Queue(name string, args amqp.Table) bool {
	ch.s.tb.Helper()
	_, ok := ch.Declare(name, QOpts{Args: args})
	return ok
}

// Passive records a passive queue.declare: the counts, or the error.
func (ch *Ch) Passive(name string) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("queue.declare passive %q", name)
	ch.live(op)
	q, err := ch.ch.QueueDeclarePassive(name, false, false, false, false, nil)
	return ch.result(op, err, fmt.Sprintf("messages=%d consumers=%d", q.Messages, q.Consumers))
}

// Bind records a queue.bind.
func (ch *Ch) Bind(queue, key, exchange string, args amqp.Table) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("queue.bind %q to %q rk=%q%s", queue, exchange, key, argsSuffix(args))
	ch.live(op)
	return ch.result(op, ch.ch.QueueBind(queue, key, exchange, false, args), "ok")
}

// Unbind records a queue.unbind.
func (ch *Ch) Unbind(queue, key, exchange string, args amqp.Table) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("queue.unbind %q from %q rk=%q%s", queue, exchange, key, argsSuffix(args))
	ch.live(op)
	return ch.result(op, ch.ch.QueueUnbind(queue, key, exchange, args), "ok")
}

// Purge records a queue.purge and the count it reported.
func (ch *Ch) Purge(queue string) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("queue.purge %q", queue)
	ch.live(op)
	n, err := ch.ch.QueuePurge(queue, false)
	return ch.result(op, err, fmt.Sprintf("ok messages=%d", n))
}

// DeleteQueue records a queue.delete and the count it reported.
func (ch *Ch) DeleteQueue(queue string, ifUnused, ifEmpty bool) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("queue.delete %q%s", queue, flags("if-unused", ifUnused, "if-empty", ifEmpty))
	ch.live(op)
	n, err := ch.ch.QueueDelete(queue, ifUnused, ifEmpty, false)
	return ch.result(op, err, fmt.Sprintf("ok messages=%d", n))
}

// XOpts are exchange.declare's flags and arguments.
type XOpts struct {
	Durable, AutoDelete, Internal bool
	Args                          amqp.Table
}

// DeclareExchange records an exchange.declare.
func (ch *Ch) DeclareExchange(name, kind string, o XOpts) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("exchange.declare %q type=%q%s%s", name, kind,
		flags("durable", o.Durable, "auto-delete", o.AutoDelete, "internal", o.Internal), argsSuffix(o.Args))
	ch.live(op)
	return ch.result(op, ch.ch.ExchangeDeclare(name, kind, o.Durable, o.AutoDelete, o.Internal, false, o.Args), "ok")
}

// Exchange declares a non-durable exchange of kind; see DeclareExchange.
func (ch *Ch) Exchange(name, kind string) bool {
	ch.s.tb.Helper()
	return ch.DeclareExchange(name, kind, XOpts{})
}

// PassiveExchange records a passive exchange.declare.
func (ch *Ch) PassiveExchange(name, kind string) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("exchange.declare passive %q type=%q", name, kind)
	ch.live(op)
	return ch.result(op, ch.ch.ExchangeDeclarePassive(name, kind, false, false, false, false, nil), "ok")
}

// BindExchange records an exchange.bind of destination to source.
func (ch *Ch) BindExchange(destination, key, source string, args amqp.Table) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("exchange.bind %q to %q rk=%q%s", destination, source, key, argsSuffix(args))
	ch.live(op)
	return ch.result(op, ch.ch.ExchangeBind(destination, key, source, false, args), "ok")
}

// UnbindExchange records an exchange.unbind.
func (ch *Ch) UnbindExchange(destination, key, source string, args amqp.Table) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("exchange.unbind %q from %q rk=%q%s", destination, source, key, argsSuffix(args))
	ch.live(op)
	return ch.result(op, ch.ch.ExchangeUnbind(destination, key, source, false, args), "ok")
}

// DeleteExchange records an exchange.delete.
func (ch *Ch) DeleteExchange(name string, ifUnused bool) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("exchange.delete %q%s", name, flags("if-unused", ifUnused))
	ch.live(op)
	return ch.result(op, ch.ch.ExchangeDelete(name, ifUnused, false), "ok")
}
