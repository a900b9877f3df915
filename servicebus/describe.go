package servicebus

import (
	"encoding/base64"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// describe is the engine's Describe hook: a message's properties as
// azservicebus's ReceivedMessage names them, and for a dead letter its
// DeadLetterReason, DeadLetterErrorDescription and the queue or
// subscription it came from. A message is a dead letter when it is in a
// dead-letter queue (it came from the queue or subscription the queue
// belongs to), or when it was dead-lettered and forwarded
// (ForwardDeadLetteredMessagesTo: it came from x-opt-deadletter-source).
func describe(ent *core.Entity, it *core.Item) core.Description {
	meta := readItemMeta(it.Meta)
	var d core.Description
	if m, err := amqp.UnmarshalMessage(it.Body); err == nil {
		d.Properties = messageProperties(m, &meta)
		d.Payload = payload(m)
	} else {
		d.Properties = []core.Setting{{Key: "Body", Value: "the message could not be decoded: " + err.Error()}}
	}
	if src, ok := deadLetterSource(ent, &meta); ok {
		d.DeadLetter = &core.DeadLetterInfo{Reason: meta.DeadLetterReason, Description: meta.DeadLetterDescription, Source: src}
		if meta.DeadLetterReason == ttlExpiredReason {
			d.DeadLetter.Rule = "SB-8"
		}
	}
	return d
}

// payload is a message's body as azservicebus's ReceivedMessage.Body gives
// it: its data sections joined; an amqp-value body that is a string or
// binary is shown as that, any other value in the package's text form.
func payload(m *amqp.Message) []byte {
	switch {
	case len(m.Data) == 1:
		return m.Data[0]
	case len(m.Data) > 1:
		var b []byte
		for _, d := range m.Data {
			b = append(b, d...)
		}
		return b
	case m.HasValue:
		switch v := m.Value.(type) {
		case string:
			return []byte(v)
		case []byte:
			return v
		}
		return []byte(formatValue(m.Value))
	}
	return []byte{}
}

// deadLetterSource returns the entity a dead letter of ent came from; ok is
// false for a message that is not a dead letter.
func deadLetterSource(ent *core.Entity, meta *itemMeta) (string, bool) {
	switch {
	case ent.Kind == kindDLQ || ent.Kind == kindTransferDLQ:
		return ent.Parent, true
	case meta.DeadLetterSource != "":
		return meta.DeadLetterSource, true
	}
	return "", false
}

// messageProperties lists a message's properties in azservicebus's words,
// those that are set: the properties section, the partition key and
// scheduled time annotations, the message's own TimeToLive, the
// dead-letter fields, then each application property as
// "ApplicationProperties.<name>", those a settlement changed included.
func messageProperties(m *amqp.Message, meta *itemMeta) []core.Setting {
	var out []core.Setting
	add := func(k, v string) {
		if v != "" {
			out = append(out, core.Setting{Key: k, Value: v})
		}
	}
	if p := m.Properties; p != nil {
		add("MessageID", formatValue(p.MessageID))
		add("CorrelationID", formatValue(p.CorrelationID))
		add("SessionID", p.GroupID)
		add("ReplyToSessionID", p.ReplyToGroupID)
		add("Subject", p.Subject)
		add("ContentType", string(p.ContentType))
		add("To", p.To)
		add("ReplyTo", p.ReplyTo)
	}
	if v, ok := m.MessageAnnotations.Get(annPartitionKey); ok {
		add("PartitionKey", formatValue(v))
	}
	if v, ok := m.MessageAnnotations.Get(annScheduledEnqueueTime); ok {
		add("ScheduledEnqueueTime", formatValue(v))
	}
	if m.Header != nil && m.Header.TTL != nil {
		add("TimeToLive", core.After(time.Duration(*m.Header.TTL)*time.Millisecond).String())
	}
	add(propDeadLetterReason, meta.DeadLetterReason)
	add(propDeadLetterDesc, meta.DeadLetterDescription)
	add("DeadLetterSource", meta.DeadLetterSource)
	app := m.ApplicationProperties
	if len(meta.Modified) > 0 {
		if v, _, err := amqp.ReadValue(meta.Modified); err == nil {
			if mod, ok := v.(amqp.Map); ok {
				app = append(amqp.Map(nil), app...)
				for _, kv := range mod {
					app = app.Set(kv.Key, kv.Value)
				}
			}
		}
	}
	for _, kv := range app {
		k := formatValue(kv.Key)
		if k == propDeadLetterReason || k == propDeadLetterDesc {
			continue // shown above, as the SDK does
		}
		out = append(out, core.Setting{Key: "ApplicationProperties." + k, Value: formatValue(kv.Value)})
	}
	return out
}

// formatValue writes an AMQP value for people: times in RFC 3339, UUIDs in
// their usual form, binary as text when it is UTF-8 (else base64).
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case amqp.Symbol:
		return string(x)
	case amqp.UUID:
		return x.String()
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// resubmit is the engine's Resubmit hook: a dead letter goes back to the
// queue or subscription it came from as the message its sender sent, with
// the dead-letter reason, description and source removed and the
// application properties a settlement changed kept. Its TTL is the
// message's own again (the dead-letter queue dropped it), for a
// subscription cut to its topic's default as a copy of a new send is
// (SB-5); the source's policy does the rest, counted from now.
func (s *Server) resubmit(dlq *core.Entity, it core.Item) (string, core.Item, error) {
	meta := readItemMeta(it.Meta)
	src, ok := deadLetterSource(dlq, &meta)
	if !ok {
		return "", core.Item{}, core.Errorf(core.EINVALID, "message %d of %q is not a dead letter: only messages of a dead-letter queue, or dead-lettered and forwarded, can be resubmitted", it.Seq, dlq.Name)
	}
	if src == "" {
		return "", core.Item{}, core.Errorf(core.EINVALID, "message %d of %q cannot be resubmitted: the entity it was dead-lettered from is unknown", it.Seq, dlq.Name)
	}
	in, err := s.readMessage(it.Body)
	if err != nil {
		return "", core.Item{}, err
	}
	ttl := in.ttl
	if ad, ok := parseAddress(src); ok && ad.sub != "" {
		if te := s.topic(ad.entity); te != nil {
			s.mu.RLock()
			pol := te.pol
			s.mu.RUnlock()
			ttl = adapters.ServiceBusCopyTTL(pol, ttl)
		}
	}
	out := core.Item{Body: it.Body, TTL: ttl, Persistent: true}
	if s.pathRequiresSession(src) {
		if out.Group = in.sessionID(); out.Group == "" {
			return "", core.Item{}, core.Errorf(core.EINVALID, "message %d of %q cannot be resubmitted: it has no session id and %q requires sessions", it.Seq, dlq.Name, src)
		}
	}
	meta.DeadLetterReason, meta.DeadLetterDescription, meta.DeadLetterSource = "", "", ""
	meta.EnqueuedSeq = 0
	out.Meta = meta.marshal()
	return src, out, nil
}
