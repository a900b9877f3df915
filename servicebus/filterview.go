package servicebus

import (
	"slices"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// msgView shows a message to filters and rule actions: its system
// properties (sys.*) and application properties.
type msgView struct {
	m    *amqp.Message
	now  time.Time
	ttl  core.TTL
	size int
}

// idString writes a message or correlation id as filters compare it.
func idString(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case string:
		return x, true
	case amqp.UUID:
		return x.String(), true
	case uint64:
		return int64(x), true
	case []byte:
		return string(x), true
	}
	return v, true
}

func nonEmpty(s string) (any, bool) {
	if s == "" {
		return nil, false
	}
	return s, true
}

// System implements sqlfilter.Message.
func (v *msgView) System(name string) (any, bool) {
	p := v.m.Properties
	if p == nil {
		p = &amqp.Properties{}
	}
	switch strings.ToLower(name) {
	case "messageid":
		return idString(p.MessageID)
	case "correlationid":
		return idString(p.CorrelationID)
	case "to":
		return nonEmpty(p.To)
	case "replyto":
		return nonEmpty(p.ReplyTo)
	case "label", "subject":
		return nonEmpty(p.Subject)
	case "sessionid":
		return nonEmpty(p.GroupID)
	case "replytosessionid":
		return nonEmpty(p.ReplyToGroupID)
	case "contenttype":
		return nonEmpty(string(p.ContentType))
	case "size":
		return int64(v.size), true
	case "deliverycount":
		return int64(0), true
	case "enqueuedtimeutc":
		return v.now, true
	case "timetolive":
		if v.ttl.IsSet() {
			return v.ttl.Duration(), true
		}
		return nil, false
	case "expiresatutc":
		if v.ttl.Finite() {
			return v.now.Add(v.ttl.Duration()), true
		}
		return nil, false
	case "scheduledenqueuetimeutc":
		if t, ok := v.m.MessageAnnotations.Get(annScheduledEnqueueTime); ok {
			return t, true
		}
		return nil, false
	case "partitionkey":
		if t, ok := v.m.MessageAnnotations.Get(annPartitionKey); ok {
			return t, true
		}
		return nil, false
	}
	return nil, false
}

// userIndex is the index of application property name in the message:
// the one of that exact name, else the first whose name differs in case
// only, else -1. SQL filters and actions name user properties without
// regard to case (Color = 'yellow' matches a message's color: the SDKs'
// own tests against the service).
func (v *msgView) userIndex(name string) int {
	fold := -1
	for i, kv := range v.m.ApplicationProperties {
		k, ok := kv.Key.(string)
		switch {
		case !ok:
		case k == name:
			return i
		case fold < 0 && strings.EqualFold(k, name):
			fold = i
		}
	}
	return fold
}

// User implements sqlfilter.Message.
func (v *msgView) User(name string) (any, bool) {
	for _, kv := range v.m.ApplicationProperties {
		if k, ok := kv.Key.(string); ok && k == name {
			return kv.Value, true
		}
	}
	return nil, false
}

// UserFold implements sqlfilter.Message.
func (v *msgView) UserFold(name string) (any, bool) {
	if i := v.userIndex(name); i >= 0 {
		return v.m.ApplicationProperties[i].Value, true
	}
	return nil, false
}

// SetSystem implements sqlfilter.MutableMessage.
func (v *msgView) SetSystem(name string, val any) error {
	if v.m.Properties == nil {
		v.m.Properties = &amqp.Properties{}
	}
	p := v.m.Properties
	s, isString := val.(string)
	switch strings.ToLower(name) {
	case "messageid":
		p.MessageID = val
	case "correlationid":
		p.CorrelationID = val
	case "to":
		p.To = s
	case "replyto":
		p.ReplyTo = s
	case "label", "subject":
		p.Subject = s
	case "sessionid":
		p.GroupID = s
	case "replytosessionid":
		p.ReplyToGroupID = s
	case "contenttype":
		p.ContentType = amqp.Symbol(s)
	default:
		return core.Errorf(core.EINVALID, "The system property 'sys.%s' cannot be set.", name)
	}
	if !isString && val != nil && strings.ToLower(name) != "messageid" && strings.ToLower(name) != "correlationid" {
		return core.Errorf(core.EINVALID, "The system property 'sys.%s' takes a string.", name)
	}
	return nil
}

// SetUser implements sqlfilter.MutableMessage.
func (v *msgView) SetUser(name string, val any) {
	if i := v.userIndex(name); i >= 0 {
		v.m.ApplicationProperties[i].Value = val
		return
	}
	v.m.ApplicationProperties = append(v.m.ApplicationProperties, amqp.KV{Key: name, Value: val})
}

// RemoveUser implements sqlfilter.MutableMessage.
func (v *msgView) RemoveUser(name string) {
	for i := v.userIndex(name); i >= 0; i = v.userIndex(name) {
		v.m.ApplicationProperties = slices.Delete(v.m.ApplicationProperties, i, i+1)
	}
}
