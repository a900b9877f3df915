package difftest

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The RB-8 scenarios use x-expires leaseTTL and renew every renewEvery, four
// times (1200 ms, past the lease), then look once more; an idle queue is
// looked at after idleWait, twice the lease.
const (
	leaseTTL   = 800
	renewEvery = 300 * time.Millisecond
	renewals   = 4
	idleWait   = 1600 * time.Millisecond
)

func queueTTLScenarios() []Scenario {
	return []Scenario{
		{Name: "RB8IdleQueueDeleted", Rules: []string{"RB-8"}, Run: rb8IdleQueueDeleted},
		{Name: "RB8RedeclareRenewsLease", Rules: []string{"RB-8"}, Run: rb8RedeclareRenewsLease},
		{Name: "RB8PassiveDeclareRenewsLease", Rules: []string{"RB-8"}, Run: rb8PassiveDeclareRenewsLease},
		{Name: "RB8BasicGetRenewsLease", Rules: []string{"RB-8"}, Run: rb8BasicGetRenewsLease},
		{Name: "RB8ConsumerKeepsQueue", Rules: []string{"RB-8"}, Run: rb8ConsumerKeepsQueue},
		{Name: "RB8PublishDoesNotRenewLease", Rules: []string{"RB-8"}, Run: rb8PublishDoesNotRenewLease},
		{Name: "RB8ExpiredQueueNotDeadLettered", Rules: []string{"RB-8", "RB-12"}, Run: rb8ExpiredQueueNotDeadLettered},
		{Name: "RB8ExpiredQueueBindingsGo", Rules: []string{"RB-8"}, Run: rb8ExpiredQueueBindingsGo},
	}
}

func lease() amqp.Table { return amqp.Table{"x-expires": int32(leaseTTL)} }

// rb8IdleQueueDeleted pins RB-8: a queue nobody uses is deleted once its
// x-expires lease runs out.
func rb8IdleQueueDeleted(s *S) {
	q := s.Queue("q")
	s.Ch().Queue(q, lease())
	s.Wait(idleWait)
	s.Count(q)
}

// renewLease declares q with a lease, renews it renewals times with renew,
// and shows the queue alive past the lease and gone after idleWait.
func renewLease(s *S, renew func(ch *Ch, q string)) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, lease())
	for range renewals {
		s.Wait(renewEvery)
		renew(ch, q)
	}
	s.Wait(renewEvery)
	s.Count(q)
	s.Wait(idleWait)
	s.Count(q)
}

// rb8RedeclareRenewsLease pins RB-8: queue.declare of an existing queue
// renews its lease.
func rb8RedeclareRenewsLease(s *S) {
	renewLease(s, func(ch *Ch, q string) { ch.Queue(q, lease()) })
}

// rb8PassiveDeclareRenewsLease pins RB-8: a passive declare renews the lease.
func rb8PassiveDeclareRenewsLease(s *S) {
	renewLease(s, func(ch *Ch, q string) { ch.Passive(q) })
}

// rb8BasicGetRenewsLease pins RB-8: basic.get renews the lease, even when it
// finds the queue empty.
func rb8BasicGetRenewsLease(s *S) {
	renewLease(s, func(ch *Ch, q string) { ch.Get(q) })
}

// rb8ConsumerKeepsQueue pins RB-8: the lease does not run while the queue has
// a consumer, and starts when the last consumer cancels.
func rb8ConsumerKeepsQueue(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, lease())
	c := ch.Consume(q, "c1", COpts{})
	s.Wait(idleWait)
	s.Count(q)
	c.Cancel()
	s.Wait(idleWait)
	s.Count(q)
}

// rb8PublishDoesNotRenewLease pins RB-8: publishing to the queue does not
// renew its lease. Lease 1000 ms, publishes at 300, 600 and 900 ms, look at
// 1400 ms: deleted since 1000 ms (a renewing publish would keep it to 1900).
func rb8PublishDoesNotRenewLease(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, amqp.Table{"x-expires": int32(1000)})
	for _, body := range []string{"m1", "m2", "m3"} {
		s.Wait(300 * time.Millisecond)
		ch.Publish("", q, Msg{Body: body})
	}
	s.Wait(500 * time.Millisecond)
	s.Count(q)
}

// rb8ExpiredQueueNotDeadLettered pins RB-8 and RB-12: the messages of a queue
// deleted by its lease are not dead-lettered.
func rb8ExpiredQueueNotDeadLettered(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	ch := s.Ch()
	ch.Queue(dlq, nil)
	ch.Queue(q, withDLQ(lease(), dlq))
	ch.Publish("", q, Msg{Body: "m1"})
	ch.Publish("", q, Msg{Body: "m2", Expiration: longTTL})
	s.Wait(idleWait)
	s.Count(q)
	s.Count(dlq)
}

// rb8ExpiredQueueBindingsGo pins RB-8: a queue deleted by its lease takes its
// bindings along; a mandatory publish to its binding key comes back as
// unroutable, and redeclaring the name makes a new, empty queue.
func rb8ExpiredQueueBindingsGo(s *S) {
	x, q := s.Exchange("x"), s.Queue("q")
	ch := s.Ch()
	ch.Exchange(x, "direct")
	ch.Queue(q, lease())
	ch.Bind(q, "k", x, nil)
	ch.Publish(x, "k", Msg{Body: "m1"})
	s.Wait(idleWait)
	ch.Publish(x, "k", Msg{Body: "m2", Mandatory: true})
	ch.Queue(q, lease())
	ch.Get(q)
}
