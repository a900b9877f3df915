package difftest

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func xDeathScenarios() []Scenario {
	return []Scenario{
		{Name: "RB12XDeathRejectedKeepsOriginalExpiration", Rules: []string{"RB-9", "RB-12"}, Run: rb12XDeathRejectedKeepsOriginalExpiration},
		{Name: "RB12XDeathTwoQueuesNewestFirst", Rules: []string{"RB-12"}, Run: rb12XDeathTwoQueuesNewestFirst},
		{Name: "RB12XDeathCountInRejectExpireLoop", Rules: []string{"RB-12"}, Run: rb12XDeathCountInRejectExpireLoop},
		{Name: "RB12XDeathCountInRejectSelfLoop", Rules: []string{"RB-12"}, Run: rb12XDeathCountInRejectSelfLoop},
		{Name: "RB12XFirstDeathKeepsFirst", Rules: []string{"RB-9", "RB-12"}, Run: rb12XFirstDeathKeepsFirst},
		{Name: "RB12CCAndBCCWithoutRoutingKey", Rules: []string{"RB-12"}, Run: rb12CCAndBCCWithoutRoutingKey},
		{Name: "RB12CCAndBCCWithRoutingKey", Rules: []string{"RB-12"}, Run: rb12CCAndBCCWithRoutingKey},
		{Name: "RB12ExpireCycleDropped", Rules: []string{"RB-12"}, Run: rb12ExpireCycleDropped},
		{Name: "RB12SelfDeadLetterDefaultExchangeDropped", Rules: []string{"RB-12"}, Run: rb12SelfDeadLetterDefaultExchangeDropped},
	}
}

// deadLetterTo is the argument table that dead-letters through the default
// exchange to queue q, plus extra arguments.
func deadLetterTo(q string, extra amqp.Table) amqp.Table { return withDLQ(extra, q) }

// rb12XDeathRejectedKeepsOriginalExpiration pins RB-12 (and RB-9): the first
// death writes x-death (count, reason, queue, time, exchange, routing-keys,
// original-expiration) and x-first-death-*; a rejected message with an
// expiration also loses it and gets original-expiration.
func rb12XDeathRejectedKeepsOriginalExpiration(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	x, q := s.Exchange("x"), s.Queue("q")
	ch.Exchange(x, "topic")
	ch.Queue(q, amqp.Table{"x-dead-letter-exchange": dlx})
	ch.Bind(q, "a.*", x, nil)
	ch.Publish(x, "a.b", Msg{Body: "m1", Expiration: longTTL, Headers: amqp.Table{"app": "lapse"}})
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, false)
	ch.GetArrived(dlq)
}

// rb12XDeathTwoQueuesNewestFirst pins RB-12: a message that died in two
// queues carries two x-death entries, newest first; x-first-death-* stay
// those of the first; original-expiration only where it had one.
func rb12XDeathTwoQueuesNewestFirst(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q1, q2 := s.Queue("q1"), s.Queue("q2")
	ch.Queue(q2, amqp.Table{"x-message-ttl": int32(200), "x-dead-letter-exchange": dlx})
	ch.Queue(q1, deadLetterTo(q2, nil))
	ch.Publish("", q1, Msg{Body: "m1", Expiration: "200"})
	s.Wait(1200 * time.Millisecond)
	s.Count(q1)
	s.Count(q2)
	ch.GetArrived(dlq)
}

// rb12XDeathCountInRejectExpireLoop pins RB-12 (rabbitmq.md A3): in a
// reject→expire loop between two queues each {queue, reason} entry counts up
// (1, then 2) and moves to the front; a cycle with a rejection is not dropped.
func rb12XDeathCountInRejectExpireLoop(s *S) {
	a, b := s.Queue("a"), s.Queue("b")
	ch := s.Ch()
	ch.Queue(a, deadLetterTo(b, nil))
	ch.Queue(b, deadLetterTo(a, amqp.Table{"x-message-ttl": int32(200)}))
	ch.Publish("", a, Msg{Body: "m1"})
	for range 2 {
		d, _ := ch.GetManual(a)
		ch.Reject(d.DeliveryTag, false)
		s.Wait(700 * time.Millisecond)
		s.Count(b)
	}
	ch.Get(a)
}

// rb12XDeathCountInRejectSelfLoop pins RB-12: a queue dead-lettering to itself
// on reject keeps the message, counting the rejections in one x-death entry.
func rb12XDeathCountInRejectSelfLoop(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, deadLetterTo(q, nil))
	ch.Publish("", q, Msg{Body: "m1"})
	for range 3 {
		d, _ := ch.GetManual(q)
		ch.Reject(d.DeliveryTag, false)
	}
	ch.Get(q)
}

// rb12XFirstDeathKeepsFirst pins RB-12 and RB-9: rejected in q1, then dropped
// by q2's x-max-length (reason maxlen): x-first-death-* name q1 and rejected.
func rb12XFirstDeathKeepsFirst(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q1, q2 := s.Queue("q1"), s.Queue("q2")
	ch.Queue(q2, amqp.Table{"x-max-length": int32(1), "x-dead-letter-exchange": dlx})
	ch.Queue(q1, deadLetterTo(q2, nil))
	ch.Publish("", q1, Msg{Body: "m1"})
	d, _ := ch.GetManual(q1)
	ch.Reject(d.DeliveryTag, false)
	ch.Publish("", q2, Msg{Body: "m2"})
	ch.GetArrived(dlq)
	ch.Get(q2)
}

// ccBCC publishes one message with CC and BCC headers to a queue that expires
// it into a direct dead-letter exchange with queues bound to the routing key,
// the CC key, the BCC key and "dead"; dlrk is the queue's
// x-dead-letter-routing-key ("" for none). It shows every dead-letter queue.
func ccBCC(s *S, dlrk string) {
	ch := s.Ch()
	x, dlx, q := s.Exchange("x"), s.Exchange("dlx"), s.Queue("q")
	ch.Exchange(x, "direct")
	ch.Exchange(dlx, "direct")
	args := amqp.Table{"x-message-ttl": int32(shortTTL), "x-dead-letter-exchange": dlx}
	if dlrk != "" {
		args["x-dead-letter-routing-key"] = dlrk
	}
	ch.Queue(q, args)
	ch.Bind(q, "k1", x, nil)
	var dlqs []string
	for _, key := range []string{"k1", "k2", "k3", "dead"} {
		dq := s.Queue("dl-" + key)
		dlqs = append(dlqs, dq)
		ch.Queue(dq, nil)
		ch.Bind(dq, key, dlx, nil)
	}
	ch.Publish(x, "k1", Msg{Body: "m1", Headers: amqp.Table{"CC": []any{"k2"}, "BCC": []any{"k3"}}})
	s.Count(q)
	s.Wait(expireWait)
	for _, dq := range dlqs {
		ch.GetAll(dq)
	}
}

// rb12CCAndBCCWithoutRoutingKey pins RB-12: without a dead-letter routing key
// the message is re-routed by its routing key and its CC and BCC keys; the
// BCC header is gone and x-death routing-keys lists the key and CC keys.
func rb12CCAndBCCWithoutRoutingKey(s *S) { ccBCC(s, "") }

// rb12CCAndBCCWithRoutingKey pins RB-12: with a dead-letter routing key the
// message is re-routed by that key alone and loses its CC header.
func rb12CCAndBCCWithRoutingKey(s *S) { ccBCC(s, "dead") }

// rb12ExpireCycleDropped pins RB-12 (rabbitmq.md A3): A expires into B, B
// expires back into A; A is already in x-death with no rejection on the
// cycle, so the message is dropped after one lap.
func rb12ExpireCycleDropped(s *S) {
	a, b := s.Queue("a"), s.Queue("b")
	ch := s.Ch()
	ch.Queue(a, deadLetterTo(b, amqp.Table{"x-message-ttl": int32(200)}))
	ch.Queue(b, deadLetterTo(a, amqp.Table{"x-message-ttl": int32(800)}))
	ch.Publish("", a, Msg{Body: "m1"})
	s.Wait(500 * time.Millisecond)
	s.Count(a)
	s.Count(b)
	s.Wait(1200 * time.Millisecond)
	s.Count(a)
	s.Count(b)
}

// rb12SelfDeadLetterDefaultExchangeDropped pins RB-12: a queue whose
// dead-letter exchange is the default exchange and that has no dead-letter
// routing key would get its expired message back: a cycle, dropped.
func rb12SelfDeadLetterDefaultExchangeDropped(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, amqp.Table{"x-message-ttl": int32(shortTTL), "x-dead-letter-exchange": ""})
	ch.Publish("", q, Msg{Body: "m1"})
	s.Wait(expireWait)
	s.Count(q)
	ch.Get(q)
}
