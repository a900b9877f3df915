package difftest

import (
	amqp "github.com/rabbitmq/amqp091-go"
)

// The error scenarios pin RabbitMQ's channel and connection errors: their
// codes and reply texts, and that the other channels live on.

func errorScenarios() []Scenario {
	return []Scenario{
		{Name: "AckUnknownDeliveryTag", Run: ackUnknownDeliveryTag},
		{Name: "DoubleAck", Run: doubleAck},
		{Name: "AckAfterNoAckGet", Run: ackAfterNoAckGet},
		{Name: "DeleteQueueIfUnused", Run: deleteQueueIfUnused},
		{Name: "DeleteQueueIfEmpty", Run: deleteQueueIfEmpty},
		{Name: "DeleteExchangeIfUnused", Run: deleteExchangeIfUnused},
		{Name: "DeleteMissingQueueAndExchange", Run: deleteMissingQueueAndExchange},
		{Name: "ExclusiveQueueOtherConnection", Run: exclusiveQueueOtherConnection},
		{Name: "ExclusiveConsumerLocksQueue", Run: exclusiveConsumerLocksQueue},
		{Name: "PassiveDeclareMissing", Run: passiveDeclareMissing},
		{Name: "ExchangeDeclareUnknownType", Run: exchangeDeclareUnknownType},
		{Name: "ExchangeRedeclareInequivalent", Run: exchangeRedeclareInequivalent},
		{Name: "QueueRedeclareInequivalentFlags", Run: queueRedeclareInequivalentFlags},
		{Name: "ReservedAmqNames", Run: reservedAmqNames},
		{Name: "MissingQueueOrExchangeInMethods", Run: missingQueueOrExchangeInMethods},
		{Name: "DuplicateConsumerTag", Run: duplicateConsumerTag},
		{Name: "ChannelFlowInactiveRefused", Run: channelFlowInactiveRefused},
		{Name: "PublishImmediateRefused", Run: publishImmediateRefused},
		{Name: "QosPrefetchSizeRefused", Run: qosPrefetchSizeRefused},
	}
}

// channelFlowInactiveRefused pins channel.flow: active=true is answered,
// active=false is 540 NOT_IMPLEMENTED - active=false for the connection.
func channelFlowInactiveRefused(s *S) {
	ch := s.Ch()
	ch.result("channel.flow active=true", ch.ch.Flow(true), "ok")
	ch.result("channel.flow active=false", ch.ch.Flow(false), "ok")
}

// publishImmediateRefused pins basic.publish with immediate=true: 540
// NOT_IMPLEMENTED - immediate=true for the connection.
func publishImmediateRefused(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.async("basic.publish immediate", func() error {
		return ch.ch.Publish("", q, false, true, amqp.Publishing{Body: []byte("m1")})
	})
}

// qosPrefetchSizeRefused pins basic.qos with a prefetch size: 540
// NOT_IMPLEMENTED - prefetch_size!=0 (N) for the connection.
func qosPrefetchSizeRefused(s *S) {
	ch := s.Ch()
	ch.result("basic.qos prefetch-size=1000", ch.ch.Qos(10, 1000, false), "ok")
}

// ackUnknownDeliveryTag pins basic.ack of a tag never delivered: 406
// PRECONDITION_FAILED - unknown delivery tag N closes the channel only.
func ackUnknownDeliveryTag(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Ack(99, false)
	ch = s.Ch()
	ch.Nack(7, false, true)
	ch = s.Ch()
	ch.Reject(3, false)
	s.Count(q)
}

// doubleAck pins acking the same delivery twice: the second ack is an unknown
// delivery tag.
func doubleAck(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := ch.GetManual(q)
	ch.Ack(d.DeliveryTag, false)
	ch.Ack(d.DeliveryTag, false)
	s.Count(q)
}

// ackAfterNoAckGet pins acking a message taken with no-ack: unknown delivery
// tag too.
func ackAfterNoAckGet(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := ch.Get(q)
	ch.Ack(d.DeliveryTag, false)
}

// deleteQueueIfUnused pins queue.delete if-unused on a queue with a consumer:
// 406 PRECONDITION_FAILED - queue '...' in vhost '/' in use.
func deleteQueueIfUnused(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	c := s.Ch().Consume(q, "c1", COpts{})
	s.Ch().DeleteQueue(q, true, false)
	c.Cancel()
	s.Ch().DeleteQueue(q, true, false)
	s.Count(q)
}

// deleteQueueIfEmpty pins queue.delete if-empty on a queue with messages:
// 406 PRECONDITION_FAILED - queue '...' in vhost '/' not empty.
func deleteQueueIfEmpty(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	s.Ch().DeleteQueue(q, false, true)
	ch.Purge(q)
	s.Ch().DeleteQueue(q, false, true)
	s.Count(q)
}

// deleteExchangeIfUnused pins exchange.delete if-unused on an exchange with a
// binding: 406 PRECONDITION_FAILED - exchange '...' in vhost '/' in use.
func deleteExchangeIfUnused(s *S) {
	x, q := s.Exchange("x"), s.Queue("q")
	ch := s.Ch()
	ch.Exchange(x, "direct")
	ch.Queue(q, nil)
	ch.Bind(q, "k", x, nil)
	s.Ch().DeleteExchange(x, true)
	ch.Unbind(q, "k", x, nil)
	s.Ch().DeleteExchange(x, true)
	s.Ch().PassiveExchange(x, "direct")
}

// deleteMissingQueueAndExchange pins that deleting a queue or an exchange
// that does not exist succeeds.
func deleteMissingQueueAndExchange(s *S) {
	ch := s.Ch()
	ch.DeleteQueue(s.Name("missing"), false, false)
	ch.DeleteExchange(s.Name("missing"), false)
	ch.DeleteQueue(s.Name("missing"), true, true)
}

// exclusiveQueueOtherConnection pins exclusive queues: another connection may
// not declare, use or delete one: 405 RESOURCE_LOCKED with RabbitMQ's text;
// the owner's close deletes it.
func exclusiveQueueOtherConnection(s *S) {
	q := s.Queue("q")
	owner := s.Conn()
	owner.Ch().Declare(q, QOpts{Exclusive: true})
	other := s.Conn()
	other.Ch().Declare(q, QOpts{Exclusive: true})
	other.Ch().Declare(q, QOpts{})
	other.Ch().Passive(q)
	other.Ch().Consume(q, "c1", COpts{})
	other.Ch().Get(q)
	other.Ch().DeleteQueue(q, false, false)
	other.Ch().Purge(q)
	other.Ch().Publish("", q, Msg{Body: "m1"})
	owner.Ch().Get(q)
	owner.Close()
	other.Ch().Passive(q)
}

// exclusiveConsumerLocksQueue pins exclusive consumers: a second consumer is
// refused with 403 ACCESS_REFUSED, and an exclusive one with consumers present too.
func exclusiveConsumerLocksQueue(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Consume(q, "c1", COpts{Exclusive: true})
	s.Ch().Consume(q, "c2", COpts{})
	q2 := s.Queue("q2")
	ch.Queue(q2, nil)
	ch.Consume(q2, "c3", COpts{})
	s.Ch().Consume(q2, "c4", COpts{Exclusive: true})
}

// passiveDeclareMissing pins passive declares of what does not exist: 404
// NOT_FOUND - no queue '...' in vhost '/' (and no exchange).
func passiveDeclareMissing(s *S) {
	s.Ch().Passive(s.Name("missing"))
	s.Ch().PassiveExchange(s.Name("missing"), "direct")
}

// exchangeDeclareUnknownType pins exchange.declare with an unknown type: a
// connection error, 503 COMMAND_INVALID - unknown exchange type '...'.
func exchangeDeclareUnknownType(s *S) {
	x := s.Exchange("x")
	conn := s.Conn()
	conn.Ch().Exchange(x, "no-such-type")
	s.Ch().PassiveExchange(x, "direct")
}

// exchangeRedeclareInequivalent pins exchange redeclares: another type or
// durability is 406 PRECONDITION_FAILED - inequivalent arg ...
func exchangeRedeclareInequivalent(s *S) {
	x := s.Exchange("x")
	s.Ch().Exchange(x, "direct")
	s.Ch().Exchange(x, "direct")
	s.Ch().Exchange(x, "fanout")
	s.Ch().DeclareExchange(x, "direct", XOpts{Durable: true})
	s.Ch().DeclareExchange(x, "direct", XOpts{AutoDelete: true})
	s.Ch().DeclareExchange(x, "direct", XOpts{Args: amqp.Table{"alternate-exchange": "ae"}})
}

// queueRedeclareInequivalentFlags pins queue redeclares with other flags:
// 406 PRECONDITION_FAILED - inequivalent arg 'durable' / 'auto_delete' ...
func queueRedeclareInequivalentFlags(s *S) {
	q := s.Queue("q")
	s.Ch().Declare(q, QOpts{})
	s.Ch().Declare(q, QOpts{Durable: true})
	s.Ch().Declare(q, QOpts{AutoDelete: true})
	s.Ch().Declare(q, QOpts{})
}

// reservedAmqNames pins the amq. prefix: declaring a new queue or exchange
// named amq.* is 403 ACCESS_REFUSED; redeclaring a predeclared amq. exchange
// is checked for equivalence like any other (amq.direct is durable), and a
// passive declare is not refused for the name.
func reservedAmqNames(s *S) {
	s.Ch().Queue("amq.d.reserved", nil)
	s.Ch().Exchange("amq.d.reserved", "direct")
	s.Ch().Exchange("amq.direct", "direct")
	s.Ch().DeclareExchange("amq.direct", "direct", XOpts{Durable: true})
	s.Ch().DeclareExchange("amq.d.reserved", "direct", XOpts{Durable: true})
	s.Ch().PassiveExchange("amq.direct", "direct")
	s.Ch().Passive("amq.d.reserved")
}

// missingQueueOrExchangeInMethods pins 404 NOT_FOUND in methods naming what
// does not exist: bind, consume, get, purge.
func missingQueueOrExchangeInMethods(s *S) {
	q, x := s.Queue("q"), s.Exchange("x")
	s.Ch().Queue(q, nil)
	s.Ch().Exchange(x, "direct")
	s.Ch().Bind(q, "k", s.Name("missing-x"), nil)
	s.Ch().Bind(s.Name("missing-q"), "k", x, nil)
	s.Ch().Consume(s.Name("missing-q"), "c1", COpts{})
	s.Ch().Get(s.Name("missing-q"))
	s.Ch().Purge(s.Name("missing-q"))
	s.Ch().BindExchange(x, "k", s.Name("missing-x"), nil)
}

// duplicateConsumerTag pins a consumer tag used twice on one channel: 530
// NOT_ALLOWED - attempt to reuse consumer tag '...', a connection error.
func duplicateConsumerTag(s *S) {
	q := s.Queue("q")
	conn := s.Conn()
	ch := conn.Ch()
	ch.Queue(q, nil)
	ch.Consume(q, "c1", COpts{})
	ch.Consume(q, "c1", COpts{})
	s.Count(q)
}
