package difftest

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Quorum queues (x-queue-type quorum, always durable) follow the same TTL
// rules as classic ones in 3.10 (rabbitmq.md A4), with the differences the
// scenarios below pin. Their publishes go through Raft, so the scenarios
// publish with confirms before they count.

func quorumScenarios() []Scenario {
	return []Scenario{
		{Name: "RB1QuorumQueueTTLDeadLetters", Rules: []string{"RB-1", "RB-9", "RB-12"}, Run: rb1QuorumQueueTTLDeadLetters},
		{Name: "RB7QuorumHeadOnlyExpiry", Rules: []string{"RB-7"}, Run: rb7QuorumHeadOnlyExpiry},
		{Name: "RB8QuorumLeaseNotRenewed", Rules: []string{"RB-8"}, Run: rb8QuorumLeaseNotRenewed},
		{Name: "RB10QuorumExpiresPolicyPrecedence", Rules: []string{"RB-8", "RB-10"}, Management: true, Run: rb10QuorumExpiresPolicyPrecedence},
	}
}

// quorum returns args with x-queue-type quorum added.
func quorum(args amqp.Table) amqp.Table {
	out := amqp.Table{"x-queue-type": "quorum"}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// declareQuorum declares a durable quorum queue with args.
func declareQuorum(ch *Ch, q string, args amqp.Table) bool {
	_, ok := ch.Declare(q, QOpts{Durable: true, Args: quorum(args)})
	return ok
}

// rb1QuorumQueueTTLDeadLetters pins RB-1, RB-9 and RB-12 for quorum queues:
// x-message-ttl expires the message and dead-letters it with an x-death like a
// classic queue's.
func rb1QuorumQueueTTLDeadLetters(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	declareQuorum(ch, q, amqp.Table{"x-message-ttl": int32(shortTTL), "x-dead-letter-exchange": dlx})
	ch.Confirm() // a quorum queue enqueues through Raft: the confirm says it is in
	ch.Publish("", q, Msg{Body: "m1", Expiration: longTTL})
	s.Count(q)
	s.Wait(expireWait)
	s.Count(q)
	ch.GetArrived(dlq)
}

// rb7QuorumHeadOnlyExpiry pins RB-7 for quorum queues (rabbitmq.md A4: 3.10.8
// behaves like a classic queue): an expired message behind a live one stays
// counted until it reaches the head.
func rb7QuorumHeadOnlyExpiry(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	declareQuorum(ch, q, nil)
	ch.Confirm()
	ch.Publish("", q, Msg{Body: "long", Expiration: longTTL})
	ch.Publish("", q, Msg{Body: "short", Expiration: "100"})
	s.Wait(expireWait)
	s.Count(q)
	ch.Get(q)
	ch.Get(q)
	s.Count(q)
}

// quorumLeaseWait is how long the quorum lease scenarios give a 1000 ms lease
// to run out: RabbitMQ checks a quorum queue's lease on its tick (5 s), so
// deletion comes between 1 s and about 6 s after the last use.
const quorumLeaseWait = 7500 * time.Millisecond

// rb8QuorumLeaseNotRenewed pins RB-8's quorum exception (rabbitmq.md A2:
// "lease is not renewed on queue re-declaration"), which on 3.10.8 covers
// passive declares too: two quorum queues with x-expires 1000 and a message
// each, one redeclared and one passive-declared every 300 ms, are both
// deleted (the redeclared one comes back empty). The redeclares are
// summarised: when the deletion falls between them differs from run to run.
func rb8QuorumLeaseNotRenewed(s *S) {
	redeclared, passive := s.Queue("redeclared"), s.Queue("passive")
	args := amqp.Table{"x-expires": int32(1000)}
	ch := s.Ch()
	declareQuorum(ch, redeclared, args)
	declareQuorum(ch, passive, args)
	ch.Confirm()
	ch.Publish("", redeclared, Msg{Body: "m1"})
	ch.Publish("", passive, Msg{Body: "m1"})
	s.Count(redeclared)
	s.Count(passive)
	recreated, gone := false, false
	s.Note("every %v for %v: redeclare %q, passive-declare %q (not recorded one by one)", renewEvery, quorumLeaseWait, redeclared, passive)
	for elapsed := time.Duration(0); elapsed < quorumLeaseWait; elapsed += renewEvery {
		s.target.Wait(s.tb, renewEvery)
		q, err := ch.ch.QueueDeclare(redeclared, true, false, false, false, quorum(args))
		if err != nil {
			s.tb.Fatalf("redeclare %s: %v", redeclared, err)
		}
		recreated = recreated || q.Messages == 0
		if !gone {
			probe := s.Ch()
			if _, err := probe.ch.QueueDeclarePassive(passive, true, false, false, false, nil); err != nil {
				gone = true
				probe.dead = true
			} else {
				probe.closeQuietly()
			}
		}
	}
	s.Note("redeclared queue came back empty (deleted, then declared anew): %t", recreated)
	s.Note("passive-declared queue went away: %t", gone)
	s.Count(redeclared)
	s.Count(passive)
}

// rb10QuorumExpiresPolicyPrecedence pins RB-10 and RB-8 for quorum queues on
// 3.10 (rabbitmq.md A5): the expires policy takes precedence over x-expires,
// so a short argument under a long policy does not delete the queue.
func rb10QuorumExpiresPolicyPrecedence(s *S) {
	argLow, policyLow := s.Queue("arg-low"), s.Queue("policy-low")
	pLow, pHigh := s.Policy("low"), s.Policy("high")
	s.PutPolicy(pHigh, Policy{Pattern: only(argLow), ApplyTo: "queues", Definition: map[string]any{"expires": 60000}})
	s.PutPolicy(pLow, Policy{Pattern: only(policyLow), ApplyTo: "queues", Definition: map[string]any{"expires": leaseTTL}})
	ch := s.Ch()
	declareQuorum(ch, argLow, amqp.Table{"x-expires": int32(leaseTTL)})
	declareQuorum(ch, policyLow, amqp.Table{"x-expires": int32(60000)})
	s.Wait(quorumLeaseWait)
	s.Count(argLow)
	s.Count(policyLow)
}
