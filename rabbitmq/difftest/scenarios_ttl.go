package difftest

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Timing used by the TTL scenarios: a TTL short enough to keep the suite
// fast, and waits with margins wide enough for a loaded two-core machine
// (RabbitMQ really sleeps; lapse advances its clock).
const (
	shortTTL   = 300 // ms, a TTL that runs out during expireWait
	expireWait = 900 * time.Millisecond
	longTTL    = "60000"  // ms, an expiration that never runs out in a scenario
	ttlZero    = int32(0) // x-message-ttl 0
)

func ttlScenarios() []Scenario {
	return []Scenario{
		{Name: "RB1QueueTTLExpiresMessage", Rules: []string{"RB-1", "RB-3"}, Run: rb1QueueTTLExpiresMessage},
		{Name: "RB1QueueTTLIntegerWidths", Rules: []string{"RB-1", "RB-11"}, Run: rb1QueueTTLIntegerWidths},
		{Name: "RB2FanoutCopiesAgeIndependently", Rules: []string{"RB-1", "RB-2"}, Run: rb2FanoutCopiesAgeIndependently},
		{Name: "RB2DeathInOneQueueLeavesOthers", Rules: []string{"RB-2", "RB-9"}, Run: rb2DeathInOneQueueLeavesOthers},
		{Name: "RB3ConsumerNeverGetsExpired", Rules: []string{"RB-1", "RB-3"}, Run: rb3ConsumerNeverGetsExpired},
		{Name: "RB4TTLZeroNoConsumerDeadLetters", Rules: []string{"RB-4", "RB-9"}, Run: rb4TTLZeroNoConsumerDeadLetters},
		{Name: "RB4TTLZeroReadyConsumerDelivers", Rules: []string{"RB-4"}, Run: rb4TTLZeroReadyConsumerDelivers},
		{Name: "RB4ExpirationZeroNoConsumerDeadLetters", Rules: []string{"RB-4", "RB-5", "RB-9"}, Run: rb4ExpirationZeroNoConsumerDeadLetters},
		{Name: "RB4ExpirationZeroReadyConsumerDelivers", Rules: []string{"RB-4", "RB-5"}, Run: rb4ExpirationZeroReadyConsumerDelivers},
		{Name: "RB4TTLZeroConsumerWithoutRoom", Rules: []string{"RB-4", "RB-9"}, Run: rb4TTLZeroConsumerWithoutRoom},
		{Name: "RB4TTLZeroMandatoryNoReturn", Rules: []string{"RB-4"}, Run: rb4TTLZeroMandatoryNoReturn},
		{Name: "RB5MessageTTLExpires", Rules: []string{"RB-5", "RB-3"}, Run: rb5MessageTTLExpires},
		{Name: "RB5QueueTTLCapsMessageTTL", Rules: []string{"RB-5", "RB-1"}, Run: rb5QueueTTLCapsMessageTTL},
		{Name: "RB5MessageTTLBelowQueueTTL", Rules: []string{"RB-5", "RB-1"}, Run: rb5MessageTTLBelowQueueTTL},
		{Name: "RB5ExpirationKeptOnDelivery", Rules: []string{"RB-5"}, Run: rb5ExpirationKeptOnDelivery},
		{Name: "RB7HeadOnlyExpiry", Rules: []string{"RB-7"}, Run: rb7HeadOnlyExpiry},
		{Name: "RB7HeadExpiryDropsExpiredBehind", Rules: []string{"RB-7"}, Run: rb7HeadExpiryDropsExpiredBehind},
		{Name: "RB7ConsumerSkipsExpiredMessages", Rules: []string{"RB-3", "RB-7"}, Run: rb7ConsumerSkipsExpiredMessages},
	}
}

// ttl is an x-message-ttl argument table.
func ttl(ms int32) amqp.Table { return amqp.Table{"x-message-ttl": ms} }

// withDLQ adds dead-lettering to q's arguments: through the default exchange
// to the queue dlq (x-dead-letter-routing-key).
func withDLQ(args amqp.Table, dlq string) amqp.Table {
	out := amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// rb1QueueTTLExpiresMessage pins RB-1 and RB-3: under x-message-ttl a message
// counts until its TTL runs out, then is gone from the counts and basic.get.
func rb1QueueTTLExpiresMessage(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, ttl(shortTTL))
	ch.Publish("", q, Msg{Body: "m1"})
	s.Count(q)
	s.Wait(expireWait)
	s.Count(q)
	ch.Get(q)
}

// rb1QueueTTLIntegerWidths pins RB-1 and RB-11: x-message-ttl works in every
// AMQP integer width a client may pick (b, B, s, u, I, i, l).
func rb1QueueTTLIntegerWidths(s *S) {
	ch := s.Ch()
	widths := []struct {
		short string
		v     any
	}{
		{"int8", int8(100)}, {"uint8", uint8(100)}, {"int16", int16(100)}, {"uint16", uint16(100)},
		{"int32", int32(100)}, {"uint32", uint32(100)}, {"int64", int64(100)},
	}
	var qs []string
	for _, w := range widths {
		q := s.Queue(w.short)
		qs = append(qs, q)
		ch.Queue(q, amqp.Table{"x-message-ttl": w.v})
		ch.Publish("", q, Msg{Body: w.short})
	}
	s.Wait(expireWait)
	for _, q := range qs {
		s.Count(q)
	}
}

// rb2FanoutCopiesAgeIndependently pins RB-2 (with RB-1): a fanout copy in a queue with a
// short TTL expires while the copies in a long-TTL and a TTL-less queue stay.
func rb2FanoutCopiesAgeIndependently(s *S) {
	x := s.Exchange("x")
	short, long, none := s.Queue("short"), s.Queue("long"), s.Queue("none")
	ch := s.Ch()
	ch.Exchange(x, "fanout")
	ch.Queue(short, ttl(shortTTL))
	ch.Queue(long, ttl(60000))
	ch.Queue(none, nil)
	for _, q := range []string{short, long, none} {
		ch.Bind(q, "", x, nil)
	}
	ch.Publish(x, "k", Msg{Body: "m1"})
	s.Wait(expireWait)
	for _, q := range []string{short, long, none} {
		s.Count(q)
	}
	ch.Get(long)
	ch.Get(none)
}

// rb2DeathInOneQueueLeavesOthers pins RB-2 and RB-9: rejecting one queue's
// copy dead-letters that copy only; the other queue's copy carries no x-death.
func rb2DeathInOneQueueLeavesOthers(s *S) {
	x := s.Exchange("x")
	q1, q2, dlq := s.Queue("q1"), s.Queue("q2"), s.Queue("dlq")
	ch := s.Ch()
	ch.Exchange(x, "fanout")
	ch.Queue(dlq, nil)
	ch.Queue(q1, withDLQ(nil, dlq))
	ch.Queue(q2, nil)
	ch.Bind(q1, "", x, nil)
	ch.Bind(q2, "", x, nil)
	ch.Publish(x, "k", Msg{Body: "m1"})
	d, _ := ch.GetManual(q1)
	ch.Reject(d.DeliveryTag, false)
	s.Count(q1)
	ch.Get(q2)
	ch.GetArrived(dlq)
}

// rb3ConsumerNeverGetsExpired pins RB-3 (with RB-1's queue TTL): a message that expires while waiting
// behind a consumer's full prefetch window is never delivered.
func rb3ConsumerNeverGetsExpired(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, ttl(shortTTL))
	ch.Qos(1)
	c := ch.Consume(q, "c1", COpts{})
	ch.Publish("", q, Msg{Body: "m1"})
	ch.Publish("", q, Msg{Body: "m2"})
	d, _ := c.Next()
	s.Wait(expireWait)
	ch.Ack(d.DeliveryTag, false)
	c.None()
	s.Count(q)
}

// rb4TTLZeroNoConsumerDeadLetters pins RB-4 and RB-9: x-message-ttl 0 with no consumer
// expires the message on arrival and dead-letters it (reason expired).
func rb4TTLZeroNoConsumerDeadLetters(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, nil)
	ch.Queue(q, withDLQ(ttl(ttlZero), dlq))
	ch.Publish("", q, Msg{Body: "m1"})
	s.Count(q)
	ch.GetArrived(dlq)
}

// rb4TTLZeroReadyConsumerDelivers pins RB-4: x-message-ttl 0 still delivers to
// a consumer that can take the message at once.
func rb4TTLZeroReadyConsumerDelivers(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, nil)
	ch.Queue(q, withDLQ(ttl(ttlZero), dlq))
	c := ch.Consume(q, "c1", COpts{AutoAck: true})
	ch.Publish("", q, Msg{Body: "m1"})
	c.Next()
	s.Count(dlq)
}

// rb4ExpirationZeroNoConsumerDeadLetters pins RB-4, RB-5 and RB-9:
// expiration "0" with no consumer dead-letters at once, original-expiration "0" in x-death.
func rb4ExpirationZeroNoConsumerDeadLetters(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, nil)
	ch.Queue(q, withDLQ(nil, dlq))
	ch.Publish("", q, Msg{Body: "m1", Expiration: "0"})
	s.Count(q)
	ch.GetArrived(dlq)
}

// rb4ExpirationZeroReadyConsumerDelivers pins RB-4 and RB-5: expiration "0"
// reaches a ready consumer, expiration property intact.
func rb4ExpirationZeroReadyConsumerDelivers(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, nil)
	ch.Queue(q, withDLQ(nil, dlq))
	c := ch.Consume(q, "c1", COpts{AutoAck: true})
	ch.Publish("", q, Msg{Body: "m1", Expiration: "0"})
	c.Next()
	s.Count(dlq)
}

// rb4TTLZeroConsumerWithoutRoom pins RB-4 and RB-9: a consumer whose prefetch window is
// full cannot take a TTL-0 message, so it expires and is dead-lettered; the
// consumer never sees it.
func rb4TTLZeroConsumerWithoutRoom(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, nil)
	ch.Queue(q, withDLQ(ttl(ttlZero), dlq))
	ch.Qos(1)
	c := ch.Consume(q, "c1", COpts{})
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := c.Next()
	ch.Publish("", q, Msg{Body: "m2"})
	ch.GetArrived(dlq)
	ch.Ack(d.DeliveryTag, false)
	c.None()
	s.Count(q)
}

// rb4TTLZeroMandatoryNoReturn pins RB-4: a mandatory TTL-0 message that
// expires on arrival was routed, so there is no basic.return; the confirm is
// an ack.
func rb4TTLZeroMandatoryNoReturn(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, ttl(ttlZero))
	ch.Confirm()
	ch.Publish("", q, Msg{Body: "m1", Mandatory: true})
	ch.Publish("", q, Msg{Body: "m2", Expiration: "0", Mandatory: true})
	s.Count(q)
}

// rb5MessageTTLExpires pins RB-5 and RB-3: a message with expiration runs out
// at the head; one without stays.
func rb5MessageTTLExpires(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1", Expiration: "300"})
	ch.Publish("", q, Msg{Body: "m2"})
	s.Count(q)
	s.Wait(expireWait)
	s.Count(q)
	ch.GetAll(q)
}

// rb5QueueTTLCapsMessageTTL pins RB-5 and RB-1: with queue TTL 300 ms, a message whose
// expiration is 60 s still expires after 300 ms (the lower TTL applies).
func rb5QueueTTLCapsMessageTTL(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, ttl(shortTTL))
	ch.Publish("", q, Msg{Body: "m1", Expiration: longTTL})
	ch.Publish("", q, Msg{Body: "m2", Expiration: "100"})
	s.Wait(expireWait)
	s.Count(q)
	ch.Get(q)
}

// rb5MessageTTLBelowQueueTTL pins RB-5 and RB-1: with queue TTL 60 s, a message whose
// expiration is 300 ms expires after 300 ms; one without keeps the queue TTL.
func rb5MessageTTLBelowQueueTTL(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, ttl(60000))
	ch.Publish("", q, Msg{Body: "m1", Expiration: "300"})
	ch.Publish("", q, Msg{Body: "m2"})
	s.Wait(expireWait)
	s.Count(q)
	ch.GetAll(q)
}

// rb5ExpirationKeptOnDelivery pins RB-5: a live message is delivered (by
// basic.get and basic.deliver) with its expiration property unchanged.
func rb5ExpirationKeptOnDelivery(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, ttl(120000))
	ch.Publish("", q, Msg{Body: "m1", Expiration: longTTL})
	ch.Publish("", q, Msg{Body: "m2", Expiration: "4294967296"})
	ch.Get(q)
	c := ch.Consume(q, "c1", COpts{AutoAck: true})
	c.Next()
}

// rb7HeadOnlyExpiry pins RB-7 (rabbitmq.md A4): an expired message behind a
// live one stays counted; basic.get returns the live one, then get-empty,
// and only then does the count drop to 0.
func rb7HeadOnlyExpiry(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "long", Expiration: longTTL})
	ch.Publish("", q, Msg{Body: "short", Expiration: "100"})
	s.Wait(expireWait)
	s.Count(q)
	ch.Get(q)
	ch.Get(q)
	s.Count(q)
}

// rb7HeadExpiryDropsExpiredBehind pins RB-7: when the head expires, expired
// messages right behind it go too, up to the first live one.
func rb7HeadExpiryDropsExpiredBehind(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1", Expiration: "300"})
	ch.Publish("", q, Msg{Body: "m2", Expiration: "100"})
	ch.Publish("", q, Msg{Body: "m3"})
	ch.Publish("", q, Msg{Body: "m4", Expiration: "100"})
	s.Wait(expireWait)
	s.Count(q)
	ch.GetAll(q)
	s.Count(q)
}

// rb7ConsumerSkipsExpiredMessages pins RB-3 and RB-7: a consumer attached
// after expiries receives only the live messages, in order.
func rb7ConsumerSkipsExpiredMessages(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1", Expiration: "100"})
	ch.Publish("", q, Msg{Body: "m2"})
	ch.Publish("", q, Msg{Body: "m3", Expiration: "100"})
	ch.Publish("", q, Msg{Body: "m4", Expiration: longTTL})
	s.Wait(expireWait)
	c := ch.Consume(q, "c1", COpts{AutoAck: true})
	c.Next()
	c.Next()
	c.None()
	s.Count(q)
}
