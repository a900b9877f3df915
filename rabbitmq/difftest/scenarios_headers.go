package difftest

import (
	amqp "github.com/rabbitmq/amqp091-go"
)

func headersScenarios() []Scenario {
	return []Scenario{
		{Name: "HeadersMatchAll", Run: headersMatchAll},
		{Name: "HeadersMatchAny", Run: headersMatchAny},
		{Name: "HeadersXArgumentsIgnored", Run: headersXArgumentsIgnored},
		{Name: "HeadersValueTypes", Run: headersValueTypes},
	}
}

// headersRoute binds one queue to a headers exchange with args, publishes one
// message per header table (body = its index) and shows which arrived.
func headersRoute(s *S, args amqp.Table, messages []amqp.Table) {
	x, q := s.Exchange("x"), s.Queue("q")
	ch := s.Ch()
	ch.Exchange(x, "headers")
	ch.Queue(q, nil)
	ch.Bind(q, "ignored", x, args)
	for i, h := range messages {
		ch.Publish(x, "any", Msg{Body: string(rune('a' + i)), Headers: h})
	}
	ch.GetAll(q)
}

// headersMatchAll pins x-match all (also the default): every binding header
// must be present with an equal value; extra message headers do not matter.
func headersMatchAll(s *S) {
	headersRoute(s, amqp.Table{"x-match": "all", "k1": "v1", "k2": "v2"}, []amqp.Table{
		{"k1": "v1", "k2": "v2"},
		{"k1": "v1", "k2": "v2", "k3": "v3"},
		{"k1": "v1"},
		{"k1": "v1", "k2": "other"},
		nil,
	})
}

// headersMatchAny pins x-match any: one equal binding header is enough.
func headersMatchAny(s *S) {
	headersRoute(s, amqp.Table{"x-match": "any", "k1": "v1", "k2": "v2"}, []amqp.Table{
		{"k1": "v1"},
		{"k2": "v2", "k9": "v9"},
		{"k1": "other"},
		{"k3": "v1"},
		nil,
	})
}

// headersXArgumentsIgnored pins that binding arguments starting with x- (other
// than x-match) take no part in matching, and that a binding without x-match
// means all.
func headersXArgumentsIgnored(s *S) {
	headersRoute(s, amqp.Table{"x-custom": "must-not-matter", "k1": "v1"}, []amqp.Table{
		{"k1": "v1"},
		{"k1": "v1", "x-custom": "other"},
		{"x-custom": "must-not-matter"},
	})
}

// headersValueTypes pins value comparison of the headers exchange: an int32
// binding value matches the same number in any integer width (int8, int32,
// int64) but not the string "1"; a boolean matches only a boolean.
func headersValueTypes(s *S) {
	headersRoute(s, amqp.Table{"x-match": "any", "n": int32(1), "b": true}, []amqp.Table{
		{"n": "1"},
		{"n": int64(1)},
		{"n": int32(1)},
		{"n": int8(1)},
		{"b": "true"},
		{"b": true},
	})
}
