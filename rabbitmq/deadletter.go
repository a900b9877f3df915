package rabbitmq

import (
	"bytes"
	"slices"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// deadLetter is the engine's DeadLetterFunc for RabbitMQ queues (RB-9,
// RB-12): it writes the x-death header as RabbitMQ 3.10's
// rabbit_dead_letter does, removes the expiration property and republishes
// the message through the queue's dead-letter exchange, dropping it when
// the queue has none, when that exchange does not exist, or for each
// target queue that would close a cycle with no rejection on it. It runs
// inside the engine's critical section. A delayed exchange's message whose
// delay is over comes here too, and is released (RB-15).
func (s *Server) deadLetter(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
	if from.Kind == kindExchange {
		s.releaseDelayed(tx, from, it) // a delayed exchange's held message (RB-15)
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	q := s.queueByKeyLocked(from.EntityKey)
	if q == nil {
		return
	}
	stp := q.settings.Load()
	if stp == nil || stp.DeadLetterExchange == nil {
		return
	}
	st := *stp
	// Messages dead-lettered together are mostly alike (a bulk expiry): the
	// same Meta, reason and second give the same result, computed once.
	now := tx.Now()
	// A dead letter is a new message in its new queue: never delivered yet.
	it.DeliveryCount = 0
	c := &q.dl
	if c.ok && c.settings == stp && c.version == s.version && c.reason == why.Code &&
		c.second == now.Unix() && bytes.Equal(c.in, it.Meta) {
		it.Meta, it.TTL = c.out, core.NoTTL
		for _, target := range c.targets {
			it.Group = target.priorityGroup(it.Meta) // RB-14: its priority in its new queue
			if _, err := tx.Enqueue(target.key, it); err != nil && core.ErrorCode(err) != core.EFULL {
				s.log().Warn("dead-lettering failed", "queue", target.name, "err", err)
			}
		}
		return
	}
	*c = deadLetterCache{settings: stp, version: s.version, reason: why.Code, second: now.Unix(), in: it.Meta}
	v := s.vhosts[q.vhost]
	var dlx *exchange
	if *st.DeadLetterExchange != "" {
		if dlx = v.exchanges[*st.DeadLetterExchange]; dlx == nil {
			return
		}
	}
	m, ok := parseMeta(it.Meta)
	if !ok {
		return
	}
	props, err := wire.DecodeProperties(m.props)
	if err != nil {
		return
	}
	if _, died := props.Headers["x-death"]; died {
		// A message that died before keeps the order of its x-death
		// entries' fields, which clients see (RB-12).
		if props, err = wire.DecodePropertiesOrdered(m.props); err != nil {
			return
		}
	}
	keys := m.keys()
	if props.Headers == nil {
		props.Headers = map[string]any{}
	}
	addDeath(props.Headers, why.Code, q.name, now, string(m.exchange), keys[0], &props)
	deathKeys := keys
	if st.DeadLetterRoutingKey != nil {
		deathKeys = []string{*st.DeadLetterRoutingKey}
		delete(props.Headers, "CC")
	}
	props.Flags &^= wire.FlagExpiration
	props.Expiration = ""

	r := routing{keys: deathKeys, headers: props.Headers, delay: delayOf(props.Headers)}
	r.route(v, dlx)
	raw := props.Append(make([]byte, 0, 256))
	it.Meta = appendMeta(make([]byte, 0, 8+len(*st.DeadLetterExchange)+len(deathKeys[0])+len(raw)),
		*st.DeadLetterExchange, deathKeys[0], deathKeys[1:], raw)
	it.TTL = core.NoTTL
	// A delayed exchange on the way holds its copy (RB-15); such a dead
	// letter is not cached.
	c.out, c.ok = it.Meta, len(r.held) == 0
	for _, x := range r.held {
		held := it
		held.TTL, held.Persistent = core.After(time.Duration(r.delay)*time.Millisecond), x.durable
		if _, err := tx.Enqueue(s.exchangeKey(q.vhost, x.name), held); err != nil {
			s.log().Warn("dead-lettering failed", "exchange", x.name, "err", err)
		}
	}
	deaths, _ := props.Headers["x-death"].([]any)
	for _, target := range r.queues {
		if isCycle(target.name, deaths) {
			s.log().Warn("dead-letter cycle: message dropped", "queue", target.name, "vhost", q.vhost)
			continue
		}
		c.targets = append(c.targets, target)
		it.Group = target.priorityGroup(it.Meta) // RB-14: its priority in its new queue
		if _, err := tx.Enqueue(target.key, it); err != nil && core.ErrorCode(err) != core.EFULL {
			s.log().Warn("dead-lettering failed", "queue", target.name, "err", err)
		}
	}
}

// deadLetterCache is the last dead-lettering of a queue: for an input Meta
// (exchange, routing keys, properties), reason, second, queue settings and
// topology version, the output Meta and the target queues. Only deadLetter
// uses it, inside the engine's critical section.
type deadLetterCache struct {
	ok       bool
	settings *adapters.RabbitQueueSettings
	version  uint64
	reason   string
	second   int64
	in, out  []byte
	targets  []*queue
}

// addDeath records a death in headers (rabbit_dead_letter's
// update_x_death_header, RB-12). The first death writes an x-death array of
// one entry in RabbitMQ's field order and the x-first-death-* headers; a
// later one counts up the entry of the same queue and reason, or adds one,
// and puts it first with its fields sorted by name. The other entries keep
// their fields' order; they are grouped by queue and reason as 3.10 does,
// which reverses their order when there are two or more. Entries decoded
// with their order are wire.OrderedTable, others maps.
func addDeath(h map[string]any, reason, queueName string, now time.Time, exchange, firstKey string, props *wire.Properties) {
	routingKeys := []any{firstKey}
	for _, k := range headerRoutes(h, "CC") {
		routingKeys = append(routingKeys, k)
	}
	info := wire.OrderedTable{
		{Key: "reason", Value: reason},
		{Key: "queue", Value: queueName},
		{Key: "time", Value: now.Truncate(time.Second).UTC()},
		{Key: "exchange", Value: exchange},
		{Key: "routing-keys", Value: routingKeys},
	}
	if props.Flags&wire.FlagExpiration != 0 {
		info = append(info, wire.Field{Key: "original-expiration", Value: props.Expiration})
	}
	old, isArray := h["x-death"].([]any)
	if !isArray {
		h["x-death"] = []any{append(wire.OrderedTable{{Key: "count", Value: int64(1)}}, info...)}
		h["x-first-death-reason"] = reason
		h["x-first-death-queue"] = queueName
		h["x-first-death-exchange"] = exchange
		return
	}
	grouped := groupDeaths(old)
	var entry map[string]any
	others := grouped[:0:0]
	for _, d := range grouped {
		if entry == nil && deathField(d, "queue") == queueName && deathField(d, "reason") == reason {
			entry = deathMap(d)
			n, _ := toInt64(entry["count"])
			entry["count"] = n + 1
			continue
		}
		others = append(others, d)
	}
	if entry == nil {
		entry = map[string]any{"count": int64(1)}
		for _, f := range info {
			entry[f.Key] = f.Value
		}
	}
	// A map is written with its keys sorted, which is 3.10's sort_field_table.
	h["x-death"] = append([]any{entry}, others...)
}

// deathMap returns a copy of an x-death entry as a map.
func deathMap(d any) map[string]any {
	out := map[string]any{}
	switch t := d.(type) {
	case map[string]any:
		for k, v := range t {
			out[k] = v
		}
	case wire.OrderedTable:
		for _, f := range t {
			if _, dup := out[f.Key]; !dup {
				out[f.Key] = f.Value
			}
		}
	}
	return out
}

// groupDeaths is 3.10's group_by_queue_and_reason: one entry per queue and
// reason (the first of each, "count" set from the group's size in front of
// its fields if it had none), in reverse order of first appearance.
func groupDeaths(deaths []any) []any {
	type key struct{ q, r any }
	var seen []key
	var out []any
	for _, d := range deaths {
		if !isDeathEntry(d) {
			continue
		}
		k := key{deathField(d, "queue"), deathField(d, "reason")}
		if slices.Contains(seen, k) {
			continue
		}
		seen = append(seen, k)
		n := 0
		for _, o := range deaths {
			if isDeathEntry(o) && deathField(o, "queue") == k.q && deathField(o, "reason") == k.r {
				n++
			}
		}
		if deathField(d, "count") == nil {
			switch t := d.(type) {
			case map[string]any:
				cp := deathMap(t)
				cp["count"] = int64(n)
				d = cp
			case wire.OrderedTable:
				d = append(wire.OrderedTable{{Key: "count", Value: int64(n)}}, t...)
			}
		}
		out = append([]any{d}, out...)
	}
	return out
}

// isDeathEntry reports whether d is a table, the only kind of x-death
// entry that grouping keeps.
func isDeathEntry(d any) bool {
	switch d.(type) {
	case map[string]any, wire.OrderedTable:
		return true
	}
	return false
}

// isCycle is rabbit_dead_letter:is_cycle: the message would re-enter queue,
// which its x-death history (newest first) already holds, and none of the
// deaths on the way back to it was a rejection.
func isCycle(queueName string, deaths []any) bool {
	for i, d := range deaths {
		if deathField(d, "queue") != queueName {
			continue
		}
		for _, c := range deaths[:i+1] {
			if deathField(c, "reason") == "rejected" {
				return false
			}
			if !isDeathEntry(c) {
				return false
			}
		}
		return true
	}
	return false
}

// deathField reads a field of an x-death entry, a map or an OrderedTable.
func deathField(d any, key string) any {
	switch t := d.(type) {
	case map[string]any:
		return t[key]
	case wire.OrderedTable:
		for _, f := range t {
			if f.Key == key {
				return f.Value
			}
		}
	}
	return nil
}
