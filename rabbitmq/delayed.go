package rabbitmq

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// This file is the delayed-message exchange of the community plugin
// rabbitmq_delayed_message_exchange (RB-15), as its documentation and its
// 3.10 release describe it; Debian's RabbitMQ ships no such plugin to
// compare with. An exchange of type x-delayed-message routes as the type
// its x-delayed-type argument names. A message that reaches it with an
// x-delay header of more than 0 and at most 2^32-1 milliseconds is held,
// routed nowhere for now (so a mandatory publish is returned and an
// alternate exchange gets it, as with the plugin), and is routed when its
// delay has passed on lapse's clock, by the bindings there are then.
//
// A held message is an item of the exchange's own entity whose TTL is its
// delay, and whose entity's policy releases rather than expires
// (core.Release): the engine's timers release it at its due time, however
// far the clock jumps, its release is an event, it shows on the dashboard
// with its due time, and the store keeps it with a durable exchange (the
// plugin keeps every delayed message on disc, persistent or not). Deleting
// the exchange drops the messages it holds (docs/architecture.md: one
// expiring-entity core for everything).

// delayedType is the plugin's exchange type.
const delayedType = "x-delayed-message"

// maxDelay is the longest delay the plugin holds a message for, in
// milliseconds (an Erlang timer's limit); a longer one routes at once.
const maxDelay = math.MaxUint32

// delayedPolicy is the policy of a delayed exchange's entity: its items
// are held messages, released when their delay (their own TTL) is over.
func delayedPolicy() core.Policy {
	return core.Policy{OnExpire: core.Release,
		Rules: core.RuleIDs{ItemTTL: "RB-15", Expire: "RB-15", Never: "RB-15"}}
}

// checkDelayedType is the plugin's validation of a declare of a delayed
// exchange: x-delayed-type must name an exchange type, not the plugin's
// own.
func checkDelayedType(args map[string]any) (string, error) {
	var t string
	switch v := args["x-delayed-type"].(type) {
	case string:
		t = v
	case []byte:
		t = string(v)
	default:
		return "", channelError(wire.PreconditionFailed, "Invalid argument, 'x-delayed-type' must be an existing exchange type")
	}
	if t == delayedType {
		return "", channelError(wire.PreconditionFailed, "Invalid argument, 'x-delayed-message' can't be used for 'x-delayed-type'")
	}
	if !isBasicExchangeType(t) {
		return "", connectionError(wire.CommandInvalid, "unknown exchange type '%s'", t)
	}
	return t, nil
}

func isBasicExchangeType(t string) bool {
	switch t {
	case "direct", "fanout", "topic", "headers":
		return true
	}
	return false
}

// delayOf reads a message's x-delay header as the plugin does: any integer
// type, a string holding an integer, a float or decimal truncated. Another
// type, or no header, is no delay (0).
func delayOf(h map[string]any) int64 {
	v, ok := h["x-delay"]
	if !ok {
		return 0
	}
	if n, ok := toInt64(v); ok {
		return n
	}
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0
		}
		return n
	case float32:
		return int64(x)
	case float64:
		return int64(x)
	case wire.Decimal:
		d := int64(x.Value)
		for range x.Scale {
			d /= 10
		}
		return d
	}
	return 0
}

// holds reports whether a message with delay d is held (0 < d <= 2^32-1
// milliseconds); any other delay routes it at once.
func holds(d int64) bool { return d > 0 && d <= maxDelay }

// hold stores a message that exchange x of vhost vh holds for delay
// milliseconds, as an item of the exchange's entity due when the delay
// is over.
func (s *Server) hold(now time.Time, vh string, x *exchange, body, meta []byte, delay int64) (*core.Commit, error) {
	it := core.Item{Body: body, Meta: meta, TTL: core.After(time.Duration(delay) * time.Millisecond),
		Persistent: x.durable}
	_, c, err := s.e.Enqueue(now, s.exchangeKey(vh, x.name), it)
	return c, err
}

// releaseDelayed routes a held message whose delay is over through its delayed
// exchange, by the bindings there are now, as the plugin does: its
// x-delay header becomes the negated delay (so that no delayed exchange
// holds it again), and it enters its queues as a new message, its
// expiration counting from now. It runs inside the engine's critical
// section, as the DeadLetter hook of an exchange's entity; a message that
// routes nowhere is dropped.
func (s *Server) releaseDelayed(tx *core.Tx, from *core.Entity, it core.Item) {
	var xm exchangeMeta
	if json.Unmarshal(from.Meta, &xm) != nil {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := s.vhosts[xm.VHost]
	if v == nil {
		return
	}
	x := v.exchanges[xm.Name]
	if x == nil || x.delayed == "" {
		return
	}
	m, ok := parseMeta(it.Meta)
	if !ok {
		return
	}
	props, err := wire.DecodeProperties(m.props)
	if err != nil {
		return
	}
	if props.Headers == nil {
		props.Headers = map[string]any{}
	}
	d := delayOf(props.Headers)
	if d >= math.MinInt32 && d <= math.MaxInt32 {
		props.Headers["x-delay"] = int32(-d)
	} else {
		props.Headers["x-delay"] = -d
	}
	keys := m.keys()
	r := routing{keys: keys, headers: props.Headers, delay: -d}
	r.route(v, x)
	raw := props.Append(make([]byte, 0, len(m.props)+8))
	it.Meta = appendMeta(make([]byte, 0, 8+len(m.exchange)+len(keys[0])+len(raw)), string(m.exchange), keys[0], keys[1:], raw)
	it.TTL = core.NoTTL
	if props.Flags&wire.FlagExpiration != 0 {
		if ttl, err := adapters.ParseRabbitExpiration(props.Expiration); err == nil {
			it.TTL = ttl
		}
	}
	it.Persistent = props.DeliveryMode == 2
	it.DeliveryCount = 0
	for _, q := range r.queues {
		if _, err := tx.Enqueue(q.key, it); err != nil && core.ErrorCode(err) != core.EFULL {
			s.log().Warn("delayed message not released", "queue", q.name, "err", err)
		}
	}
}

// messagesDelayed is how many messages delayed exchange x holds, as the
// plugin reports it in the exchange's messages_delayed.
func (s *Server) messagesDelayed(vh, name string) int {
	c, _, err := s.e.Counts(s.now(), s.exchangeKey(vh, name))
	if err != nil {
		return 0
	}
	return c.Active
}
