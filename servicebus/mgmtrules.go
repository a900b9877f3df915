package servicebus

import (
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Descriptors of the rule types in enumerate-rules responses (the
// request-response protocol's described lists). The filters' codes are one
// hex digit shorter than the others, 0x13_7000000N rather than
// 0x137_0000000N: so the request-response doc spells them, and so the
// clients compare them (.NET's AmqpSqlFilterCodec, JS core-amqp's
// descriptorCodes.sqlFilterList = 83483426822). @azure/service-bus rejects
// a rule whose filter has any other code.
const (
	descRuleDescription   = 0x0000013700000004
	descEmptyRuleAction   = 0x0000013700000005
	descSQLRuleAction     = 0x0000013700000006
	descSQLFilter         = 0x000001370000006
	descTrueFilter        = 0x000001370000007
	descFalseFilter       = 0x000001370000008
	descCorrelationFilter = 0x000001370000009
)

// mgmtRules serves add-rule, remove-rule and enumerate-rules on a
// subscription.
func (s *Server) mgmtRules(n *node, op string, req amqp.Map) mgmtResult {
	if n.sub == nil || n.kind != subMain {
		return failed(core.Errorf(core.EINVALID, "Rules exist on subscriptions only."))
	}
	topic, sub := n.sub.topic.name, n.sub.name
	switch op {
	case opAddRule:
		name, _ := stringProp(req, "rule-name")
		desc, _ := get[amqp.Map](req, "rule-description")
		p := atom.RuleProperties{Name: name, Filter: atom.Filter{Type: atom.TrueFilter}}
		if f, ok := get[amqp.Map](desc, "sql-filter"); ok {
			expr, _ := stringProp(f, "expression")
			p.Filter = atom.Filter{Type: atom.SQLFilter, SQLExpression: expr}
		} else if f, ok := get[amqp.Map](desc, "correlation-filter"); ok {
			c := atom.Correlation{}
			c.CorrelationID, _ = stringProp(f, "correlation-id")
			c.MessageID, _ = stringProp(f, "message-id")
			c.To, _ = stringProp(f, "to")
			c.ReplyTo, _ = stringProp(f, "reply-to")
			c.Subject, _ = stringProp(f, "label")
			c.SessionID, _ = stringProp(f, "session-id")
			c.ReplyToSessionID, _ = stringProp(f, "reply-to-session-id")
			c.ContentType, _ = stringProp(f, "content-type")
			if props, ok := get[amqp.Map](f, "properties"); ok {
				c.Properties = map[string]any{}
				for _, kv := range props {
					if k, ok := kv.Key.(string); ok {
						c.Properties[k] = kv.Value
					}
				}
			}
			p.Filter = atom.Filter{Type: atom.CorrelationFilter, Correlation: c}
		}
		if a, ok := get[amqp.Map](desc, "sql-rule-action"); ok {
			expr, _ := stringProp(a, "expression")
			p.Action = &atom.Action{SQLExpression: expr}
		}
		if _, err := s.addRule(topic, sub, p); err != nil {
			return failed(err)
		}
		return ok(nil)
	case opRemoveRule:
		name, _ := stringProp(req, "rule-name")
		if err := s.removeRule(topic, sub, name); err != nil {
			return failed(err)
		}
		return ok(nil)
	}
	skip, _ := intProp(req, "skip")
	top, _ := intProp(req, "top")
	s.mu.RLock()
	rules := append([]*rule(nil), n.sub.rules...)
	s.mu.RUnlock()
	var out []any
	for i, r := range rules {
		if int64(i) < skip {
			continue
		}
		if top > 0 && int64(len(out)) >= top {
			break
		}
		out = append(out, amqp.Map{{Key: "rule-description", Value: describeRule(r)}})
	}
	if len(out) == 0 {
		return mgmtResult{status: 204, desc: "No rules."}
	}
	return ok(amqp.Map{{Key: "rules", Value: out}})
}

// describeRule encodes a rule as enumerate-rules returns it.
func describeRule(r *rule) *amqp.Described {
	var filter, action any
	f := r.props.Filter
	switch f.Type {
	case atom.SQLFilter:
		filter = &amqp.Described{Descriptor: uint64(descSQLFilter), Value: []any{f.SQLExpression}}
	case atom.FalseFilter:
		filter = &amqp.Described{Descriptor: uint64(descFalseFilter), Value: []any{"1=0"}}
	case atom.CorrelationFilter:
		c := f.Correlation
		var props amqp.Map
		for k, v := range c.Properties {
			props = props.Set(k, v)
		}
		str := func(s string) any {
			if s == "" {
				return nil
			}
			return s
		}
		filter = &amqp.Described{Descriptor: uint64(descCorrelationFilter), Value: []any{
			str(c.CorrelationID), str(c.MessageID), str(c.To), str(c.ReplyTo), str(c.Subject),
			str(c.SessionID), str(c.ReplyToSessionID), str(c.ContentType), props}}
	default:
		filter = &amqp.Described{Descriptor: uint64(descTrueFilter), Value: []any{"1=1"}}
	}
	if r.props.Action != nil && r.props.Action.SQLExpression != "" {
		action = &amqp.Described{Descriptor: uint64(descSQLRuleAction), Value: []any{r.props.Action.SQLExpression}}
	} else {
		action = &amqp.Described{Descriptor: uint64(descEmptyRuleAction), Value: []any{}}
	}
	return &amqp.Described{Descriptor: uint64(descRuleDescription), Value: []any{filter, action, r.props.Name, r.created.UTC()}}
}
