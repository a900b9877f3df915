package difftest

import (
	amqp "github.com/rabbitmq/amqp091-go"
)

func routingScenarios() []Scenario {
	return []Scenario{
		{Name: "DirectExchangeRouting", Run: directExchangeRouting},
		{Name: "FanoutExchangeRouting", Run: fanoutExchangeRouting},
		{Name: "TopicStarAndHash", Run: topicStarAndHash},
		{Name: "TopicEmptyWords", Run: topicEmptyWords},
		{Name: "TopicHashBetweenWords", Run: topicHashBetweenWords},
		{Name: "DefaultExchangeRouting", Run: defaultExchangeRouting},
		{Name: "PredeclaredAmqExchanges", Run: predeclaredAmqExchanges},
		{Name: "ExchangeToExchangeBinding", Run: exchangeToExchangeBinding},
		{Name: "AlternateExchange", Run: alternateExchange},
		{Name: "MandatoryUnroutableReturned", Run: mandatoryUnroutableReturned},
		{Name: "PublishToMissingExchange", Run: publishToMissingExchange},
		{Name: "UnbindStopsRouting", Run: unbindStopsRouting},
	}
}

// route publishes one message per routing key to x (body = the key) and then
// empties every queue, showing where each key went.
func route(ch *Ch, x string, keys []string, queues []string) {
	for _, k := range keys {
		ch.Publish(x, k, Msg{Body: k})
	}
	for _, q := range queues {
		ch.GetAll(q)
	}
}

// directExchangeRouting pins direct exchange routing: exact key match, one
// copy per queue even when two bindings of a queue match.
func directExchangeRouting(s *S) {
	x, q1, q2 := s.Exchange("x"), s.Queue("q1"), s.Queue("q2")
	ch := s.Ch()
	ch.Exchange(x, "direct")
	ch.Queue(q1, nil)
	ch.Queue(q2, nil)
	ch.Bind(q1, "a", x, nil)
	ch.Bind(q2, "a", x, nil)
	ch.Bind(q2, "b", x, nil)
	ch.Bind(q2, "b", x, nil) // the same binding twice is one binding
	route(ch, x, []string{"a", "b", "c", "A", ""}, []string{q1, q2})
}

// fanoutExchangeRouting pins fanout routing: every bound queue, whatever the
// routing key.
func fanoutExchangeRouting(s *S) {
	x, q1, q2 := s.Exchange("x"), s.Queue("q1"), s.Queue("q2")
	ch := s.Ch()
	ch.Exchange(x, "fanout")
	ch.Queue(q1, nil)
	ch.Queue(q2, nil)
	ch.Bind(q1, "ignored", x, nil)
	ch.Bind(q2, "", x, nil)
	route(ch, x, []string{"a", ""}, []string{q1, q2})
}

// topicStarAndHash pins topic routing: * is exactly one word, # zero or more.
func topicStarAndHash(s *S) {
	x := s.Exchange("x")
	ch := s.Ch()
	ch.Exchange(x, "topic")
	patterns := map[string]string{"star": "a.*", "hash": "a.#", "star-first": "*.b", "all": "#", "exact": "a.b"}
	var qs []string
	for _, short := range []string{"star", "hash", "star-first", "all", "exact"} {
		q := s.Queue(short)
		qs = append(qs, q)
		ch.Queue(q, nil)
		ch.Bind(q, patterns[short], x, nil)
	}
	route(ch, x, []string{"a", "a.b", "a.b.c", "b", "x.b", "a.b.b", ""}, qs)
}

// topicEmptyWords pins topic routing with empty words: "a..b" has an empty
// middle word that * matches, "." and "a." and ".b" are two words for "*.*",
// and the empty key matches "#" and the empty pattern but not "*".
func topicEmptyWords(s *S) {
	x := s.Exchange("x")
	ch := s.Ch()
	ch.Exchange(x, "topic")
	patterns := map[string]string{"a-star-b": "a.*.b", "star": "*", "hash": "#", "dot": ".", "star-dot-star": "*.*", "empty": ""}
	var qs []string
	for _, short := range []string{"a-star-b", "star", "hash", "dot", "star-dot-star", "empty"} {
		q := s.Queue(short)
		qs = append(qs, q)
		ch.Queue(q, nil)
		ch.Bind(q, patterns[short], x, nil)
	}
	route(ch, x, []string{"a..b", "", ".", "a.", ".b", "a"}, qs)
}

// topicHashBetweenWords pins "a.#.b": # between two words matches zero or
// more words, and "#.#" and "a.#.#" behave like one #.
func topicHashBetweenWords(s *S) {
	x := s.Exchange("x")
	ch := s.Ch()
	ch.Exchange(x, "topic")
	patterns := map[string]string{"a-hash-b": "a.#.b", "hash-hash": "#.#", "a-hash-hash": "a.#.#", "hash-b": "#.b"}
	var qs []string
	for _, short := range []string{"a-hash-b", "hash-hash", "a-hash-hash", "hash-b"} {
		q := s.Queue(short)
		qs = append(qs, q)
		ch.Queue(q, nil)
		ch.Bind(q, patterns[short], x, nil)
	}
	route(ch, x, []string{"a.b", "a.x.b", "a.x.y.b", "a.b.c", "b", "a", "x.a.b"}, qs)
}

// defaultExchangeRouting pins the default exchange: it routes by queue name,
// and binding to or unbinding from it is refused (403 ACCESS_REFUSED).
func defaultExchangeRouting(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	ch.Publish("", s.Name("missing"), Msg{Body: "m2"})
	ch.GetAll(q)
	ch.Bind(q, "k", "", nil)
	ch = s.Ch()
	ch.Unbind(q, q, "", nil)
	ch = s.Ch()
	ch.PassiveExchange("", "direct")
}

// predeclaredAmqExchanges pins the amq.* exchanges every vhost has, and that
// they route like their types.
func predeclaredAmqExchanges(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	for _, x := range [][2]string{{"amq.direct", "direct"}, {"amq.fanout", "fanout"}, {"amq.topic", "topic"}, {"amq.headers", "headers"}, {"amq.match", "headers"}} {
		ch.PassiveExchange(x[0], x[1])
	}
	ch.Queue(q, nil)
	ch.Bind(q, q, "amq.direct", nil)
	ch.Bind(q, "t.#", "amq.topic", nil)
	ch.Publish("amq.direct", q, Msg{Body: "via amq.direct"})
	ch.Publish("amq.topic", "t.x", Msg{Body: "via amq.topic"})
	ch.GetAll(q)
	ch.Unbind(q, q, "amq.direct", nil)
	ch.Unbind(q, "t.#", "amq.topic", nil)
}

// exchangeToExchangeBinding pins exchange.bind: a message passes from source
// to destination exchange by the binding's rules, once per queue even over
// two paths, and exchange.unbind stops it.
func exchangeToExchangeBinding(s *S) {
	src, dst, q := s.Exchange("src"), s.Exchange("dst"), s.Queue("q")
	ch := s.Ch()
	ch.Exchange(src, "topic")
	ch.Exchange(dst, "fanout")
	ch.Queue(q, nil)
	ch.BindExchange(dst, "a.*", src, nil)
	ch.Bind(q, "", dst, nil)
	ch.Bind(q, "a.b", src, nil)
	route(ch, src, []string{"a.b", "a.c", "b"}, []string{q})
	ch.UnbindExchange(dst, "a.*", src, nil)
	route(ch, src, []string{"a.c"}, []string{q})
}

// alternateExchange pins alternate-exchange: what the exchange cannot route
// goes to its alternate exchange, and a mandatory publish is not returned.
func alternateExchange(s *S) {
	x, ae, q, aq := s.Exchange("x"), s.Exchange("ae"), s.Queue("q"), s.Queue("aq")
	ch := s.Ch()
	ch.Exchange(ae, "fanout")
	ch.DeclareExchange(x, "direct", XOpts{Args: amqp.Table{"alternate-exchange": ae}})
	ch.Queue(q, nil)
	ch.Queue(aq, nil)
	ch.Bind(q, "k", x, nil)
	ch.Bind(aq, "", ae, nil)
	ch.Publish(x, "k", Msg{Body: "routed"})
	ch.Publish(x, "other", Msg{Body: "unroutable", Mandatory: true})
	ch.GetAll(q)
	ch.GetAll(aq)
}

// mandatoryUnroutableReturned pins basic.return: an unroutable mandatory
// message comes back with 312 NO_ROUTE; a non-mandatory one vanishes. In
// confirm mode both are still acked.
func mandatoryUnroutableReturned(s *S) {
	x := s.Exchange("x")
	ch := s.Ch()
	ch.Exchange(x, "direct")
	ch.Publish(x, "nowhere", Msg{Body: "m1", Mandatory: true, Headers: amqp.Table{"h": "v"}})
	ch.Publish(x, "nowhere", Msg{Body: "m2"})
	ch.Publish("", s.Name("missing"), Msg{Body: "m3", Mandatory: true})
	ch.Confirm()
	ch.Publish(x, "nowhere", Msg{Body: "m4", Mandatory: true})
	ch.Publish(x, "nowhere", Msg{Body: "m5"})
}

// publishToMissingExchange pins the channel error of a publish to an exchange
// that does not exist: 404 NOT_FOUND - no exchange 'x' in vhost '/'.
func publishToMissingExchange(s *S) {
	ch := s.Ch()
	ch.Publish(s.Name("missing"), "k", Msg{Body: "m1"})
	ch = s.Ch()
	ch.Confirm()
	ch.Publish(s.Name("missing"), "k", Msg{Body: "m2"})
}

// unbindStopsRouting pins queue.unbind: after it the key no longer routes to
// the queue; unbinding a binding that does not exist is fine.
func unbindStopsRouting(s *S) {
	x, q := s.Exchange("x"), s.Queue("q")
	ch := s.Ch()
	ch.Exchange(x, "direct")
	ch.Queue(q, nil)
	ch.Bind(q, "k", x, nil)
	route(ch, x, []string{"k"}, []string{q})
	ch.Unbind(q, "k", x, nil)
	ch.Unbind(q, "never-bound", x, nil)
	route(ch, x, []string{"k"}, []string{q})
}
