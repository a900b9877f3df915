package sqlfilter

// Correlation is a correlation filter; empty fields match anything;
// Properties must all be present and equal.
//
// Strings compare exactly (case-sensitively). Property values compare after
// the same normalization as SQL filters: integers of any Go type are equal
// when their values are (5 as int32 equals 5 as int64, and 5.0), a UUID
// equals its text, and values of types that cannot be compared are not
// equal. A nil property value matches only a present, nil message property.
type Correlation struct {
	CorrelationID    string
	MessageID        string
	To               string
	ReplyTo          string
	Subject          string // the Label system property
	SessionID        string
	ReplyToSessionID string
	ContentType      string
	Properties       map[string]any
}

// Match reports whether m has every system property the filter sets and
// every one of its Properties, with equal values. A nil *Correlation
// matches everything.
func (c *Correlation) Match(m Message) bool {
	if c == nil {
		return true
	}
	for _, f := range [...]struct{ name, want string }{
		{"CorrelationId", c.CorrelationID},
		{"MessageId", c.MessageID},
		{"To", c.To},
		{"ReplyTo", c.ReplyTo},
		{"Label", c.Subject},
		{"SessionId", c.SessionID},
		{"ReplyToSessionId", c.ReplyToSessionID},
		{"ContentType", c.ContentType},
	} {
		if f.want == "" {
			continue
		}
		got, ok := m.System(f.name)
		if !ok || !equal(fromGo(got), stringValue(f.want)) {
			return false
		}
	}
	for name, want := range c.Properties {
		got, ok := m.User(name)
		if !ok || !equal(fromGo(got), fromGo(want)) {
			return false
		}
	}
	return true
}
