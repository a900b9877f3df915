package difftest

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The RB-6 scenarios take a message out at 0, requeue it at requeueAt and
// look at checkAt: a TTL of requeueTTL ran out by then if the requeue kept the
// expiry, and would not have if the requeue had restarted it (requeueAt +
// requeueTTL). Both margins are 350 ms.
const (
	requeueTTL = 1000
	requeueAt  = 700 * time.Millisecond
	checkAfter = 650 * time.Millisecond // checkAt = requeueAt + checkAfter = 1350 ms
)

func requeueScenarios() []Scenario {
	return []Scenario{
		{Name: "RB6NackRequeueKeepsExpiry", Rules: []string{"RB-6", "RB-1"}, Run: rb6NackRequeueKeepsExpiry},
		{Name: "RB6RejectRequeueKeepsExpiry", Rules: []string{"RB-6", "RB-1"}, Run: rb6RejectRequeueKeepsExpiry},
		{Name: "RB6ChannelCloseKeepsExpiry", Rules: []string{"RB-6", "RB-1"}, Run: rb6ChannelCloseKeepsExpiry},
		{Name: "RB6ConnectionCloseKeepsMessageExpiry", Rules: []string{"RB-6", "RB-5"}, Run: rb6ConnectionCloseKeepsMessageExpiry},
		{Name: "RB6NackRequeueKeepsMessageExpiry", Rules: []string{"RB-6", "RB-5"}, Run: rb6NackRequeueKeepsMessageExpiry},
		{Name: "RB6ExpiredWhileUnackedDeadLettered", Rules: []string{"RB-6", "RB-9"}, Run: rb6ExpiredWhileUnackedDeadLettered},
		{Name: "RB6ExpiredWhileUnackedNotRedelivered", Rules: []string{"RB-6", "RB-3"}, Run: rb6ExpiredWhileUnackedNotRedelivered},
	}
}

// requeueKeepsExpiry publishes one message to a queue with args, takes it
// with basic.get on a channel of conn, lets requeueAt pass, calls requeue and
// records the counts before and after the original expiry.
func requeueKeepsExpiry(s *S, args amqp.Table, expiration string, conn *Conn, requeue func(ch *Ch, tag uint64)) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, args)
	ch.Publish("", q, Msg{Body: "m1", Expiration: expiration})
	taker := conn.Ch()
	d, _ := taker.GetManual(q)
	s.Wait(requeueAt)
	requeue(taker, d.DeliveryTag)
	s.Count(q)
	s.Wait(checkAfter)
	s.Count(q)
	ch.Get(q)
}

// rb6NackRequeueKeepsExpiry pins RB-6: basic.nack with requeue puts the
// message back with its original queue-TTL (RB-1) expiry.
func rb6NackRequeueKeepsExpiry(s *S) {
	requeueKeepsExpiry(s, ttl(requeueTTL), "", s.Conn(), func(ch *Ch, tag uint64) { ch.Nack(tag, false, true) })
}

// rb6RejectRequeueKeepsExpiry pins RB-6 for basic.reject with requeue and a
// queue TTL (RB-1).
func rb6RejectRequeueKeepsExpiry(s *S) {
	requeueKeepsExpiry(s, ttl(requeueTTL), "", s.Conn(), func(ch *Ch, tag uint64) { ch.Reject(tag, true) })
}

// rb6ChannelCloseKeepsExpiry pins RB-6: closing the channel that holds the
// unacked message requeues it with its original queue-TTL (RB-1) expiry.
func rb6ChannelCloseKeepsExpiry(s *S) {
	requeueKeepsExpiry(s, ttl(requeueTTL), "", s.Conn(), func(ch *Ch, _ uint64) { ch.Close() })
}

// rb6ConnectionCloseKeepsMessageExpiry pins RB-6 and RB-5: closing the
// connection requeues an unacked message, which keeps its per-message expiry.
func rb6ConnectionCloseKeepsMessageExpiry(s *S) {
	conn := s.Conn()
	requeueKeepsExpiry(s, nil, "1000", conn, func(*Ch, uint64) { conn.Close() })
}

// rb6NackRequeueKeepsMessageExpiry pins RB-6 and RB-5: a nack-requeued
// message keeps its per-message expiry, and arrives flagged redelivered.
func rb6NackRequeueKeepsMessageExpiry(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1", Expiration: "1000"})
	d, _ := ch.GetManual(q)
	s.Wait(requeueAt)
	ch.Nack(d.DeliveryTag, false, true)
	d, _ = ch.GetManual(q)
	ch.Nack(d.DeliveryTag, false, true)
	s.Wait(checkAfter)
	s.Count(q)
	ch.Get(q)
}

// rb6ExpiredWhileUnackedDeadLettered pins RB-6 and RB-9: a message whose TTL
// ran out while it was unacked is dead-lettered as expired when requeued.
func rb6ExpiredWhileUnackedDeadLettered(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, nil)
	ch.Queue(q, withDLQ(ttl(shortTTL), dlq))
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := ch.GetManual(q)
	s.Wait(expireWait)
	ch.Nack(d.DeliveryTag, false, true)
	s.Count(q)
	ch.Get(q)
	ch.GetArrived(dlq)
}

// rb6ExpiredWhileUnackedNotRedelivered pins RB-6 and RB-3 (rabbitmq.md A1): a
// message whose expiration passed while unacked is not redelivered after
// its channel closes.
func rb6ExpiredWhileUnackedNotRedelivered(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1", Expiration: "300"})
	ch.Publish("", q, Msg{Body: "m2"})
	taker := s.Ch()
	taker.Qos(1)
	c := taker.Consume(q, "c1", COpts{})
	c.Next()
	s.Wait(expireWait)
	taker.Close()
	s.Count(q)
	ch.GetAll(q)
}
