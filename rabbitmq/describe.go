package rabbitmq

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// describe is the engine's Describe hook: a message's exchange, routing
// key and basic properties in the management API's words ("content_type",
// "delivery_mode", ...), each header as "headers.<name>" (values that are
// not strings in JSON). A message whose newest x-death entry names another
// queue than the one it is in is a dead letter from that queue (RB-9,
// RB-12); one back in the queue it died in (resubmitted) is not.
func describe(ent *core.Entity, it *core.Item) core.Description {
	if ent.Kind != kindQueue && ent.Kind != kindExchange { // an exchange's items are delayed messages (RB-15)
		return core.Description{}
	}
	m, ok := parseMeta(it.Meta)
	if !ok {
		return core.Description{}
	}
	props, err := wire.DecodeProperties(m.props)
	if err != nil {
		return core.Description{Properties: []core.Setting{{Key: "properties", Value: "undecodable: " + err.Error()}}}
	}
	d := core.Description{Properties: messageSettings(&m, &props)}
	if ent.Kind != kindQueue {
		return d
	}
	if dl, ok := deadLetterOf(ent.Name, &m, &props); ok {
		d.DeadLetter = &dl.info
	}
	return d
}

// messageSettings lists a message's exchange, routing keys, properties and
// headers.
func messageSettings(m *msgMeta, p *wire.Properties) []core.Setting {
	exchange := string(m.exchange)
	if exchange == "" {
		exchange = "(AMQP default)"
	}
	out := []core.Setting{{Key: "exchange", Value: exchange}, {Key: "routing_key", Value: string(m.key)}}
	if keys := m.keys(); len(keys) > 1 {
		out = append(out, core.Setting{Key: "routing_keys", Value: strings.Join(keys, ", ")})
	}
	f := p.Flags
	str := func(flag uint16, key, v string) {
		if f&flag != 0 {
			out = append(out, core.Setting{Key: key, Value: v})
		}
	}
	str(wire.FlagContentType, "content_type", p.ContentType)
	str(wire.FlagContentEncoding, "content_encoding", p.ContentEncoding)
	str(wire.FlagDeliveryMode, "delivery_mode", strconv.Itoa(int(p.DeliveryMode)))
	str(wire.FlagPriority, "priority", strconv.Itoa(int(p.Priority)))
	str(wire.FlagCorrelationID, "correlation_id", p.CorrelationID)
	str(wire.FlagReplyTo, "reply_to", p.ReplyTo)
	str(wire.FlagExpiration, "expiration", p.Expiration)
	str(wire.FlagMessageID, "message_id", p.MessageID)
	str(wire.FlagTimestamp, "timestamp", strconv.FormatInt(p.Timestamp.Unix(), 10))
	str(wire.FlagType, "type", p.Type)
	str(wire.FlagUserID, "user_id", p.UserID)
	str(wire.FlagAppID, "app_id", p.AppID)
	str(wire.FlagClusterID, "cluster_id", p.ClusterID)
	names := make([]string, 0, len(p.Headers))
	for k := range p.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, core.Setting{Key: "headers." + k, Value: headerText(p.Headers[k])})
	}
	return out
}

// headerText writes a header value as the management API shows it: a
// string as it is, anything else in JSON.
func headerText(v any) string {
	j := valueJSON(v)
	if s, ok := j.(string); ok {
		return s
	}
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// deadLetter is what a message's x-death header says of its last death.
type deadLetter struct {
	info  core.DeadLetterInfo
	queue string // the queue it died in, in the message's vhost
}

// deadLetterOf reads the newest x-death entry of a message in the queue
// whose entity is named entity; ok is false when the message is not a dead
// letter there.
func deadLetterOf(entity string, m *msgMeta, p *wire.Properties) (deadLetter, bool) {
	deaths, _ := p.Headers["x-death"].([]any)
	if len(deaths) == 0 {
		return deadLetter{}, false
	}
	first := deaths[0]
	queueName, ok := textValue(deathField(first, "queue"))
	// A queue's entity is its vhost part, a slash and its name (names.go);
	// the vhost part has no slash.
	i := strings.IndexByte(entity, '/')
	if !ok || i < 0 || entity[i+1:] == queueName {
		return deadLetter{}, false
	}
	reason, _ := textValue(deathField(first, "reason"))
	count, _ := toInt64(deathField(first, "count"))
	via := "the default exchange"
	if x := string(m.exchange); x != "" {
		via = "exchange '" + x + "'"
	}
	return deadLetter{queue: queueName, info: core.DeadLetterInfo{
		Reason:      reason,
		Description: fmt.Sprintf("dead-lettered from queue '%s' by %s (x-death count %d)", queueName, via, count),
		Source:      entity[:i+1] + queueName,
		Rule:        "RB-9",
	}}, true
}

// textValue returns a string or byte-array field value as a string.
func textValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

// resubmit is the engine's Resubmit hook (resubmitTo): a dead letter moved
// back to a priority queue takes its priority there (RB-14). It runs
// inside the engine's critical section, as deadLetter does.
func (s *Server) resubmit(dlq *core.Entity, it core.Item) (string, core.Item, error) {
	to, out, err := resubmitTo(dlq, it)
	if err != nil {
		return to, out, err
	}
	s.mu.RLock()
	q := s.queueByKeyLocked(core.EntityKey{Protocol: dlq.Protocol, Name: to})
	s.mu.RUnlock()
	if q != nil {
		out.Group = q.priorityGroup(out.Meta)
	}
	return to, out, nil
}

// resubmitTo is where and how a dead letter is resubmitted: it sends a dead letter back to
// the queue of its newest x-death entry as the management UI's "move
// messages" does (a shovel publishing to that queue through the default
// exchange): properties and headers as they are, x-death included, so the
// message keeps its history (and, back in the queue it died in, is no dead
// letter there); its routing key becomes the queue's name. The expiration
// property, which dead-lettering removed, is not brought back, so the
// queue's own TTL applies, counted from now (RB-1).
func resubmitTo(dlq *core.Entity, it core.Item) (string, core.Item, error) {
	m, ok := parseMeta(it.Meta)
	if !ok {
		return "", core.Item{}, core.Errorf(core.EINVALID, "message %d of %q cannot be read", it.Seq, dlq.Name)
	}
	props, err := wire.DecodeProperties(m.props)
	if err != nil {
		return "", core.Item{}, core.Errorf(core.EINVALID, "message %d of %q has properties that cannot be read: %v", it.Seq, dlq.Name, err)
	}
	dl, ok := deadLetterOf(dlq.Name, &m, &props)
	if !ok {
		return "", core.Item{}, core.Errorf(core.EINVALID, "message %d of %q is not a dead letter: it has no x-death header naming another queue", it.Seq, dlq.Name)
	}
	ttl := core.NoTTL
	if props.Flags&wire.FlagExpiration != 0 {
		if ttl, err = adapters.ParseRabbitExpiration(props.Expiration); err != nil {
			return "", core.Item{}, err
		}
	}
	out := core.Item{
		Body:       it.Body,
		Meta:       appendMeta(make([]byte, 0, 5+len(dl.queue)+len(m.props)), "", dl.queue, nil, m.props),
		TTL:        ttl,
		Persistent: props.DeliveryMode == 2,
	}
	return dl.info.Source, out, nil
}
