package difftest

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The RB-14 scenarios pin priority queues (x-max-priority): the order of
// delivery, by basic.get and to consumers, with requeues; and where expiry
// and the length limit take their messages from, which RabbitMQ 3.10 does
// at the head in delivery order, each priority's messages before the next
// lower one's.

func priorityScenarios() []Scenario {
	return []Scenario{
		{Name: "RB14GetOrderIssueExample", Rules: []string{"RB-14"}, Run: rb14GetOrderIssueExample},
		{Name: "RB14ConsumerPrefetchOrder", Rules: []string{"RB-14"}, Run: rb14ConsumerPrefetchOrder},
		{Name: "RB14RequeueKeepsPriority", Rules: []string{"RB-14", "RB-6"}, Run: rb14RequeueKeepsPriority},
		{Name: "RB14ExpiryAtTheHeadOfPriorities", Rules: []string{"RB-14", "RB-7"}, Run: rb14ExpiryAtTheHeadOfPriorities},
		{Name: "RB14QueueTTLDeadLettersHighestFirst", Rules: []string{"RB-14", "RB-1", "RB-9"}, Run: rb14QueueTTLDeadLettersHighestFirst},
		{Name: "RB14DeadLetterTakesNewQueuePriority", Rules: []string{"RB-14", "RB-9"}, Run: rb14DeadLetterTakesNewQueuePriority},
		{Name: "RB14MaxLengthDropHeadDropsHighest", Rules: []string{"RB-14", "RB-9"}, Run: rb14MaxLengthDropHeadDropsHighest},
		{Name: "RB14InvalidMaxPriority", Rules: []string{"RB-14", "RB-11"}, Run: rb14InvalidMaxPriority},
		{Name: "RB14MaxPriorityNotByPolicy", Rules: []string{"RB-14", "RB-10"}, Management: true, Run: rb14MaxPriorityNotByPolicy},
		{Name: "RB14ManagementQueueInfo", Rules: []string{"RB-14"}, Management: true, Run: rb14ManagementQueueInfo},
	}
}

// maxPriority is an x-max-priority argument table.
func maxPriority(n int32) amqp.Table { return amqp.Table{"x-max-priority": n} }

// rb14GetOrderIssueExample pins RB-14 with the issue's example: priorities
// 3, 6, 3, none, 10 and 200 published to a queue of x-max-priority 10 come
// out by basic.get as 10, 200 (above the maximum: counts as 10), 6, 3, 3,
// none (counts as 0), publish order within one priority.
func rb14GetOrderIssueExample(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, maxPriority(10))
	for _, m := range []Msg{{Body: "p3-a", Priority: 3}, {Body: "p6", Priority: 6}, {Body: "p3-b", Priority: 3},
		{Body: "none"}, {Body: "p10", Priority: 10}, {Body: "p200", Priority: 200}} {
		ch.Publish("", q, m)
	}
	s.Count(q)
	ch.GetAll(q)
}

// rb14ConsumerPrefetchOrder pins RB-14 for a consumer already waiting with
// a prefetch of 1: the first message goes to it at once; those that arrive
// while it is full go to it by priority as it acks.
func rb14ConsumerPrefetchOrder(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, maxPriority(9))
	ch.Qos(1)
	c := ch.Consume(q, "c1", COpts{})
	ch.Publish("", q, Msg{Body: "p1", Priority: 1})
	d, _ := c.Next()
	for _, m := range []Msg{{Body: "p2", Priority: 2}, {Body: "none"}, {Body: "p9", Priority: 9},
		{Body: "p5", Priority: 5}, {Body: "p9-b", Priority: 9}} {
		ch.Publish("", q, m)
	}
	for range 5 {
		ch.Ack(d.DeliveryTag, false)
		d, _ = c.Next()
	}
	ch.Ack(d.DeliveryTag, false)
	c.None()
}

// rb14RequeueKeepsPriority pins RB-14 with RB-6: a message requeued by
// basic.nack, basic.reject or its channel's close goes back among its own
// priority, before the messages of that priority published after it.
func rb14RequeueKeepsPriority(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, maxPriority(5))
	ch.Publish("", q, Msg{Body: "p5-a", Priority: 5})
	ch.Publish("", q, Msg{Body: "p2-a", Priority: 2})
	ch.Publish("", q, Msg{Body: "p5-b", Priority: 5})
	taker := s.Ch()
	a, _ := taker.GetManual(q)
	b, _ := taker.GetManual(q)
	ch.Publish("", q, Msg{Body: "p5-c", Priority: 5})
	ch.Publish("", q, Msg{Body: "p2-b", Priority: 2})
	taker.Nack(b.DeliveryTag, false, true)
	taker.Reject(a.DeliveryTag, true)
	other := s.Ch()
	other.GetManual(q)
	other.GetManual(q)
	other.GetManual(q)
	other.Close()
	ch.GetAll(q)
}

// rb14ExpiryAtTheHeadOfPriorities pins RB-14 with RB-7, where per-message
// expiry applies in a priority queue: at the head in delivery order. While
// the highest priority's head is live nothing expires, not even the
// expired heads of lower priorities; once it is taken, the expired
// messages now at the head go at once, priority after priority, down to
// the first live one.
func rb14ExpiryAtTheHeadOfPriorities(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, maxPriority(5))
	ch.Publish("", q, Msg{Body: "p1-short", Priority: 1, Expiration: "100"})
	ch.Publish("", q, Msg{Body: "p1-live", Priority: 1})
	ch.Publish("", q, Msg{Body: "p5-live", Priority: 5})
	ch.Publish("", q, Msg{Body: "p5-short", Priority: 5, Expiration: "100"})
	ch.Publish("", q, Msg{Body: "p3-short", Priority: 3, Expiration: "100"})
	s.Wait(expireWait)
	s.Count(q)
	ch.Get(q)
	s.Count(q)
	ch.GetAll(q)
	s.Count(q)
}

// rb14QueueTTLDeadLettersHighestFirst pins RB-14 with RB-1 and RB-9, the
// order of expiry under x-message-ttl in a priority queue: messages of one
// TTL run out together and are dead-lettered head first, highest priority
// first, which a plain dead-letter queue keeps.
func rb14QueueTTLDeadLettersHighestFirst(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, nil)
	args := withDLQ(ttl(shortTTL), dlq)
	args["x-max-priority"] = int32(5)
	ch.Queue(q, args)
	ch.Publish("", q, Msg{Body: "p1", Priority: 1})
	ch.Publish("", q, Msg{Body: "none"})
	ch.Publish("", q, Msg{Body: "p5", Priority: 5})
	ch.Publish("", q, Msg{Body: "p3", Priority: 3})
	s.Wait(expireWait)
	s.Count(q)
	ch.GetArrived(dlq)
	ch.GetAll(dlq)
}

// rb14DeadLetterTakesNewQueuePriority pins RB-14 with RB-9, dead-lettering
// into a priority queue: a dead letter keeps its priority property, which
// its new queue caps at its own maximum.
func rb14DeadLetterTakesNewQueuePriority(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, maxPriority(3))
	ch.Queue(q, withDLQ(nil, dlq))
	for _, m := range []Msg{{Body: "p2", Priority: 2}, {Body: "none"}, {Body: "p7", Priority: 7},
		{Body: "p3", Priority: 3}} {
		ch.Publish("", q, m)
		d, _ := ch.GetManual(q)
		ch.Reject(d.DeliveryTag, false)
	}
	ch.GetArrived(dlq)
	ch.GetAll(dlq)
}

// rb14MaxLengthDropHeadDropsHighest pins RB-14 with RB-9, x-max-length with
// drop-head in a priority queue: the message dropped (dead-lettered, reason
// maxlen) is the head in delivery order, of the highest priority.
func rb14MaxLengthDropHeadDropsHighest(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, nil)
	args := withDLQ(amqp.Table{"x-max-length": int32(2), "x-max-priority": int32(5)}, dlq)
	ch.Queue(q, args)
	ch.Publish("", q, Msg{Body: "p1-a", Priority: 1})
	ch.Publish("", q, Msg{Body: "p5", Priority: 5})
	ch.Publish("", q, Msg{Body: "p1-b", Priority: 1})
	ch.Publish("", q, Msg{Body: "p3", Priority: 3})
	s.Count(q)
	ch.GetArrived(dlq)
	ch.GetAll(dlq)
	ch.GetAll(q)
}

// rb14InvalidMaxPriority pins RB-14 with RB-11, queue.declare's checks of
// x-max-priority: its type and range, 0 and 255 accepted, and a redeclare
// with another value refused as inequivalent.
func rb14InvalidMaxPriority(s *S) {
	for i, v := range []any{int32(256), int32(-1), "5", 1.5, int32(0), int32(255), int64(1), uint8(7)} {
		q := s.Queue("q" + string(rune('a'+i)))
		ch := s.Ch()
		if ch.Queue(q, amqp.Table{"x-max-priority": v}) {
			ch.Close()
		}
	}
	q := s.Queue("redeclare")
	ch := s.Ch()
	ch.Queue(q, maxPriority(5))
	ch.Queue(q, maxPriority(6))
	ch = s.Ch()
	ch.Queue(q, nil)
	ch = s.Ch()
	ch.Queue(q, amqp.Table{"x-max-priority": int64(5)})
}

// rb14MaxPriorityNotByPolicy pins RB-14 with RB-10: a policy cannot make a
// priority queue in 3.10: max-priority is no policy key.
func rb14MaxPriorityNotByPolicy(s *S) {
	q := s.Queue("q")
	pol := s.Policy("p")
	s.PutPolicy(pol, Policy{Pattern: "^" + q + "$", ApplyTo: "queues", Definition: map[string]any{"max-priority": 5}})
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "p1", Priority: 1})
	ch.Publish("", q, Msg{Body: "p5", Priority: 5})
	ch.GetAll(q)
}

// rb14ManagementQueueInfo pins RB-14 in what GET /api/queues shows of a
// priority queue: its arguments, its counts and the backing queue's ready
// messages by priority, an unacknowledged one counted in none of them.
// RabbitMQ emits a queue's figures every 5 s: the scenario waits for the
// first emission after its publishes (lapse's clock only moves).
func rb14ManagementQueueInfo(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, maxPriority(3))
	for _, m := range []Msg{{Body: "p1", Priority: 1}, {Body: "p3", Priority: 3}, {Body: "p9", Priority: 9},
		{Body: "none"}, {Body: "p1-b", Priority: 1}} {
		ch.Publish("", q, m)
	}
	ch.GetManual(q)
	s.Wait(statsWait)
	s.QueueInfo(q, "arguments", "messages", "messages_ready", "messages_unacknowledged",
		"backing_queue_status.len", "backing_queue_status.priority_lengths")
}

// statsWait outlasts RabbitMQ's 5 s statistics emission interval.
const statsWait = 6 * time.Second
