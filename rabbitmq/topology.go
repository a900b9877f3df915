package rabbitmq

import (
	"encoding/json"
	"slices"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// vhost is a virtual host: its exchanges, queues and policies.
type vhost struct {
	name       string
	exchanges  map[string]*exchange
	queues     map[string]*queue
	policies   map[string]adapters.RabbitPolicy
	opPolicies map[string]adapters.RabbitPolicy
}

func newVhost(name string) *vhost {
	return &vhost{name: name, exchanges: map[string]*exchange{}, queues: map[string]*queue{},
		policies: map[string]adapters.RabbitPolicy{}, opPolicies: map[string]adapters.RabbitPolicy{}}
}

// exchange is an exchange and the bindings it is the source of.
type exchange struct {
	vhost      string
	name       string
	kind       string // direct, fanout, topic, headers, x-delayed-message
	delayed    string // a delayed exchange's x-delayed-type, the type it routes as (RB-15)
	durable    bool
	autoDelete bool
	internal   bool
	args       map[string]any
	bindings   []*binding
	byKey      map[string][]*binding // direct exchanges: bindings by routing key
	inbound    []*binding            // bindings to it from other exchanges
}

// routes is the exchange type x routes as: its own, or a delayed
// exchange's x-delayed-type.
func (x *exchange) routes() string {
	if x.delayed != "" {
		return x.delayed
	}
	return x.kind
}

// binding routes from an exchange to a queue or to another exchange.
type binding struct {
	source *exchange
	queue  *queue    // the destination queue, or
	dest   *exchange // the destination exchange
	key    string
	args   map[string]any
	argsID string   // args as encoded on the wire, for identity
	words  []string // a topic exchange's pattern
}

func (b *binding) destName() string {
	if b.queue != nil {
		return b.queue.name
	}
	return b.dest.name
}

func (b *binding) destType() string {
	if b.queue != nil {
		return "queue"
	}
	return "exchange"
}

// durable bindings are kept: both their ends are durable.
func (b *binding) durable() bool {
	if b.queue != nil {
		return b.source.durable && b.queue.durable
	}
	return b.source.durable && b.dest.durable
}

// The exchange types RabbitMQ 3.10 has without plugins, and the delayed
// message exchange of the plugin teams add (RB-15).
var exchangeTypes = []string{"direct", "fanout", "topic", "headers", delayedType}

// The exchanges every vhost has.
var predeclared = []struct{ name, kind string }{
	{"amq.direct", "direct"}, {"amq.fanout", "fanout"}, {"amq.topic", "topic"},
	{"amq.headers", "headers"}, {"amq.match", "headers"}, {"amq.rabbitmq.trace", "topic"},
}

// Stored forms of the topology, in the entities' Meta.

type vhostMeta struct {
	Name string `json:"name"`
}

type exchangeMeta struct {
	VHost      string        `json:"vhost"`
	Name       string        `json:"name"`
	Type       string        `json:"type"`
	Durable    bool          `json:"durable"`
	AutoDelete bool          `json:"auto_delete"`
	Internal   bool          `json:"internal"`
	Arguments  []byte        `json:"arguments,omitempty"` // a field table as encoded on the wire
	Bindings   []bindingMeta `json:"bindings,omitempty"`
}

type bindingMeta struct {
	Destination     string `json:"destination"`
	DestinationType string `json:"destination_type"`
	RoutingKey      string `json:"routing_key"`
	Arguments       []byte `json:"arguments,omitempty"`
}

type queueMeta struct {
	VHost      string `json:"vhost"`
	Name       string `json:"name"`
	Durable    bool   `json:"durable"`
	AutoDelete bool   `json:"auto_delete"`
	Arguments  []byte `json:"arguments,omitempty"`
}

type policyMeta struct {
	VHost      string         `json:"vhost"`
	Name       string         `json:"name"`
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Priority   int            `json:"priority"`
	Definition map[string]any `json:"definition"`
}

func encodeTable(t map[string]any) []byte {
	if len(t) == 0 {
		return nil
	}
	return wire.AppendTable(nil, t)
}

func decodeTable(b []byte) map[string]any {
	if len(b) == 0 {
		return nil
	}
	t, _, err := wire.ReadTable(b)
	if err != nil {
		return nil
	}
	return t
}

func (x *exchange) meta() []byte {
	m := exchangeMeta{VHost: x.vhost, Name: x.name, Type: x.kind, Durable: x.durable,
		AutoDelete: x.autoDelete, Internal: x.internal, Arguments: encodeTable(x.args)}
	for _, b := range x.bindings {
		if b.durable() {
			m.Bindings = append(m.Bindings, bindingMeta{Destination: b.destName(), DestinationType: b.destType(),
				RoutingKey: b.key, Arguments: []byte(b.argsID)})
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// recovered rebuilds the topology from the entities the store kept: vhosts
// first, then exchanges, queues, policies, and last the bindings. It runs
// before anything is served, outside the engine's lock
// (core.ProtocolHooks.Recovered).
func (s *Server) recovered(ents []core.Entity) {
	s.lockTopo()
	defer s.mu.Unlock()
	byKind := map[string][]core.Entity{}
	for _, en := range ents {
		byKind[en.Kind] = append(byKind[en.Kind], en)
	}
	for _, en := range byKind[kindVhost] {
		var m vhostMeta
		if json.Unmarshal(en.Meta, &m) == nil {
			s.vhosts[m.Name] = newVhost(m.Name)
		}
	}
	v := func(name string) *vhost {
		if s.vhosts[name] == nil {
			s.vhosts[name] = newVhost(name)
		}
		return s.vhosts[name]
	}
	var pending []exchangeMeta
	for _, en := range byKind[kindExchange] {
		var m exchangeMeta
		if json.Unmarshal(en.Meta, &m) != nil {
			continue
		}
		x := &exchange{vhost: m.VHost, name: m.Name, kind: m.Type, durable: m.Durable,
			autoDelete: m.AutoDelete, internal: m.Internal, args: decodeTable(m.Arguments)}
		if x.kind == delayedType {
			x.delayed, _ = checkDelayedType(x.args)
		}
		v(m.VHost).exchanges[m.Name] = x
		pending = append(pending, m)
	}
	for _, en := range byKind[kindQueue] {
		var m queueMeta
		if json.Unmarshal(en.Meta, &m) != nil {
			continue
		}
		q := s.newQueue(m.VHost, m.Name, m.Durable, false, m.AutoDelete, decodeTable(m.Arguments))
		q.h = en.Handle
		v(m.VHost).queues[m.Name] = q
		s.byKey[q.key] = q
	}
	for _, kind := range []string{kindPolicy, kindOperatorPolicy} {
		for _, en := range byKind[kind] {
			var m policyMeta
			if json.Unmarshal(en.Meta, &m) != nil {
				continue
			}
			p := adapters.RabbitPolicy{Name: m.Name, VHost: m.VHost, Pattern: m.Pattern, ApplyTo: m.ApplyTo,
				Priority: m.Priority, Definition: m.Definition}
			if kind == kindPolicy {
				v(m.VHost).policies[m.Name] = p
			} else {
				v(m.VHost).opPolicies[m.Name] = p
			}
		}
	}
	for _, m := range pending {
		vh := s.vhosts[m.VHost]
		x := vh.exchanges[m.Name]
		for _, bm := range m.Bindings {
			b := &binding{source: x, key: bm.RoutingKey, args: decodeTable(bm.Arguments), argsID: string(bm.Arguments)}
			if bm.DestinationType == "queue" {
				b.queue = vh.queues[bm.Destination]
			} else {
				b.dest = vh.exchanges[bm.Destination]
			}
			if b.queue != nil || b.dest != nil {
				x.addBinding(b)
			}
		}
	}
	for _, vh := range s.vhosts {
		for _, q := range vh.queues {
			q.setSettings(adapters.RabbitQueueEffective(vh.name, q.name, q.args, policyList(vh.policies), policyList(vh.opPolicies)))
		}
	}
}

func policyList(m map[string]adapters.RabbitPolicy) []adapters.RabbitPolicy {
	out := make([]adapters.RabbitPolicy, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b adapters.RabbitPolicy) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// addBinding adds b to its source exchange's tables.
func (x *exchange) addBinding(b *binding) {
	x.bindings = append(x.bindings, b)
	switch x.routes() {
	case "direct":
		if x.byKey == nil {
			x.byKey = map[string][]*binding{}
		}
		x.byKey[b.key] = append(x.byKey[b.key], b)
	case "topic":
		b.words = splitTopic(b.key)
	}
	if b.queue != nil {
		b.queue.inbound = append(b.queue.inbound, b)
	} else {
		b.dest.inbound = append(b.dest.inbound, b)
	}
}

// removeBinding takes b out of its source exchange's and destination's tables.
func (x *exchange) removeBinding(b *binding) {
	x.bindings = slices.DeleteFunc(x.bindings, func(o *binding) bool { return o == b })
	if x.byKey != nil {
		l := slices.DeleteFunc(x.byKey[b.key], func(o *binding) bool { return o == b })
		if len(l) == 0 {
			delete(x.byKey, b.key)
		} else {
			x.byKey[b.key] = l
		}
	}
	if b.queue != nil {
		b.queue.inbound = slices.DeleteFunc(b.queue.inbound, func(o *binding) bool { return o == b })
	} else {
		b.dest.inbound = slices.DeleteFunc(b.dest.inbound, func(o *binding) bool { return o == b })
	}
}

// findBinding returns x's binding to the destination with key and args.
func (x *exchange) findBinding(q *queue, dest *exchange, key, argsID string) *binding {
	for _, b := range x.bindings {
		if b.queue == q && b.dest == dest && b.key == key && b.argsID == argsID {
			return b
		}
	}
	return nil
}
