package atom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
)

// Config is the official Service Bus emulator's Config.json
// (Service-Bus-Emulator/Config/Config.json in
// Azure/azure-service-bus-emulator-installer): the entities to create at
// start.
type Config struct {
	Namespaces []Namespace
	// LoggingType is UserConfig.Logging.Type: "File", "Console",
	// "File,Console" or "Console,File".
	LoggingType string
}

// Namespace is one namespace of a Config (the emulator allows one,
// "sbemulatorns").
type Namespace struct {
	Name   string
	Queues []Entry // KindQueue entries
	Topics []ConfigTopic
}

// ConfigTopic is a topic of a Config with its subscriptions.
type ConfigTopic struct {
	Entry         Entry // the KindTopic entry
	Subscriptions []ConfigSubscription
}

// ConfigSubscription is a subscription of a Config with its rules, as the
// file lists them (its Entry has no DefaultRule; Entries sets it).
type ConfigSubscription struct {
	Entry Entry   // the KindSubscription entry
	Rules []Entry // KindRule entries
}

// Entries returns every entity of c in creation order, for the server to
// Put one by one: each namespace's queues, then each topic followed by its
// subscriptions, each followed by its rules. A subscription with rules has
// the first as its DefaultRule and the others follow it, so that it gets
// the configured rules instead of $Default, as the emulator does (its
// subscriptions keep $Default only when the file lists no rules). The
// entries share nothing with c.
func (c *Config) Entries() []Entry {
	var out []Entry
	for _, ns := range c.Namespaces {
		for _, q := range ns.Queues {
			out = append(out, cloneEntry(q))
		}
		for _, t := range ns.Topics {
			out = append(out, cloneEntry(t.Entry))
			for _, s := range t.Subscriptions {
				e := cloneEntry(s.Entry)
				rules := s.Rules
				if len(rules) > 0 && e.Subscription != nil {
					r := cloneRule(*rules[0].Rule)
					e.Subscription.DefaultRule = &r
					rules = rules[1:]
				}
				out = append(out, e)
				for _, r := range rules {
					out = append(out, cloneEntry(r))
				}
			}
		}
	}
	return out
}

// cloneEntry copies e's properties, so that the copy shares nothing.
func cloneEntry(e Entry) Entry {
	if e.Queue != nil {
		q := *e.Queue
		e.Queue = &q
	}
	if e.Topic != nil {
		t := *e.Topic
		e.Topic = &t
	}
	if e.Subscription != nil {
		s := *e.Subscription
		if s.DefaultRule != nil {
			r := cloneRule(*s.DefaultRule)
			s.DefaultRule = &r
		}
		e.Subscription = &s
	}
	if e.Rule != nil {
		r := cloneRule(*e.Rule)
		e.Rule = &r
	}
	return e
}

func cloneRule(r RuleProperties) RuleProperties {
	r.Filter.Parameters = cloneMap(r.Filter.Parameters)
	r.Filter.Correlation.Properties = cloneMap(r.Filter.Correlation.Properties)
	if r.Action != nil {
		a := *r.Action
		a.Parameters = cloneMap(a.Parameters)
		r.Action = &a
	}
	return r
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// ParseConfig reads a Config.json. It accepts what the emulator accepts
// beyond JSON, // and /* */ comments (its sample has them) and trailing
// commas; names match without case; unknown fields are ignored; missing
// properties take the defaults of DefaultQueue, DefaultTopic and
// DefaultSubscription; durations are ISO 8601 ("PT1H") or .NET TimeSpan
// text. A value of the wrong type, a bad duration or an unknown FilterType
// is a core.EINVALID error naming the entity and the field.
func ParseConfig(data []byte) (*Config, error) {
	root, err := parseObject(stripJSONC(data), "Config.json")
	if err != nil {
		return nil, err
	}
	uc, ok, err := root.object("UserConfig", "Config.json")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, configError("Config.json has no UserConfig")
	}
	c := &Config{}
	if logging, ok, err := uc.object("Logging", "UserConfig"); err != nil {
		return nil, err
	} else if ok {
		if c.LoggingType, _, err = logging.string("Type", "UserConfig.Logging"); err != nil {
			return nil, err
		}
	}
	namespaces, err := uc.array("Namespaces", "UserConfig")
	if err != nil {
		return nil, err
	}
	for i, raw := range namespaces {
		ns, err := parseNamespace(raw, i)
		if err != nil {
			return nil, err
		}
		c.Namespaces = append(c.Namespaces, ns)
	}
	return c, nil
}

func parseNamespace(raw json.RawMessage, i int) (Namespace, error) {
	where := fmt.Sprintf("namespace #%d", i+1)
	o, err := parseObject(raw, where)
	if err != nil {
		return Namespace{}, err
	}
	var ns Namespace
	if ns.Name, err = o.name(where); err != nil {
		return ns, err
	}
	where = fmt.Sprintf("namespace %q", ns.Name)
	queues, err := o.array("Queues", where)
	if err != nil {
		return ns, err
	}
	for _, raw := range queues {
		e, _, err := parseEntity(raw, KindQueue, Path{}, where)
		if err != nil {
			return ns, err
		}
		ns.Queues = append(ns.Queues, e)
	}
	topics, err := o.array("Topics", where)
	if err != nil {
		return ns, err
	}
	for _, raw := range topics {
		te, to, err := parseEntity(raw, KindTopic, Path{}, where)
		if err != nil {
			return ns, err
		}
		t := ConfigTopic{Entry: te}
		tWhere := fmt.Sprintf("topic %q", te.Path.Entity)
		subs, err := to.array("Subscriptions", tWhere)
		if err != nil {
			return ns, err
		}
		for _, raw := range subs {
			se, so, err := parseEntity(raw, KindSubscription, te.Path, tWhere)
			if err != nil {
				return ns, err
			}
			s := ConfigSubscription{Entry: se}
			sWhere := fmt.Sprintf("subscription %q of topic %q", se.Path.Subscription, se.Path.Entity)
			rules, err := so.array("Rules", sWhere)
			if err != nil {
				return ns, err
			}
			for _, raw := range rules {
				re, _, err := parseEntity(raw, KindRule, se.Path, sWhere)
				if err != nil {
					return ns, err
				}
				s.Rules = append(s.Rules, re)
			}
			t.Subscriptions = append(t.Subscriptions, s)
		}
		ns.Topics = append(ns.Topics, t)
	}
	return ns, nil
}

// parseEntity reads {"Name": ..., "Properties": {...}} of kind under
// parent and returns the entry and the object, for what it nests.
func parseEntity(raw json.RawMessage, kind Kind, parent Path, parentWhere string) (Entry, jsonObject, error) {
	lower := strings.ToLower(kind.String())
	o, err := parseObject(raw, fmt.Sprintf("a %s of %s", lower, parentWhere))
	if err != nil {
		return Entry{}, nil, err
	}
	name, err := o.name(fmt.Sprintf("a %s of %s", lower, parentWhere))
	if err != nil {
		return Entry{}, nil, err
	}
	where := fmt.Sprintf("%s %q", lower, name)
	if kind == KindSubscription || kind == KindRule {
		where += " of " + parentWhere
	}
	props, _, err := o.object("Properties", where)
	if err != nil {
		return Entry{}, nil, err
	}
	p := propertyReader{o: props, where: where}
	e := Entry{Path: parent}
	e.Path.Kind = kind
	switch kind {
	case KindQueue:
		e.Path.Entity = name
		q := DefaultQueue()
		p.duration("LockDuration", &q.LockDuration)
		p.int32("MaxSizeInMegabytes", &q.MaxSizeInMegabytes)
		p.bool("RequiresDuplicateDetection", &q.RequiresDuplicateDetection)
		p.bool("RequiresSession", &q.RequiresSession)
		p.duration("DefaultMessageTimeToLive", &q.DefaultMessageTimeToLive)
		p.bool("DeadLetteringOnMessageExpiration", &q.DeadLetteringOnMessageExpiration)
		p.duration("DuplicateDetectionHistoryTimeWindow", &q.DuplicateDetectionHistoryTimeWindow)
		p.int32("MaxDeliveryCount", &q.MaxDeliveryCount)
		p.bool("EnableBatchedOperations", &q.EnableBatchedOperations)
		p.string("Status", &q.Status)
		p.duration("AutoDeleteOnIdle", &q.AutoDeleteOnIdle)
		p.bool("EnablePartitioning", &q.EnablePartitioning)
		p.string("ForwardTo", &q.ForwardTo)
		p.string("ForwardDeadLetteredMessagesTo", &q.ForwardDeadLetteredMessagesTo)
		p.string("UserMetadata", &q.UserMetadata)
		p.int64("MaxMessageSizeInKilobytes", &q.MaxMessageSizeInKilobytes)
		e.Queue = &q
	case KindTopic:
		e.Path.Entity = name
		t := DefaultTopic()
		p.duration("DefaultMessageTimeToLive", &t.DefaultMessageTimeToLive)
		p.int32("MaxSizeInMegabytes", &t.MaxSizeInMegabytes)
		p.bool("RequiresDuplicateDetection", &t.RequiresDuplicateDetection)
		p.duration("DuplicateDetectionHistoryTimeWindow", &t.DuplicateDetectionHistoryTimeWindow)
		p.bool("EnableBatchedOperations", &t.EnableBatchedOperations)
		p.string("Status", &t.Status)
		p.duration("AutoDeleteOnIdle", &t.AutoDeleteOnIdle)
		p.bool("EnablePartitioning", &t.EnablePartitioning)
		p.bool("SupportOrdering", &t.SupportOrdering)
		p.string("UserMetadata", &t.UserMetadata)
		p.int64("MaxMessageSizeInKilobytes", &t.MaxMessageSizeInKilobytes)
		e.Topic = &t
	case KindSubscription:
		e.Path.Subscription = name
		s := DefaultSubscription()
		p.duration("LockDuration", &s.LockDuration)
		p.bool("RequiresSession", &s.RequiresSession)
		p.duration("DefaultMessageTimeToLive", &s.DefaultMessageTimeToLive)
		p.bool("DeadLetteringOnMessageExpiration", &s.DeadLetteringOnMessageExpiration)
		p.bool("DeadLetteringOnFilterEvaluationExceptions", &s.DeadLetteringOnFilterEvaluationExceptions)
		p.int32("MaxDeliveryCount", &s.MaxDeliveryCount)
		p.bool("EnableBatchedOperations", &s.EnableBatchedOperations)
		p.string("Status", &s.Status)
		p.duration("AutoDeleteOnIdle", &s.AutoDeleteOnIdle)
		p.string("ForwardTo", &s.ForwardTo)
		p.string("ForwardDeadLetteredMessagesTo", &s.ForwardDeadLetteredMessagesTo)
		p.string("UserMetadata", &s.UserMetadata)
		e.Subscription = &s
	case KindRule:
		e.Path.Rule = name
		r, err := parseRule(props, where)
		if err != nil {
			return Entry{}, nil, err
		}
		r.Name = name
		e.Rule = &r
	}
	if p.err != nil {
		return Entry{}, nil, p.err
	}
	return e, o, nil
}

// parseRule reads a rule's Properties: FilterType "Sql" or "Correlation",
// SqlFilter or CorrelationFilter, and an optional Action.
func parseRule(o jsonObject, where string) (RuleProperties, error) {
	var r RuleProperties
	typ, ok, err := o.string("FilterType", where)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, configError("%s: Properties.FilterType is missing; want \"Sql\" or \"Correlation\"", where)
	}
	switch strings.ToLower(typ) {
	case "sql":
		sql, ok, err := o.object("SqlFilter", where)
		if err != nil {
			return r, err
		}
		expr, _, err := sql.string("SqlExpression", where+": SqlFilter")
		if err != nil {
			return r, err
		}
		if !ok || strings.TrimSpace(expr) == "" {
			return r, configError("%s: SqlFilter.SqlExpression is missing", where)
		}
		r.Filter = Filter{Type: SQLFilter, SQLExpression: expr}
	case "correlation":
		cf, ok, err := o.object("CorrelationFilter", where)
		if err != nil {
			return r, err
		}
		if !ok {
			return r, configError("%s: CorrelationFilter is missing", where)
		}
		var c Correlation
		p := propertyReader{o: cf, where: where + ": CorrelationFilter"}
		p.string("CorrelationId", &c.CorrelationID)
		p.string("MessageId", &c.MessageID)
		p.string("To", &c.To)
		p.string("ReplyTo", &c.ReplyTo)
		p.string("Label", &c.Subject)
		p.string("Subject", &c.Subject)
		p.string("SessionId", &c.SessionID)
		p.string("ReplyToSessionId", &c.ReplyToSessionID)
		p.string("ContentType", &c.ContentType)
		if p.err != nil {
			return r, p.err
		}
		if raw, ok := cf.get("Properties"); ok {
			if c.Properties, err = scalarMap(raw, p.where+": Properties"); err != nil {
				return r, err
			}
		}
		r.Filter = Filter{Type: CorrelationFilter, Correlation: c}
	default:
		return r, configError("%s: Properties.FilterType %q is not \"Sql\" or \"Correlation\"", where, typ)
	}
	action, ok, err := o.object("Action", where)
	if err != nil || !ok {
		return r, err
	}
	expr, ok, err := action.string("SqlExpression", where+": Action")
	if err != nil {
		return r, err
	}
	if ok && strings.TrimSpace(expr) != "" {
		r.Action = &Action{SQLExpression: expr}
	}
	return r, nil
}

// configError is an EINVALID error about the file.
func configError(format string, args ...any) error {
	return core.Errorf(core.EINVALID, format, args...)
}

// jsonObject is a JSON object by lowercased key.
type jsonObject map[string]json.RawMessage

// parseObject reads a JSON object; null is an empty one.
func parseObject(raw []byte, where string) (jsonObject, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, configError("%s: want a JSON object: %v", where, err)
	}
	o := make(jsonObject, len(m))
	for k, v := range m {
		o[strings.ToLower(k)] = v
	}
	return o, nil
}

// get returns key's value; false when it is missing or null.
func (o jsonObject) get(key string) (json.RawMessage, bool) {
	v, ok := o[strings.ToLower(key)]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return nil, false
	}
	return v, true
}

func (o jsonObject) object(key, where string) (jsonObject, bool, error) {
	v, ok := o.get(key)
	if !ok {
		return jsonObject{}, false, nil
	}
	obj, err := parseObject(v, where+": "+key)
	return obj, err == nil, err
}

func (o jsonObject) array(key, where string) ([]json.RawMessage, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	var a []json.RawMessage
	if err := json.Unmarshal(v, &a); err != nil {
		return nil, configError("%s: %s must be an array, not %s", where, key, v)
	}
	return a, nil
}

func (o jsonObject) string(key, where string) (string, bool, error) {
	v, ok := o.get(key)
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, configError("%s: %s must be a string, not %s", where, key, v)
	}
	return s, true, nil
}

// name returns the required, non-empty Name.
func (o jsonObject) name(where string) (string, error) {
	name, _, err := o.string("Name", where)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(name) == "" {
		return "", configError("%s has no Name", where)
	}
	return name, nil
}

// scalarMap reads an object of strings, numbers and booleans, a
// correlation filter's properties, keeping its keys' case: integers are
// int32 when they fit (the SDKs' "int"), else int64; other numbers
// float64. An empty object is nil.
func scalarMap(raw json.RawMessage, where string) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, configError("%s must be an object, not %s", where, raw)
	}
	if len(m) == 0 {
		return nil, nil
	}
	for k, v := range m {
		switch v := v.(type) {
		case string, bool:
		case json.Number:
			if n, err := v.Int64(); err == nil {
				if n >= math.MinInt32 && n <= math.MaxInt32 {
					m[k] = int32(n)
				} else {
					m[k] = n
				}
			} else if f, err := v.Float64(); err == nil {
				m[k] = f
			} else {
				return nil, configError("%s: %s: %s is not a number", where, k, v)
			}
		default:
			return nil, configError("%s: %s must be a string, a number or a boolean", where, k)
		}
	}
	return m, nil
}

// propertyReader reads typed properties, keeping the first error.
type propertyReader struct {
	o     jsonObject
	where string
	err   error
}

func (p *propertyReader) fail(key string, v json.RawMessage, want string) {
	if p.err == nil {
		p.err = configError("%s: property %s must be %s, not %s", p.where, key, want, v)
	}
}

func (p *propertyReader) value(key string) (json.RawMessage, bool) {
	if p.err != nil {
		return nil, false
	}
	return p.o.get(key)
}

func (p *propertyReader) duration(key string, to *time.Duration) {
	v, ok := p.value(key)
	if !ok {
		return
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		p.fail(key, v, `an ISO 8601 duration string like "PT1M"`)
		return
	}
	d, err := adapters.ParseTimeSpan(s)
	if err != nil {
		p.fail(key, v, `an ISO 8601 duration like "PT1M"`)
		return
	}
	*to = d
}

func (p *propertyReader) bool(key string, to *bool) {
	v, ok := p.value(key)
	if !ok {
		return
	}
	if json.Unmarshal(v, to) != nil {
		p.fail(key, v, "true or false")
	}
}

func (p *propertyReader) int32(key string, to *int32) {
	v, ok := p.value(key)
	if !ok {
		return
	}
	var n int64
	if json.Unmarshal(v, &n) != nil || n < math.MinInt32 || n > math.MaxInt32 {
		p.fail(key, v, "a 32-bit integer")
		return
	}
	*to = int32(n)
}

func (p *propertyReader) int64(key string, to *int64) {
	v, ok := p.value(key)
	if !ok {
		return
	}
	if json.Unmarshal(v, to) != nil {
		p.fail(key, v, "an integer")
	}
}

func (p *propertyReader) string(key string, to *string) {
	v, ok := p.value(key)
	if !ok {
		return
	}
	if json.Unmarshal(v, to) != nil {
		p.fail(key, v, "a string")
	}
}

// stripJSONC removes // and /* */ comments outside strings and commas
// before a closing bracket, leaving the rest as it is.
func stripJSONC(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(data) && data[j] != '"' {
				if data[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(data))
			out = append(out, data[i:j]...)
			i = j - 1
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i--
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += 2 + end + 1
			out = append(out, ' ')
		case c == ']' || c == '}':
			k := len(out) - 1
			for k >= 0 && (out[k] == ' ' || out[k] == '\t' || out[k] == '\n' || out[k] == '\r') {
				k--
			}
			if k >= 0 && out[k] == ',' {
				out = append(out[:k], out[k+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}
