package difftest

import (
	"regexp"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Policies are set before the queues they match are declared: a queue takes
// its policy synchronously at declare, while a policy change reaches existing
// queues asynchronously.

func policyScenarios() []Scenario {
	m := func(name string, rules []string, run func(*S)) Scenario {
		return Scenario{Name: name, Rules: rules, Management: true, Run: run}
	}
	return []Scenario{
		m("RB10PolicyMessageTTL", []string{"RB-10", "RB-1"}, rb10PolicyMessageTTL),
		m("RB10PolicyAndArgumentTTLLowerWins", []string{"RB-10", "RB-1"}, rb10PolicyAndArgumentTTLLowerWins),
		m("RB10PolicyAndArgumentExpiresLowerWins", []string{"RB-10", "RB-8"}, rb10PolicyAndArgumentExpiresLowerWins),
		m("RB10ArgumentDeadLetterExchangeWins", []string{"RB-10", "RB-9"}, rb10ArgumentDeadLetterExchangeWins),
		m("RB10PolicyDeadLetterRoutingKey", []string{"RB-10", "RB-9"}, rb10PolicyDeadLetterRoutingKey),
		m("RB10HighestPriorityPolicyOnly", []string{"RB-10"}, rb10HighestPriorityPolicyOnly),
		m("RB10OperatorPolicyLowerTTLWins", []string{"RB-10", "RB-1"}, rb10OperatorPolicyLowerTTLWins),
		m("RB10OperatorAndUserPolicyEndToEnd", []string{"RB-10", "RB-9"}, rb10OperatorAndUserPolicyEndToEnd),
		m("RB10OperatorPolicyRefusesDeadLetterKeys", []string{"RB-10"}, rb10OperatorPolicyRefusesDeadLetterKeys),
		m("RB10PolicyValidation", []string{"RB-10", "RB-1", "RB-8"}, rb10PolicyValidation),
		m("RB10QueueShowsEffectivePolicy", []string{"RB-10"}, rb10QueueShowsEffectivePolicy),
	}
}

// only is a policy pattern matching exactly the given names.
func only(names ...string) string {
	p := "^("
	for i, n := range names {
		if i > 0 {
			p += "|"
		}
		p += regexp.QuoteMeta(n)
	}
	return p + ")$"
}

// rb10PolicyMessageTTL pins RB-10 and RB-1: a message-ttl policy gives a queue
// without arguments a TTL.
func rb10PolicyMessageTTL(s *S) {
	q := s.Queue("q")
	p := s.Policy("p")
	s.PutPolicy(p, Policy{Pattern: only(q), ApplyTo: "queues", Definition: map[string]any{"message-ttl": shortTTL}})
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	s.Count(q)
	s.Wait(expireWait)
	s.Count(q)
}

// rb10PolicyAndArgumentTTLLowerWins pins RB-10 and RB-1: with both a
// message-ttl policy and x-message-ttl, the lower one applies, either way.
func rb10PolicyAndArgumentTTLLowerWins(s *S) {
	argLow, policyLow := s.Queue("arg-low"), s.Queue("policy-low")
	pLow, pHigh := s.Policy("low"), s.Policy("high")
	s.PutPolicy(pHigh, Policy{Pattern: only(argLow), ApplyTo: "queues", Definition: map[string]any{"message-ttl": 60000}})
	s.PutPolicy(pLow, Policy{Pattern: only(policyLow), ApplyTo: "queues", Definition: map[string]any{"message-ttl": shortTTL}})
	ch := s.Ch()
	ch.Queue(argLow, ttl(shortTTL))
	ch.Queue(policyLow, ttl(60000))
	ch.Publish("", argLow, Msg{Body: "m1"})
	ch.Publish("", policyLow, Msg{Body: "m2"})
	s.Wait(expireWait)
	s.Count(argLow)
	s.Count(policyLow)
}

// rb10PolicyAndArgumentExpiresLowerWins pins RB-10 and RB-8: with both an
// expires policy and x-expires, the lower lease applies, either way.
func rb10PolicyAndArgumentExpiresLowerWins(s *S) {
	argLow, policyLow, neither := s.Queue("arg-low"), s.Queue("policy-low"), s.Queue("long")
	pLow, pHigh := s.Policy("low"), s.Policy("high")
	s.PutPolicy(pHigh, Policy{Pattern: only(argLow, neither), ApplyTo: "queues", Definition: map[string]any{"expires": 60000}})
	s.PutPolicy(pLow, Policy{Pattern: only(policyLow), ApplyTo: "queues", Definition: map[string]any{"expires": leaseTTL}})
	ch := s.Ch()
	ch.Queue(argLow, amqp.Table{"x-expires": int32(leaseTTL)})
	ch.Queue(policyLow, amqp.Table{"x-expires": int32(60000)})
	ch.Queue(neither, amqp.Table{"x-expires": int32(60000)})
	s.Wait(idleWait)
	s.Count(argLow)
	s.Count(policyLow)
	s.Count(neither)
}

// rb10ArgumentDeadLetterExchangeWins pins RB-10 and RB-9: a queue's
// x-dead-letter-exchange beats the policy's dead-letter-exchange; a queue
// without the argument uses the policy's.
func rb10ArgumentDeadLetterExchangeWins(s *S) {
	ch := s.Ch()
	withArg, withoutArg, byArg, byPolicy := s.Queue("with-arg"), s.Queue("without-arg"), s.Queue("by-arg"), s.Queue("by-policy")
	p := s.Policy("p")
	ch.Queue(byArg, nil)
	ch.Queue(byPolicy, nil)
	s.PutPolicy(p, Policy{Pattern: only(withArg, withoutArg), ApplyTo: "queues", Definition: map[string]any{
		"dead-letter-exchange": "", "dead-letter-routing-key": byPolicy,
	}})
	ch.Queue(withArg, deadLetterTo(byArg, nil))
	ch.Queue(withoutArg, nil)
	for _, q := range []string{withArg, withoutArg} {
		ch.Publish("", q, Msg{Body: "from " + q})
		d, _ := ch.GetManual(q)
		ch.Reject(d.DeliveryTag, false)
	}
	ch.GetAll(byArg)
	ch.GetAll(byPolicy)
}

// rb10PolicyDeadLetterRoutingKey pins RB-10 and RB-9: a queue's
// x-dead-letter-exchange with the policy's dead-letter-routing-key: the
// argument wins per key, so the policy's routing key still applies.
func rb10PolicyDeadLetterRoutingKey(s *S) {
	ch := s.Ch()
	q, dlq := s.Queue("q"), s.Queue("dlq")
	p := s.Policy("p")
	ch.Queue(dlq, nil)
	s.PutPolicy(p, Policy{Pattern: only(q), ApplyTo: "queues", Definition: map[string]any{
		"dead-letter-exchange": s.Name("other"), "dead-letter-routing-key": dlq,
	}})
	ch.Queue(q, amqp.Table{"x-dead-letter-exchange": ""})
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, false)
	ch.GetAll(dlq)
}

// rb10HighestPriorityPolicyOnly pins RB-10: of two matching policies only the
// one with the higher priority applies, with no merging: the lower one's
// message-ttl does not apply.
func rb10HighestPriorityPolicyOnly(s *S) {
	q, dlq := s.Queue("q"), s.Queue("dlq")
	low, high := s.Policy("low"), s.Policy("high")
	s.PutPolicy(low, Policy{Pattern: only(q), ApplyTo: "queues", Priority: 1, Definition: map[string]any{"message-ttl": shortTTL}})
	s.PutPolicy(high, Policy{Pattern: only(q), ApplyTo: "queues", Priority: 2, Definition: map[string]any{
		"dead-letter-exchange": "", "dead-letter-routing-key": dlq,
	}})
	ch := s.Ch()
	ch.Queue(dlq, nil)
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	s.Wait(expireWait)
	s.Count(q)
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, false)
	ch.GetAll(dlq)
}

// rb10OperatorPolicyLowerTTLWins pins RB-10 and RB-1: an operator policy's
// message-ttl merges with the user policy's, the lower winning either way.
func rb10OperatorPolicyLowerTTLWins(s *S) {
	opLow, userLow := s.Queue("op-low"), s.Queue("user-low")
	u1, u2 := s.Policy("u1"), s.Policy("u2")
	o1, o2 := s.OperatorPolicy("o1"), s.OperatorPolicy("o2")
	s.PutPolicy(u1, Policy{Pattern: only(opLow), ApplyTo: "queues", Definition: map[string]any{"message-ttl": 60000}})
	s.PutOperatorPolicy(o1, Policy{Pattern: only(opLow), ApplyTo: "queues", Definition: map[string]any{"message-ttl": shortTTL}})
	s.PutPolicy(u2, Policy{Pattern: only(userLow), ApplyTo: "queues", Definition: map[string]any{"message-ttl": shortTTL}})
	s.PutOperatorPolicy(o2, Policy{Pattern: only(userLow), ApplyTo: "queues", Definition: map[string]any{"message-ttl": 60000}})
	ch := s.Ch()
	ch.Queue(opLow, nil)
	ch.Queue(userLow, nil)
	ch.Publish("", opLow, Msg{Body: "m1"})
	ch.Publish("", userLow, Msg{Body: "m2"})
	s.Wait(expireWait)
	s.Count(opLow)
	s.Count(userLow)
}

// rb10OperatorAndUserPolicyEndToEnd pins RB-10 and RB-9 (rabbitmq.md A5):
// user policy ttl 2000 + DLX P, operator policy ttl 1000: a queue with ttl
// 300 and DLX A expires at 300 into A; queues with ttl 60000 (b) or no
// arguments (c) expire 1000 after the publish into P. c's message goes 300 ms
// after b's, so they reach P in a known order.
func rb10OperatorAndUserPolicyEndToEnd(s *S) {
	ch := s.Ch()
	a, b, c := s.Queue("a"), s.Queue("b"), s.Queue("c")
	toA, toP := s.Queue("to-a"), s.Queue("to-p")
	u, o := s.Policy("user"), s.OperatorPolicy("operator")
	ch.Queue(toA, nil)
	ch.Queue(toP, nil)
	s.PutPolicy(u, Policy{Pattern: only(a, b, c), ApplyTo: "queues", Definition: map[string]any{
		"message-ttl": 2000, "dead-letter-exchange": "", "dead-letter-routing-key": toP,
	}})
	s.PutOperatorPolicy(o, Policy{Pattern: only(a, b, c), ApplyTo: "queues", Definition: map[string]any{"message-ttl": 1000}})
	ch.Queue(a, deadLetterTo(toA, ttl(shortTTL)))
	ch.Queue(b, ttl(60000))
	ch.Queue(c, nil)
	ch.Publish("", a, Msg{Body: "from " + a})
	ch.Publish("", b, Msg{Body: "from " + b})
	s.Wait(300 * time.Millisecond)
	ch.Publish("", c, Msg{Body: "from " + c})
	s.Wait(400 * time.Millisecond)
	for _, q := range []string{a, b, c, toA, toP} {
		s.Count(q)
	}
	s.Wait(1000 * time.Millisecond)
	for _, q := range []string{b, c} {
		s.Count(q)
	}
	ch.GetAll(toA)
	ch.GetAll(toP)
}

// rb10OperatorPolicyRefusesDeadLetterKeys pins RB-10: operator policies
// accept only expires, message-ttl, max-length and the like; a
// dead-letter-exchange key is refused with 400.
func rb10OperatorPolicyRefusesDeadLetterKeys(s *S) {
	o := s.OperatorPolicy("o")
	s.PutOperatorPolicy(o, Policy{Pattern: "^" + regexp.QuoteMeta(s.Name("")), ApplyTo: "queues", Definition: map[string]any{"dead-letter-exchange": "x"}})
	s.PutOperatorPolicy(o, Policy{Pattern: "^" + regexp.QuoteMeta(s.Name("")), ApplyTo: "queues", Definition: map[string]any{"expires": 60000}})
}

// rb10PolicyValidation pins RB-10, RB-1 and RB-8: a message-ttl policy must be
// an integer >= 0 and expires one >= 1, else 400 with RabbitMQ's reason.
func rb10PolicyValidation(s *S) {
	p := s.Policy("p")
	pattern := "^" + regexp.QuoteMeta(s.Name(""))
	for _, def := range []map[string]any{
		{"message-ttl": -5},
		{"message-ttl": "1000"},
		{"expires": 0},
		{"expires": -1},
		{"message-ttl": 0},
		{"expires": 1},
	} {
		s.PutPolicy(p, Policy{Pattern: pattern, ApplyTo: "queues", Definition: def})
	}
}

// rb10QueueShowsEffectivePolicy pins RB-10: the management API shows a queue's
// user and operator policy and their merged definition (without x-
// arguments).
func rb10QueueShowsEffectivePolicy(s *S) {
	q := s.Queue("q")
	u, o := s.Policy("user"), s.OperatorPolicy("operator")
	s.PutPolicy(u, Policy{Pattern: only(q), ApplyTo: "queues", Definition: map[string]any{"message-ttl": 2000, "dead-letter-exchange": "dlx"}})
	s.PutOperatorPolicy(o, Policy{Pattern: only(q), ApplyTo: "queues", Definition: map[string]any{"message-ttl": 1500, "max-length": 10}})
	s.Ch().Queue(q, ttl(500))
	s.QueueInfo(q, "name", "arguments", "policy", "operator_policy", "effective_policy_definition")
}
