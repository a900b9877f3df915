package difftest

import (
	amqp "github.com/rabbitmq/amqp091-go"
)

func deadLetterScenarios() []Scenario {
	return []Scenario{
		{Name: "RB9ExpiredDeadLetteredThroughFanout", Rules: []string{"RB-9", "RB-12"}, Run: rb9ExpiredDeadLetteredThroughFanout},
		{Name: "RB9RejectedDeadLettered", Rules: []string{"RB-9", "RB-12"}, Run: rb9RejectedDeadLettered},
		{Name: "RB9NackMultipleDeadLettered", Rules: []string{"RB-9", "RB-12"}, Run: rb9NackMultipleDeadLettered},
		{Name: "RB9RequeueIsNotDeadLettering", Rules: []string{"RB-9"}, Run: rb9RequeueIsNotDeadLettering},
		{Name: "RB9MaxLengthDropHeadDeadLetters", Rules: []string{"RB-9", "RB-12"}, Run: rb9MaxLengthDropHeadDeadLetters},
		{Name: "RB9MaxLengthRejectPublishNacks", Rules: []string{"RB-9"}, Run: rb9MaxLengthRejectPublishNacks},
		{Name: "RB9MaxLengthRejectPublishDLX", Rules: []string{"RB-9"}, Run: rb9MaxLengthRejectPublishDLX},
		{Name: "RB9DeadLetterRoutingKeyReplacesKey", Rules: []string{"RB-9", "RB-12"}, Run: rb9DeadLetterRoutingKeyReplacesKey},
		{Name: "RB9ExpirationRemovedWhenDeadLettered", Rules: []string{"RB-9", "RB-12"}, Run: rb9ExpirationRemovedWhenDeadLettered},
		{Name: "RB9DeadLetterKeepsPropertiesAndHeaders", Rules: []string{"RB-9"}, Run: rb9DeadLetterKeepsPropertiesAndHeaders},
		{Name: "RB9DeadLetterExchangeMissingDrops", Rules: []string{"RB-9", "RB-12"}, Run: rb9DeadLetterExchangeMissingDrops},
		{Name: "RB9DeadLetterUnroutableDrops", Rules: []string{"RB-9"}, Run: rb9DeadLetterUnroutableDrops},
		{Name: "RB9ConsumerSeesDeadLetteredMessage", Rules: []string{"RB-9", "RB-12"}, Run: rb9ConsumerSeesDeadLetteredMessage},
	}
}

// fanoutDLX declares a fanout exchange and a queue bound to it, the usual
// dead-letter target, and returns both names.
func fanoutDLX(s *S, ch *Ch) (x, q string) {
	x, q = s.Exchange("dlx"), s.Queue("dlq")
	ch.Exchange(x, "fanout")
	ch.Queue(q, nil)
	ch.Bind(q, "", x, nil)
	return x, q
}

// rb9ExpiredDeadLetteredThroughFanout pins RB-9 and RB-12: an expired message
// is republished to the dead-letter exchange with its original routing key and
// an x-death entry of reason expired.
func rb9ExpiredDeadLetteredThroughFanout(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	x, q := s.Exchange("x"), s.Queue("q")
	ch.Exchange(x, "direct")
	ch.Queue(q, amqp.Table{"x-message-ttl": int32(shortTTL), "x-dead-letter-exchange": dlx})
	ch.Bind(q, "k1", x, nil)
	ch.Publish(x, "k1", Msg{Body: "m1"})
	s.Wait(expireWait)
	s.Count(q)
	ch.GetArrived(dlq)
}

// rb9RejectedDeadLettered pins RB-9 and RB-12: basic.reject without requeue
// dead-letters with reason rejected.
func rb9RejectedDeadLettered(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-dead-letter-exchange": dlx})
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, false)
	s.Count(q)
	ch.GetArrived(dlq)
}

// rb9NackMultipleDeadLettered pins RB-9 and RB-12: basic.nack multiple
// without requeue dead-letters every message it covers, in order.
func rb9NackMultipleDeadLettered(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-dead-letter-exchange": dlx})
	for _, b := range []string{"m1", "m2", "m3"} {
		ch.Publish("", q, Msg{Body: b})
	}
	ch.GetManual(q)
	d, _ := ch.GetManual(q)
	ch.Nack(d.DeliveryTag, true, false)
	s.Count(q)
	ch.GetAll(dlq)
}

// rb9RequeueIsNotDeadLettering pins RB-9: reject and nack with requeue put the
// message back and dead-letter nothing.
func rb9RequeueIsNotDeadLettering(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-dead-letter-exchange": dlx})
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, true)
	d, _ = ch.GetManual(q)
	ch.Nack(d.DeliveryTag, false, true)
	s.Count(dlq)
	ch.Get(q)
}

// rb9MaxLengthDropHeadDeadLetters pins RB-9 and RB-12: x-max-length with the
// default overflow (drop-head) dead-letters the oldest messages, reason maxlen.
func rb9MaxLengthDropHeadDeadLetters(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-max-length": int32(1), "x-dead-letter-exchange": dlx})
	for _, b := range []string{"m1", "m2", "m3"} {
		ch.Publish("", q, Msg{Body: b, Expiration: longTTL})
	}
	s.Count(q)
	ch.GetAll(dlq)
	ch.Get(q)
}

// rb9MaxLengthRejectPublishNacks pins RB-9: with x-overflow reject-publish a
// full queue refuses the publish (a confirm nack) and dead-letters nothing.
func rb9MaxLengthRejectPublishNacks(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-max-length": int32(1), "x-overflow": "reject-publish", "x-dead-letter-exchange": dlx})
	ch.Confirm()
	ch.Publish("", q, Msg{Body: "m1"})
	ch.Publish("", q, Msg{Body: "m2"})
	ch.Publish("", q, Msg{Body: "m3", Mandatory: true})
	s.Count(q)
	s.Count(dlq)
	ch.Get(q)
}

// rb9MaxLengthRejectPublishDLX pins RB-9 with x-overflow
// reject-publish-dlx: a publish to a full queue is nacked and dead-lettered
// (reason maxlen).
func rb9MaxLengthRejectPublishDLX(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-max-length": int32(1), "x-overflow": "reject-publish-dlx", "x-dead-letter-exchange": dlx})
	ch.Confirm()
	ch.Publish("", q, Msg{Body: "m1"})
	ch.Publish("", q, Msg{Body: "m2"})
	s.Count(q)
	s.Count(dlq)
	ch.GetArrived(dlq)
	ch.Get(q)
}

// rb9DeadLetterRoutingKeyReplacesKey pins RB-9 and RB-12: with
// x-dead-letter-routing-key the message is republished with that key only.
func rb9DeadLetterRoutingKeyReplacesKey(s *S) {
	ch := s.Ch()
	dlx := s.Exchange("dlx")
	byDLRK, byOriginal, q := s.Queue("dead"), s.Queue("orig"), s.Queue("q")
	ch.Exchange(dlx, "direct")
	ch.Queue(byDLRK, nil)
	ch.Queue(byOriginal, nil)
	ch.Bind(byDLRK, "dead", dlx, nil)
	ch.Bind(byOriginal, q, dlx, nil)
	ch.Queue(q, amqp.Table{"x-dead-letter-exchange": dlx, "x-dead-letter-routing-key": "dead"})
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, false)
	s.Count(byOriginal)
	ch.Get(byDLRK)
}

// rb9ExpirationRemovedWhenDeadLettered pins RB-9 and RB-12: dead-lettering
// removes the expiration property and keeps it as original-expiration.
func rb9ExpirationRemovedWhenDeadLettered(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-dead-letter-exchange": dlx})
	ch.Publish("", q, Msg{Body: "expired", Expiration: "300"})
	ch.Publish("", q, Msg{Body: "rejected", Expiration: longTTL})
	s.Wait(expireWait)
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, false)
	ch.GetAll(dlq)
}

// rb9DeadLetterKeepsPropertiesAndHeaders pins RB-9: a dead-lettered message
// keeps its body, delivery mode and application headers.
func rb9DeadLetterKeepsPropertiesAndHeaders(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-dead-letter-exchange": dlx})
	ch.Publish("", q, Msg{Body: "m1", Persistent: true, Headers: amqp.Table{
		"app": "lapse", "n": int32(7), "list": []any{"a", int64(2)}, "nested": amqp.Table{"k": true},
	}})
	d, _ := ch.GetManual(q)
	ch.Nack(d.DeliveryTag, false, false)
	ch.GetArrived(dlq)
}

// rb9DeadLetterExchangeMissingDrops pins RB-9 and RB-12: with a dead-letter
// exchange that does not exist, expired and rejected messages vanish and no
// channel is closed.
func rb9DeadLetterExchangeMissingDrops(s *S) {
	ch := s.Ch()
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-message-ttl": int32(shortTTL), "x-dead-letter-exchange": s.Name("missing")})
	ch.Publish("", q, Msg{Body: "expires"})
	s.Wait(expireWait)
	ch.Publish("", q, Msg{Body: "rejected"})
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, false)
	s.Count(q)
	ch.PassiveExchange(s.Name("missing"), "fanout")
}

// rb9DeadLetterUnroutableDrops pins RB-9: a dead-letter exchange that routes
// the message nowhere drops it.
func rb9DeadLetterUnroutableDrops(s *S) {
	ch := s.Ch()
	dlx, q := s.Exchange("dlx"), s.Queue("q")
	ch.Exchange(dlx, "direct")
	ch.Queue(q, amqp.Table{"x-dead-letter-exchange": dlx})
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, false)
	s.Count(q)
}

// rb9ConsumerSeesDeadLetteredMessage pins RB-9 and RB-12: a consumer on the
// dead-letter queue receives the expired message with its x-death.
func rb9ConsumerSeesDeadLetteredMessage(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-message-ttl": int32(shortTTL), "x-dead-letter-exchange": dlx})
	c := ch.Consume(dlq, "c1", COpts{AutoAck: true})
	ch.Publish("", q, Msg{Body: "m1", Expiration: "200"})
	s.Wait(expireWait)
	c.Next()
}
