package difftest

import (
	amqp "github.com/rabbitmq/amqp091-go"
)

// What a queue does with a message given back again and again, and with
// more than one consumer (issue 31.6): quorum queues count returns in
// x-delivery-count and dead-letter past x-delivery-limit with reason
// delivery_limit; x-single-active-consumer sends everything to one
// consumer until it goes; x-queue-mode lazy changes where a classic queue
// keeps its messages, not what a client sees.

func redeliveryScenarios() []Scenario {
	return []Scenario{
		{Name: "RB12QuorumDeliveryLimitDeadLetters", Rules: []string{"RB-12"}, Run: rb12QuorumDeliveryLimitDeadLetters},
		{Name: "QuorumRedeliveryCountsReturns", Run: quorumRedeliveryCountsReturns},
		{Name: "QuorumDeliveryLimitWithoutDLXDrops", Run: quorumDeliveryLimitWithoutDLXDrops},
		{Name: "QuorumConsumerRedeliveryHeader", Run: quorumConsumerRedeliveryHeader},
		{Name: "SingleActiveConsumerTakesAll", Run: singleActiveConsumerTakesAll},
		{Name: "SingleActiveConsumerQuorum", Run: singleActiveConsumerQuorum},
		{Name: "LazyQueueModeDeliversAsDefault", Run: lazyQueueModeDeliversAsDefault},
	}
}

// returnTimes gets queue's head with a manual ack and gives it back with
// nack requeue, n times, recording each delivery's headers.
func returnTimes(ch *Ch, queue string, n int) {
	for range n {
		d, ok := ch.GetManual(queue)
		if !ok {
			return
		}
		ch.Nack(d.DeliveryTag, false, true)
	}
}

// rb12QuorumDeliveryLimitDeadLetters pins RB-12 for x-delivery-limit 2: the
// third return of a message is one too many, and it is dead-lettered with
// reason delivery_limit; each redelivery before carries x-delivery-count.
func rb12QuorumDeliveryLimitDeadLetters(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	declareQuorum(ch, q, amqp.Table{"x-delivery-limit": int32(2), "x-dead-letter-exchange": dlx})
	ch.Confirm()
	ch.Publish("", q, Msg{Body: "m1"})
	returnTimes(ch, q, 3)
	// (Not a passive declare: a quorum queue's count of consumers includes
	// basic.get's for a moment after it.)
	ch.Get(q)
	ch.GetArrived(dlq)
}

// quorumRedeliveryCountsReturns pins x-delivery-count without a limit: a
// nack with requeue, a reject with requeue and a channel closed with the
// message unacknowledged each count one return.
func quorumRedeliveryCountsReturns(s *S) {
	ch := s.Ch()
	q := s.Queue("q")
	declareQuorum(ch, q, nil)
	ch.Confirm()
	ch.Publish("", q, Msg{Body: "m1"})
	returnTimes(ch, q, 1)
	if d, ok := ch.GetManual(q); ok {
		ch.Reject(d.DeliveryTag, true)
	}
	other := s.Ch()
	other.GetManual(q)
	other.Close()
	ch.Get(q)
}

// quorumDeliveryLimitWithoutDLXDrops pins x-delivery-limit 0 without a
// dead-letter exchange: the first return drops the message.
func quorumDeliveryLimitWithoutDLXDrops(s *S) {
	ch := s.Ch()
	q := s.Queue("q")
	declareQuorum(ch, q, amqp.Table{"x-delivery-limit": int32(0)})
	ch.Confirm()
	ch.Publish("", q, Msg{Body: "m1"})
	ch.Publish("", q, Msg{Body: "m2"})
	returnTimes(ch, q, 1)
	ch.Get(q)
	ch.Get(q)
}

// quorumConsumerRedeliveryHeader pins x-delivery-count on deliveries to a
// consumer: none on the first, the count on a redelivery.
func quorumConsumerRedeliveryHeader(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	declareQuorum(ch, q, nil)
	ch.Confirm()
	ch.Publish("", q, Msg{Body: "m1"})
	c := ch.Consume(q, "c", COpts{})
	if d, ok := c.Next(); ok {
		ch.Nack(d.DeliveryTag, false, true)
	}
	if d, ok := c.Next(); ok {
		ch.Ack(d.DeliveryTag, false)
	}
}

// singleActiveConsumerTakesAll pins x-single-active-consumer on a classic
// queue: of two consumers the first gets every message; when it is
// cancelled with messages unacknowledged, they stay with its channel, and
// the second consumer gets what comes next.
func singleActiveConsumerTakesAll(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, amqp.Table{"x-single-active-consumer": true})
	first := ch.Consume(q, "first", COpts{})
	other := s.Ch()
	second := other.Consume(q, "second", COpts{AutoAck: true})
	for _, b := range []string{"m1", "m2", "m3"} {
		ch.Publish("", q, Msg{Body: b})
	}
	for range 3 {
		first.Next()
	}
	second.None()
	// The cancelled consumer's messages stay unacknowledged on its
	// channel: the second consumer, active now, gets only what comes next.
	first.Cancel()
	second.None()
	ch.Publish("", q, Msg{Body: "m4"})
	second.Next()
}

// singleActiveConsumerQuorum pins singleActiveConsumerTakesAll's behaviour
// on a quorum queue; when the first consumer's channel closes, its unacknowledged
// messages go to the second, with x-delivery-count.
func singleActiveConsumerQuorum(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	declareQuorum(ch, q, amqp.Table{"x-single-active-consumer": true})
	first := ch.Consume(q, "first", COpts{})
	other := s.Ch()
	second := other.Consume(q, "second", COpts{AutoAck: true})
	ch.Confirm()
	for _, b := range []string{"m1", "m2"} {
		ch.Publish("", q, Msg{Body: b})
	}
	for range 2 {
		first.Next()
	}
	second.None()
	first.Cancel()
	second.None()
	ch.Close()
	second.Next()
	second.Next()
}

// lazyQueueModeDeliversAsDefault pins x-queue-mode: lazy is taken and
// delivers as a default queue does; another mode is refused.
func lazyQueueModeDeliversAsDefault(s *S) {
	q, bad := s.Queue("q"), s.Queue("bad")
	ch := s.Ch()
	ch.Queue(q, amqp.Table{"x-queue-mode": "lazy"})
	ch.Publish("", q, Msg{Body: "m1"})
	ch.Publish("", q, Msg{Body: "m2"})
	ch.GetAll(q)
	ch.Queue(bad, amqp.Table{"x-queue-mode": "eager"})
}
