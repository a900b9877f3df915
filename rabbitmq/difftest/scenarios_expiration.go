package difftest

// expirationCase is a publish with an expiration property that RabbitMQ
// parses with string:to_integer (rabbitmq.md A1, second table).
type expirationCase struct {
	name       string
	expiration string
}

func expirationScenarios() []Scenario {
	refused := []expirationCase{
		// "abc" closes the channel: invalid expiration 'abc': no_integer (RB-5, RB-11).
		{"RB11ExpirationNotANumber", "abc"},
		// A leading space is no integer either: no_integer (RB-5, RB-11).
		{"RB11ExpirationLeadingSpace", " 100"},
		// "1.5": {leftover_string,".5"} (RB-5, RB-11).
		{"RB11ExpirationFraction", "1.5"},
		// A trailing space: {leftover_string," "} (RB-5, RB-11).
		{"RB11ExpirationTrailingSpace", "100 "},
		// Hex is not parsed: {leftover_string,"x10"} (RB-5, RB-11).
		{"RB11ExpirationHex", "0x10"},
		// "-1": {value_negative,-1} (RB-5, RB-11).
		{"RB11ExpirationNegative", "-1"},
		// Above ten years: {value_too_large,N} (RB-5, RB-11).
		{"RB11ExpirationTooLarge", "99999999999999999999"},
		// One above ten years is too large as well (RB-1, RB-5, RB-11).
		{"RB11ExpirationJustAboveTenYears", "315360000001"},
	}
	accepted := []expirationCase{
		// "+100" is accepted and means 100 ms (RB-5, RB-11).
		{"RB11ExpirationPlusSignAccepted", "+100"},
		// "007" is accepted and means 7 ms (RB-5, RB-11).
		{"RB11ExpirationLeadingZerosAccepted", "007"},
		// "0" is accepted; with no consumer the message expires at once (RB-4, RB-5, RB-11).
		{"RB11ExpirationZeroAccepted", "0"},
		// "4294967296" (above 32 bits) is accepted and keeps the message (RB-5, RB-11).
		{"RB11ExpirationAbove32BitsAccepted", "4294967296"},
		// Exactly ten years is accepted (RB-5, RB-11).
		{"RB11ExpirationTenYearsAccepted", "315360000000"},
	}
	var out []Scenario
	for _, c := range refused {
		out = append(out, Scenario{Name: c.name, Rules: []string{"RB-5", "RB-11"}, Run: func(s *S) { publishExpiration(s, c.expiration) }})
	}
	for _, c := range accepted {
		out = append(out, Scenario{Name: c.name, Rules: []string{"RB-5", "RB-11"}, Run: func(s *S) { publishExpiration(s, c.expiration) }})
	}
	return out
}

// publishExpiration publishes a message with the expiration to a fresh queue,
// lets expireWait pass and shows what is left; a refused expiration closes the
// publishing channel and leaves nothing in the queue.
func publishExpiration(s *S, expiration string) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1", Expiration: expiration})
	s.Wait(expireWait)
	s.Count(q)
	s.Ch().GetAll(q)
}
