package rabbitmq

import (
	"cmp"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// This file is the management API's exchanges (rabbit_mgmt_wm_exchange,
// _exchanges, _exchange_publish). The default exchange is "amq.default"
// in URLs and "" in replies.

// defaultExchangeURLName is the default exchange's name in URLs.
const defaultExchangeURLName = "amq.default"

// exchangeParam returns the path's exchange name, "" for amq.default.
func (m *Management) exchangeParam(c *gin.Context, key string) string {
	name := m.param(c, key)
	if name == defaultExchangeURLName {
		return ""
	}
	return name
}

// exchangeJSON is an exchange as GET /api/exchanges shows it; a delayed
// exchange has the plugin's messages_delayed too, the messages it holds
// (RB-15).
func (m *Management) exchangeJSON(x exchangeView) map[string]any {
	obj := map[string]any{
		"name":        x.name,
		"vhost":       x.vhost,
		"type":        x.kind,
		"durable":     x.durable,
		"auto_delete": x.autoDelete,
		"internal":    x.intern,
		"arguments":   tableJSON(x.args),
	}
	if x.kind == delayedType {
		obj["messages_delayed"] = m.s.messagesDelayed(x.vhost, x.name)
	}
	return obj
}

// GET /api/exchanges[/{vhost}]
func (m *Management) listExchanges(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	u := m.user(c)
	items := []map[string]any{}
	for _, x := range m.s.exchangesIn(vh) {
		if u.seesVhost(x.vhost) {
			items = append(items, m.exchangeJSON(x))
		}
	}
	m.replyList(c, items, []string{"vhost", "name"}, true)
}

// GET /api/exchanges/{vhost}/{name}
func (m *Management) getExchange(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	x, ok := m.s.lookupExchangeView(vh, m.exchangeParam(c, "name"))
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	obj := m.exchangeJSON(x)
	obj["incoming"], obj["outgoing"] = []any{}, []any{}
	m.reply(c, obj)
}

// PUT /api/exchanges/{vhost}/{name}: exchange.declare.
func (m *Management) putExchange(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errVhostNotFound)
		return
	}
	name := m.exchangeParam(c, "name")
	body, err := readBody(c)
	if err != nil {
		m.writeError(c, err)
		return
	}
	decl := &wire.ExchangeDeclare{Exchange: name}
	if decl.Type, err = bodyString(body, "type", "direct"); err == nil {
		if decl.Durable, err = bodyBool(body, "durable"); err == nil {
			if decl.AutoDelete, err = bodyBool(body, "auto_delete"); err == nil {
				if decl.Internal, err = bodyBool(body, "internal"); err == nil {
					decl.Arguments, err = jsonToTable(body["arguments"])
				}
			}
		}
	}
	if err != nil {
		m.writeError(c, err)
		return
	}
	if err := m.permitted(c, vh, configure, "exchange", name); err != nil {
		m.writeError(c, directError(err))
		return
	}
	existed := name != "" && m.s.lookupExchange(vh, name) != nil
	if err := m.s.exchangeDeclare(vh, decl); err != nil {
		m.writeError(c, directError(err))
		return
	}
	created(c, existed)
}

// DELETE /api/exchanges/{vhost}/{name}[?if-unused=true]
func (m *Management) deleteExchange(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	name := m.exchangeParam(c, "name")
	if _, ok := m.s.lookupExchangeView(vh, name); !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	if err := m.permitted(c, vh, configure, "exchange", name); err != nil {
		m.writeError(c, directError(err))
		return
	}
	if err := m.s.exchangeDelete(vh, name, c.Query("if-unused") == "true"); err != nil {
		m.writeError(c, directError(err))
		return
	}
	noContent(c)
}

// POST /api/exchanges/{vhost}/{name}/publish: basic.publish with
// mandatory set, on a channel in confirm mode, as
// rabbit_mgmt_wm_exchange_publish does; the reply comes once the message
// is stored and says whether it reached a queue.
func (m *Management) publishMessage(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		// RabbitMQ's API cannot open its channel to a missing vhost.
		m.writeError(c, errAccessRefused)
		return
	}
	x := m.exchangeParam(c, "name")
	body, err := readBody(c)
	if err == nil {
		err = requireKeys(body, "routing_key", "properties", "payload", "payload_encoding")
	}
	if err != nil {
		m.writeError(c, err)
		return
	}
	payload, isStr := body["payload"].(string)
	key, keyStr := body["routing_key"].(string)
	if !isStr || !keyStr {
		m.writeError(c, badRequest("payload_not_string"))
		return
	}
	props, err := basicProperties(body["properties"])
	if err != nil {
		m.writeError(c, err)
		return
	}
	var raw []byte
	switch enc := body["payload_encoding"]; enc {
	case "string":
		raw = []byte(payload)
	case "base64":
		if raw, err = base64.StdEncoding.DecodeString(payload); err != nil {
			m.writeError(c, badRequest([]any{"not_base64", payload}))
			return
		}
	default:
		m.writeError(c, badRequest([]any{"unsupported_encoding", enc}))
		return
	}
	u := m.user(c)
	// RabbitMQ checks the default exchange's permissions as amq.default.
	if err := m.permitted(c, vh, write, "exchange", cmp.Or(x, defaultExchangeURLName)); err != nil {
		m.writeError(c, publishError(err))
		return
	}
	if err := m.s.checkPublish(vh, x); err != nil {
		m.writeError(c, publishError(err))
		return
	}
	if props.Flags&wire.FlagUserID != 0 && props.UserID != u.Name {
		m.writeError(c, publishError(channelError(wire.PreconditionFailed,
			"user_id property set to '%s' but authenticated user was '%s'", props.UserID, u.Name)))
		return
	}
	msg := newAPIMessage(x, key, props, raw)
	msg.mandatory = true
	if props.Flags&wire.FlagExpiration != 0 {
		ttl, err := adapters.ParseRabbitExpiration(props.Expiration) // RB-5, RB-11
		if err != nil {
			m.writeError(c, publishError(channelError(wire.PreconditionFailed, "%s", core.ErrorMessage(err))))
			return
		}
		msg.ttl = ttl
	}
	res, err := m.s.publish(vh, msg)
	if err != nil {
		m.writeError(c, publishError(err))
		return
	}
	if res.commit != nil {
		if err := res.commit.Wait(c.Request.Context()); err != nil {
			m.writeError(c, err)
			return
		}
	}
	if res.rejected {
		m.writeError(c, badRequest("rejected Unable to publish message. Check queue limits."))
		return
	}
	m.writeJSON(c, http.StatusOK, map[string]any{"routed": res.routed > 0})
}

// newAPIMessage is a message the API publishes.
func newAPIMessage(exchange, key string, props wire.Properties, body []byte) *message {
	raw := props.Append(nil)
	return &message{exchange: exchange, routingKey: key, props: props, rawProps: raw,
		meta: appendMeta(nil, exchange, key, nil, raw), body: body, ttl: core.NoTTL}
}

// basicProperties reads the properties of a publish as
// rabbit_mgmt_format:to_basic_properties does: delivery_mode, priority
// and timestamp (seconds) are integers, headers a table, the rest strings;
// unknown keys are ignored.
func basicProperties(v any) (wire.Properties, error) {
	var p wire.Properties
	obj, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return p, nil
		}
		return p, badRequest([]any{"not_a_table", "properties"})
	}
	str := func(key string, flag uint16, dst *string) error {
		raw, ok := obj[key]
		if !ok || raw == nil {
			return nil
		}
		s, ok := raw.(string)
		if !ok {
			return badRequest([]any{"not_string", key})
		}
		*dst = s
		p.Flags |= flag
		return nil
	}
	octet := func(key string, flag uint16, dst *uint8) error {
		raw, ok := obj[key]
		if !ok || raw == nil {
			return nil
		}
		n, err := jsonInt(raw)
		if err != nil || n < 0 || n > 255 {
			return badRequest([]any{"not_int", key})
		}
		*dst = uint8(n)
		p.Flags |= flag
		return nil
	}
	var ts string
	steps := []func() error{
		func() error { return str("content_type", wire.FlagContentType, &p.ContentType) },
		func() error { return str("content_encoding", wire.FlagContentEncoding, &p.ContentEncoding) },
		func() error {
			h, ok := obj["headers"]
			if !ok || h == nil {
				return nil
			}
			t, err := jsonToTable(h)
			if err != nil {
				return err
			}
			if t == nil {
				t = map[string]any{}
			}
			p.Headers = t
			p.Flags |= wire.FlagHeaders
			return nil
		},
		func() error { return octet("delivery_mode", wire.FlagDeliveryMode, &p.DeliveryMode) },
		func() error { return octet("priority", wire.FlagPriority, &p.Priority) },
		func() error { return str("correlation_id", wire.FlagCorrelationID, &p.CorrelationID) },
		func() error { return str("reply_to", wire.FlagReplyTo, &p.ReplyTo) },
		func() error { return str("expiration", wire.FlagExpiration, &p.Expiration) },
		func() error { return str("message_id", wire.FlagMessageID, &p.MessageID) },
		func() error {
			raw, ok := obj["timestamp"]
			if !ok || raw == nil {
				return nil
			}
			n, err := jsonInt(raw)
			if err != nil {
				return badRequest([]any{"not_int", "timestamp"})
			}
			p.Timestamp = time.Unix(n, 0).UTC()
			p.Flags |= wire.FlagTimestamp
			return nil
		},
		func() error { return str("type", wire.FlagType, &p.Type) },
		func() error { return str("user_id", wire.FlagUserID, &p.UserID) },
		func() error { return str("app_id", wire.FlagAppID, &p.AppID) },
		func() error { return str("cluster_id", wire.FlagClusterID, &ts) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return wire.Properties{}, err
		}
	}
	p.ClusterID = ts
	return p, nil
}

// jsonInt reads a JSON integer (not a float, not a string).
func jsonInt(v any) (int64, error) {
	if n, ok := v.(interface{ Int64() (int64, error) }); ok {
		return n.Int64()
	}
	return 0, core.Errorf(core.EINVALID, "not an integer")
}
