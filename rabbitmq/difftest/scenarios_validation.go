package difftest

import (
	amqp "github.com/rabbitmq/amqp091-go"
)

// argCase is a queue.declare whose arguments RabbitMQ checks (rabbitmq.md A1,
// first table).
type argCase struct {
	name  string
	rules []string
	args  amqp.Table
}

func validationScenarios() []Scenario {
	cases := []argCase{
		// x-message-ttl -1 is refused: {value_negative,-1} (RB-11).
		{"RB11MessageTTLNegative", []string{"RB-11"}, amqp.Table{"x-message-ttl": int32(-1)}},
		// x-message-ttl as a string is refused: "expected integer, got longstr" (RB-11).
		{"RB11MessageTTLString", []string{"RB-11"}, amqp.Table{"x-message-ttl": "1000"}},
		// x-message-ttl as a double is refused: "expected integer, got double" (RB-11).
		{"RB11MessageTTLDouble", []string{"RB-11"}, amqp.Table{"x-message-ttl": 1.5}},
		// x-message-ttl above ten years is refused: {value_too_large,N} (RB-1, RB-11).
		{"RB1MessageTTLTooLarge", []string{"RB-1", "RB-11"}, amqp.Table{"x-message-ttl": int64(315360000001)}},
		// x-message-ttl of exactly ten years is accepted (RB-1).
		{"RB1MessageTTLTenYearsAccepted", []string{"RB-1"}, amqp.Table{"x-message-ttl": int64(315360000000)}},
		// x-message-ttl 0 is accepted (RB-1, RB-4).
		{"RB1MessageTTLZeroAccepted", []string{"RB-1", "RB-4"}, amqp.Table{"x-message-ttl": int32(0)}},
		// x-expires 0 is refused: {value_zero,0} (RB-8, RB-11).
		{"RB11ExpiresZero", []string{"RB-8", "RB-11"}, amqp.Table{"x-expires": int32(0)}},
		// x-expires -5 is refused: {value_negative,-5} (RB-8, RB-11).
		{"RB11ExpiresNegative", []string{"RB-8", "RB-11"}, amqp.Table{"x-expires": int32(-5)}},
		// x-expires as a string is refused like x-message-ttl (RB-8, RB-11).
		{"RB11ExpiresString", []string{"RB-8", "RB-11"}, amqp.Table{"x-expires": "1000"}},
		// x-expires above ten years is refused (RB-8, RB-11).
		{"RB11ExpiresTooLarge", []string{"RB-8", "RB-11"}, amqp.Table{"x-expires": int64(315360000001)}},
		// x-dead-letter-routing-key without x-dead-letter-exchange is refused:
		// routing_key_but_no_dlx_defined (RB-9, RB-11).
		{"RB11DeadLetterRoutingKeyWithoutExchange", []string{"RB-9", "RB-11"}, amqp.Table{"x-dead-letter-routing-key": "k"}},
		// x-dead-letter-exchange as an integer is refused: invalid type 'signedint' (RB-9, RB-11).
		{"RB11DeadLetterExchangeNotString", []string{"RB-9", "RB-11"}, amqp.Table{"x-dead-letter-exchange": int32(5)}},
		// x-dead-letter-routing-key as an integer is refused too (RB-9, RB-11).
		{"RB11DeadLetterRoutingKeyNotString", []string{"RB-9", "RB-11"}, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": int32(5)}},
		// A dead-letter exchange that does not exist is accepted at declare time (RB-9).
		{"RB9DeadLetterExchangeMissingAccepted", []string{"RB-9"}, amqp.Table{"x-dead-letter-exchange": "d.none"}},
	}
	var out []Scenario
	for _, c := range cases {
		out = append(out, Scenario{Name: c.name, Rules: c.rules, Run: func(s *S) { declareArgs(s, c.args) }})
	}
	return append(out,
		Scenario{Name: "RB11RedeclareDifferentTTL", Rules: []string{"RB-11"}, Run: rb11RedeclareDifferentTTL},
		Scenario{Name: "RB11RedeclareArgumentOmitted", Rules: []string{"RB-11"}, Run: rb11RedeclareArgumentOmitted},
		Scenario{Name: "RB11RedeclareArgumentAdded", Rules: []string{"RB-11"}, Run: rb11RedeclareArgumentAdded},
		Scenario{Name: "RB11RedeclareOtherWidthsEquivalent", Rules: []string{"RB-1", "RB-11"}, Run: rb11RedeclareOtherWidthsEquivalent},
		Scenario{Name: "RB11RedeclareStringInequivalent", Rules: []string{"RB-11"}, Run: rb11RedeclareStringInequivalent},
		Scenario{Name: "RB11RedeclareDifferentExpires", Rules: []string{"RB-8", "RB-11"}, Run: rb11RedeclareDifferentExpires},
	)
}

// declareArgs declares a queue with args and, when that worked, shows the
// queue on a fresh channel.
func declareArgs(s *S, args amqp.Table) {
	q := s.Queue("q")
	if s.Ch().Queue(q, args) {
		s.Count(q)
	}
}

// rb11RedeclareDifferentTTL pins RB-11: redeclaring with another x-message-ttl
// closes the channel: inequivalent arg ... received '2000' but current is '1000'.
func rb11RedeclareDifferentTTL(s *S) {
	q := s.Queue("q")
	s.Ch().Queue(q, ttl(1000))
	s.Ch().Queue(q, ttl(2000))
	s.Count(q)
}

// rb11RedeclareArgumentOmitted pins RB-11: redeclaring without the argument
// is inequivalent: received none but current is the value '1000' of type
// 'signedint'.
func rb11RedeclareArgumentOmitted(s *S) {
	q := s.Queue("q")
	s.Ch().Queue(q, ttl(1000))
	s.Ch().Queue(q, nil)
}

// rb11RedeclareArgumentAdded pins RB-11: redeclaring with an argument the
// queue was declared without is inequivalent too.
func rb11RedeclareArgumentAdded(s *S) {
	q := s.Queue("q")
	s.Ch().Queue(q, nil)
	s.Ch().Queue(q, ttl(1000))
}

// rb11RedeclareOtherWidthsEquivalent pins RB-1 and RB-11: the same
// x-message-ttl in any integer width is an equivalent redeclare.
func rb11RedeclareOtherWidthsEquivalent(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, amqp.Table{"x-message-ttl": int32(100)})
	for _, v := range []any{int8(100), uint8(100), int16(100), uint16(100), uint32(100), int64(100)} {
		ch.Queue(q, amqp.Table{"x-message-ttl": v})
	}
}

// rb11RedeclareStringInequivalent pins RB-11: the same number as a string is
// not equivalent (received '1000' but current is '1000').
func rb11RedeclareStringInequivalent(s *S) {
	q := s.Queue("q")
	s.Ch().Queue(q, ttl(1000))
	s.Ch().Queue(q, amqp.Table{"x-message-ttl": "1000"})
}

// rb11RedeclareDifferentExpires pins RB-8 and RB-11: another x-expires on
// redeclare is inequivalent; the same one in another width is not.
func rb11RedeclareDifferentExpires(s *S) {
	q := s.Queue("q")
	s.Ch().Queue(q, amqp.Table{"x-expires": int32(60000)})
	s.Ch().Queue(q, amqp.Table{"x-expires": int64(60000)})
	s.Ch().Queue(q, amqp.Table{"x-expires": int32(30000)})
}
