package rabbitmq

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// This file declares and deletes vhosts and exchanges, as RabbitMQ 3.10's
// rabbit_channel and rabbit_exchange do, with their reply texts.

// rs is rabbit_misc:rs, how RabbitMQ names a resource in its texts.
func rs(kind, name, vhost string) string {
	return fmt.Sprintf("%s '%s' in vhost '%s'", kind, name, vhost)
}

// declareVhost creates a vhost with its predeclared exchanges, if it does
// not exist.
func (s *Server) declareVhost(name string) (*vhost, error) {
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	s.lockTopo()
	vh := s.vhosts[name]
	if vh == nil {
		vh = newVhost(name)
		s.vhosts[name] = vh
	}
	s.mu.Unlock()
	now := s.now()
	if _, ok := s.e.Entity(vhostKey(name)); !ok {
		meta, _ := json.Marshal(vhostMeta{Name: name})
		if _, _, err := s.e.Create(now, core.Entity{EntityKey: vhostKey(name), Kind: kindVhost, Durable: true, Meta: meta}); err != nil && core.ErrorCode(err) != core.ECONFLICT {
			return nil, err
		}
	}
	for _, p := range predeclared {
		if s.lookupExchange(name, p.name) != nil {
			continue
		}
		x := &exchange{vhost: name, name: p.name, kind: p.kind, durable: true, internal: p.name == "amq.rabbitmq.trace"}
		if err := s.createExchange(x); err != nil {
			return nil, err
		}
	}
	return vh, nil
}

// deleteVhost removes a vhost and everything in it.
func (s *Server) deleteVhost(name string) error {
	s.topoMu.Lock()
	s.lockTopo()
	vh := s.vhosts[name]
	delete(s.vhosts, name)
	if vh != nil {
		for _, q := range vh.queues {
			delete(s.byKey, q.key)
		}
	}
	s.mu.Unlock()
	s.topoMu.Unlock()
	if vh == nil {
		return core.Errorf(core.ENOTFOUND, "vhost %q not found", name)
	}
	now := s.now()
	for _, q := range vh.queues {
		q.stop()
		s.e.Delete(now, q.key)
	}
	for _, x := range vh.exchanges {
		s.e.Delete(now, s.exchangeKey(name, x.name))
	}
	for n := range vh.policies {
		s.e.Delete(now, s.policyKey(name, n, false))
	}
	for n := range vh.opPolicies {
		s.e.Delete(now, s.policyKey(name, n, true))
	}
	s.e.Delete(now, vhostKey(name))
	return nil
}

// openIn marks c open in vhost vh, unless vh is gone: under the lock
// deleteVhost removes vhosts with, so that a connection either finds its
// vhost deleted or is among the open ones once the deletion is done, and
// before the client is told it is open.
func (s *Server) openIn(c *conn, vh string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.vhosts[vh] == nil {
		return false
	}
	c.vhost = vh
	c.open.Store(true)
	return true
}

func (s *Server) lookupVhost(name string) *vhost {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.vhosts[name]
}

func (s *Server) lookupExchange(vh, name string) *exchange {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if v := s.vhosts[vh]; v != nil {
		return v.exchanges[name]
	}
	return nil
}

// createExchange adds a new exchange to the engine and the topology.
// Callers hold topoMu.
func (s *Server) createExchange(x *exchange) error {
	en := core.Entity{EntityKey: s.exchangeKey(x.vhost, x.name), Kind: kindExchange, Durable: x.durable, Meta: x.meta()}
	if x.delayed != "" {
		en.Policy = delayedPolicy() // its items are the messages it holds (RB-15)
	}
	for k, v := range x.args {
		en.Settings = append(en.Settings, core.Setting{Key: k, Value: fmt.Sprint(v)})
	}
	if _, _, err := s.e.Create(s.now(), en); err != nil {
		return err
	}
	s.lockTopo()
	defer s.mu.Unlock()
	vh := s.vhosts[x.vhost]
	if vh == nil {
		return core.Errorf(core.ENOTFOUND, "vhost %q not found", x.vhost)
	}
	vh.exchanges[x.name] = x
	return nil
}

// persistExchange writes an exchange's declaration and durable bindings
// to the store. Callers hold topoMu.
func (s *Server) persistExchange(x *exchange) {
	if !x.durable {
		return
	}
	s.mu.RLock()
	meta := x.meta()
	s.mu.RUnlock()
	s.e.Update(s.now(), s.exchangeKey(x.vhost, x.name), func(en *core.Entity) error {
		en.Meta = meta
		return nil
	})
}

// exchangeDeclare is exchange.declare.
func (s *Server) exchangeDeclare(vh string, m *wire.ExchangeDeclare) error {
	if m.Passive {
		if m.Exchange == "" {
			return channelError(wire.AccessRefused, "operation not permitted on the default exchange")
		}
		if s.lookupExchange(vh, m.Exchange) == nil {
			return notFoundExchange(vh, m.Exchange)
		}
		return nil
	}
	if !slices.Contains(exchangeTypes, m.Type) {
		return connectionError(wire.CommandInvalid, "unknown exchange type '%s'", m.Type)
	}
	if m.Exchange == "" {
		return channelError(wire.AccessRefused, "operation not permitted on the default exchange")
	}
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	if x := s.lookupExchange(vh, m.Exchange); x != nil {
		return exchangeEquivalent(x, m)
	}
	if strings.HasPrefix(m.Exchange, "amq.") {
		return channelError(wire.AccessRefused, "exchange name '%s' contains reserved prefix 'amq.*'", m.Exchange)
	}
	if ae, ok := m.Arguments["alternate-exchange"]; ok {
		if _, isStr := ae.(string); !isStr {
			return channelError(wire.PreconditionFailed, "invalid type '%s' for arg 'alternate-exchange' in %s",
				fieldTypeName(ae), rs("exchange", m.Exchange, vh))
		}
	}
	x := &exchange{vhost: vh, name: m.Exchange, kind: m.Type, durable: m.Durable, autoDelete: m.AutoDelete,
		internal: m.Internal, args: m.Arguments}
	if m.Type == delayedType {
		t, err := checkDelayedType(m.Arguments) // RB-15
		if err != nil {
			return err
		}
		x.delayed = t
	}
	return s.createExchange(x)
}

// exchangeEquivalent is rabbit_exchange:assert_equivalence.
func exchangeEquivalent(x *exchange, m *wire.ExchangeDeclare) error {
	name := rs("exchange", x.name, x.vhost)
	for _, f := range []struct {
		key       string
		cur, recv string
	}{
		{"type", x.kind, m.Type},
		{"durable", fmt.Sprint(x.durable), fmt.Sprint(m.Durable)},
		{"auto_delete", fmt.Sprint(x.autoDelete), fmt.Sprint(m.AutoDelete)},
		{"internal", fmt.Sprint(x.internal), fmt.Sprint(m.Internal)},
	} {
		if f.cur != f.recv {
			return channelError(wire.PreconditionFailed, "inequivalent arg '%s' for %s: received '%s' but current is '%s'",
				f.key, name, f.recv, f.cur)
		}
	}
	cur, cok := x.args["alternate-exchange"]
	recv, rok := m.Arguments["alternate-exchange"]
	switch {
	case cok && rok && (fieldTypeName(cur) != fieldTypeName(recv) || fmt.Sprint(cur) != fmt.Sprint(recv)):
		return channelError(wire.PreconditionFailed, "inequivalent arg 'alternate-exchange' for %s: received '%v' but current is '%v'", name, recv, cur)
	case cok && !rok:
		return channelError(wire.PreconditionFailed, "inequivalent arg 'alternate-exchange' for %s: received none but current is the value '%v' of type '%s'", name, cur, fieldTypeName(cur))
	case !cok && rok:
		return channelError(wire.PreconditionFailed, "inequivalent arg 'alternate-exchange' for %s: received the value '%v' of type '%s' but current is none", name, recv, fieldTypeName(recv))
	}
	return nil
}

// fieldTypeName is the RabbitMQ name of a table value's type.
func fieldTypeName(v any) string {
	switch v.(type) {
	case bool:
		return "bool"
	case int8:
		return "byte"
	case uint8:
		return "unsignedbyte"
	case int16:
		return "short"
	case uint16:
		return "unsignedshort"
	case int32:
		return "signedint"
	case uint32:
		return "unsignedint"
	case int64, int, uint64, uint:
		return "long"
	case float32:
		return "float"
	case float64:
		return "double"
	case wire.Decimal:
		return "decimal"
	case string:
		return "longstr"
	case []byte:
		return "binary"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	case nil:
		return "void"
	}
	return "timestamp"
}

// exchangeDelete is exchange.delete.
func (s *Server) exchangeDelete(vh, name string, ifUnused bool) error {
	if name == "" {
		return channelError(wire.AccessRefused, "operation not permitted on the default exchange")
	}
	if strings.HasPrefix(name, "amq.") {
		return channelError(wire.AccessRefused, "deletion of system %s not allowed", rs("exchange", name, vh))
	}
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	x := s.lookupExchange(vh, name)
	if x == nil {
		return nil
	}
	s.mu.RLock()
	inUse := len(x.bindings) > 0
	s.mu.RUnlock()
	if ifUnused && inUse {
		return channelError(wire.PreconditionFailed, "%s in use", rs("exchange", name, vh))
	}
	s.removeExchange(x)
	return nil
}

// removeExchange deletes an exchange and every binding from or to it, and
// the auto-delete exchanges that leaves without bindings. Callers hold
// topoMu.
func (s *Server) removeExchange(x *exchange) {
	s.lockTopo()
	vh := s.vhosts[x.vhost]
	if vh == nil || vh.exchanges[x.name] != x {
		s.mu.Unlock()
		return
	}
	delete(vh.exchanges, x.name)
	for _, b := range slices.Clone(x.bindings) {
		x.removeBinding(b)
	}
	var touched []*exchange
	for _, b := range slices.Clone(x.inbound) {
		b.source.removeBinding(b)
		touched = append(touched, b.source)
	}
	s.mu.Unlock()
	s.e.Delete(s.now(), s.exchangeKey(x.vhost, x.name))
	s.afterUnbind(touched)
}

// afterUnbind persists exchanges that lost bindings and deletes the
// auto-delete ones left without any. Callers hold topoMu.
func (s *Server) afterUnbind(xs []*exchange) {
	for _, x := range xs {
		s.mu.RLock()
		empty := len(x.bindings) == 0
		s.mu.RUnlock()
		if x.autoDelete && empty {
			s.removeExchange(x)
			continue
		}
		s.persistExchange(x)
	}
}
