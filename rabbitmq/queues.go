package rabbitmq

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// This file declares, deletes, purges and binds queues, as RabbitMQ 3.10's
// rabbit_channel and rabbit_amqqueue do, with their reply texts.

// lookupQueue returns queue name of vhost vh for connection c: 404 if there
// is none, 405 if it is another connection's exclusive queue.
func (s *Server) lookupQueue(c *conn, vh, name string) (*queue, error) {
	q := s.findQueue(vh, name)
	if q == nil {
		return nil, notFoundQueue(vh, name)
	}
	if q.exclusive && q.owner != c {
		return nil, lockedQueue(vh, name)
	}
	return q, nil
}

// serverQueueName makes a name like RabbitMQ's amq.gen-... names.
func serverQueueName() string {
	var b [16]byte
	rand.Read(b[:])
	return "amq.gen-" + base64.RawURLEncoding.EncodeToString(b[:])
}

// queueDeclare is queue.declare; it returns the queue's name (made up for
// a server-named queue) and its ready message and consumer counts.
func (s *Server) queueDeclare(c *conn, vh string, m *wire.QueueDeclare) (string, uint32, uint32, error) {
	name := m.Queue
	if m.Passive {
		q, err := s.lookupQueue(c, vh, name)
		if err != nil {
			return "", 0, 0, err
		}
		return s.queueStat(q, true)
	}
	if name == "" {
		name = serverQueueName()
	} else if strings.HasPrefix(name, "amq.") {
		return "", 0, 0, channelError(wire.AccessRefused, "queue name '%s' contains reserved prefix 'amq.*'", name)
	}
	durable := m.Durable && !m.Exclusive
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	// A queue the engine has deleted (RB-8), whose Deleted hook has not
	// run yet, is made anew, as RabbitMQ, which has forgotten it by then,
	// makes it: gone before the checks, or as the declare touches it.
	q := s.queueRecord(vh, name)
	if q != nil && !s.e.Alive(s.now(), q.h) {
		s.afterUnbind(s.unlinkQueue(q))
		q = nil
	}
	if q != nil {
		if q.exclusive && q.owner != c || !q.exclusive && m.Exclusive {
			return "", 0, 0, lockedQueue(vh, name)
		}
		qn := rs("queue", name, vh)
		if q.durable != durable {
			return "", 0, 0, channelError(wire.PreconditionFailed, "inequivalent arg 'durable' for %s: received '%t' but current is '%t'", qn, durable, q.durable)
		}
		if q.autoDelete != m.AutoDelete {
			return "", 0, 0, channelError(wire.PreconditionFailed, "inequivalent arg 'auto_delete' for %s: received '%t' but current is '%t'", qn, m.AutoDelete, q.autoDelete)
		}
		if err := adapters.CheckRabbitQueueEquivalence(vh, name, q.args, m.Arguments); err != nil {
			return "", 0, 0, fromCore(err)
		}
		if name, ready, consumers, err := s.queueStat(q, true); err == nil {
			return name, ready, consumers, nil
		}
		s.afterUnbind(s.unlinkQueue(q))
	}
	if err := adapters.ValidateRabbitQueueArgs(vh, name, m.Arguments); err != nil {
		return "", 0, 0, fromCore(err)
	}
	if t, ok := m.Arguments["x-queue-type"].(string); ok && t != "classic" && !durable {
		return "", 0, 0, channelError(wire.PreconditionFailed, "invalid property 'non-durable' for %s", rs("queue", name, vh))
	}
	q = s.newQueue(vh, name, durable, m.Exclusive, m.AutoDelete, m.Arguments)
	if m.Exclusive {
		q.owner = c
	}
	if err := s.createQueue(q); err != nil {
		return "", 0, 0, err
	}
	if c != nil && m.Exclusive {
		c.addExclusive(q)
	}
	return name, 0, 0, nil
}

// findQueue returns queue name of vhost vh, nil if there is none or if
// the engine has deleted its entity (the registry is a cache of the
// engine's, core/handle.go): every lookup that serves a client goes
// through it.
func (s *Server) findQueue(vh, name string) *queue {
	if q := s.queueRecord(vh, name); q != nil && q.h.Live() {
		return q
	}
	return nil
}

// queueRecord returns the topology's record of queue name, live or not:
// for the code that keeps the registry (a declare that takes the name of
// a queue the engine deleted, the Deleted hook), not for serving.
func (s *Server) queueRecord(vh, name string) *queue {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if v := s.vhosts[vh]; v != nil {
		return v.queues[name]
	}
	return nil
}

// createQueue adds a new queue to the engine, with the policy its
// arguments and the vhost's policies make (RB-10), and to the topology.
// Callers hold topoMu.
func (s *Server) createQueue(q *queue) error {
	s.mu.RLock()
	v := s.vhosts[q.vhost]
	var pols, ops []adapters.RabbitPolicy
	if v != nil {
		pols, ops = policyList(v.policies), policyList(v.opPolicies)
	}
	s.mu.RUnlock()
	if v == nil {
		return channelError(wire.NotFound, "no vhost '%s'", q.vhost)
	}
	// The one place a queue is registered: a record left of a queue of
	// the name that the engine deleted, whose Deleted hook has not run
	// yet, is unlinked first, so that its bindings do not outlive it.
	if old := s.queueRecord(q.vhost, q.name); old != nil && old != q && !s.e.Alive(s.now(), old.h) {
		s.afterUnbind(s.unlinkQueue(old))
	}
	st := adapters.RabbitQueueEffective(q.vhost, q.name, q.args, pols, ops)
	q.setSettings(st)
	meta, _ := json.Marshal(queueMeta{VHost: q.vhost, Name: q.name, Durable: q.durable, AutoDelete: q.autoDelete,
		Arguments: encodeTable(q.args)})
	en := core.Entity{EntityKey: q.key, Kind: kindQueue, Durable: q.durable, Policy: st.Policy(),
		Settings: queueSettings(q.args, st), Meta: meta}
	made, _, err := s.e.Create(s.now(), en)
	if err != nil {
		return fromCore(err)
	}
	q.h = made.Handle
	s.lockTopo()
	v.queues[q.name] = q
	s.byKey[q.key] = q
	s.mu.Unlock()
	return nil
}

// queueSettings are a queue's arguments and applied policies for people.
func queueSettings(args map[string]any, st adapters.RabbitQueueSettings) []core.Setting {
	var out []core.Setting
	for _, k := range sortedKeys(args) {
		out = append(out, core.Setting{Key: k, Value: fmt.Sprint(args[k])})
	}
	if st.PolicyName != "" {
		out = append(out, core.Setting{Key: "policy", Value: st.PolicyName})
	}
	if st.OperatorPolicyName != "" {
		out = append(out, core.Setting{Key: "operator_policy", Value: st.OperatorPolicyName})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// queueStat is rabbit_amqqueue:stat: the ready message and consumer counts;
// a declare renews the queue's lease (RB-8).
func (s *Server) queueStat(q *queue, declare bool) (string, uint32, uint32, error) {
	now := s.now()
	if declare {
		if err := s.e.Touch(now, q.key, core.UseDeclare); err != nil {
			return "", 0, 0, notFoundQueue(q.vhost, q.name)
		}
	}
	cnt, _, err := s.e.Counts(now, q.key)
	if err != nil {
		return "", 0, 0, notFoundQueue(q.vhost, q.name)
	}
	return q.name, uint32(cnt.Active), uint32(q.consumerCount()), nil
}

// queueDelete is queue.delete; it returns the ready messages it dropped.
func (s *Server) queueDelete(c *conn, vh, name string, ifUnused, ifEmpty bool) (uint32, error) {
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	q, err := s.lookupQueue(c, vh, name)
	if err != nil {
		if fromCore(err).code == wire.NotFound {
			return 0, nil
		}
		return 0, err
	}
	if ifUnused && q.consumerCount() > 0 {
		return 0, channelError(wire.PreconditionFailed, "%s in use", rs("queue", name, vh))
	}
	cnt, _, err := s.e.Counts(s.now(), q.key)
	if err != nil {
		return 0, nil
	}
	if ifEmpty && cnt.Active > 0 {
		return 0, channelError(wire.PreconditionFailed, "%s not empty", rs("queue", name, vh))
	}
	s.removeQueue(q)
	return uint32(cnt.Active), nil
}

// removeQueue deletes a queue: its consumers are cancelled, its bindings
// removed and its messages dropped, not dead-lettered. Callers hold topoMu.
func (s *Server) removeQueue(q *queue) {
	touched := s.unlinkQueue(q)
	if touched == nil {
		return
	}
	s.e.Delete(s.now(), q.key)
	s.afterUnbind(touched)
}

// unlinkQueue takes a queue out of the topology and stops it; it returns
// the exchanges that lost bindings (nil if the queue was gone already).
func (s *Server) unlinkQueue(q *queue) []*exchange {
	s.lockTopo()
	vh := s.vhosts[q.vhost]
	if vh == nil || vh.queues[q.name] != q {
		s.mu.Unlock()
		return nil
	}
	delete(vh.queues, q.name)
	delete(s.byKey, q.key)
	touched := []*exchange{}
	for _, b := range slices.Clone(q.inbound) {
		b.source.removeBinding(b)
		if !slices.Contains(touched, b.source) {
			touched = append(touched, b.source)
		}
	}
	s.mu.Unlock()
	q.stop()
	if q.owner != nil {
		q.owner.removeExclusive(q)
	}
	return touched
}

// deleted is the engine's hook for a queue it deleted itself (RB-8).
func (s *Server) deleted(en core.Entity) {
	if en.Kind != kindQueue {
		return
	}
	var m queueMeta
	if json.Unmarshal(en.Meta, &m) != nil {
		return
	}
	// As any deletion of a queue: under topoMu, so that no declare or bind
	// holds it meanwhile, and its exchanges are persisted without its
	// bindings, or deleted if auto-delete and left with none.
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	if q := s.queueRecord(m.VHost, m.Name); q != nil && q.h == en.Handle {
		s.afterUnbind(s.unlinkQueue(q))
	}
}

// queuePurge is queue.purge; it returns how many messages it removed.
func (s *Server) queuePurge(c *conn, vh, name string) (uint32, error) {
	q, err := s.lookupQueue(c, vh, name)
	if err != nil {
		return 0, err
	}
	n, _, err := s.e.Purge(s.now(), q.key)
	if err != nil {
		return 0, notFoundQueue(vh, name)
	}
	return uint32(n), nil
}

// bind is queue.bind and queue.unbind (toExchange false: the destination
// is queue dest) and exchange.bind and exchange.unbind (toExchange true).
// Unbinding what is not bound, or from what does not exist, succeeds.
func (s *Server) bind(c *conn, vh, source, dest string, toExchange bool, key string, args map[string]any, unbind bool) error {
	if source == "" || toExchange && dest == "" {
		return channelError(wire.AccessRefused, "operation not permitted on the default exchange")
	}
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	x := s.lookupExchange(vh, source)
	if x == nil {
		if unbind {
			return nil
		}
		return notFoundExchange(vh, source)
	}
	var (
		q  *queue
		dx *exchange
	)
	if toExchange {
		if dx = s.lookupExchange(vh, dest); dx == nil {
			if unbind {
				return nil
			}
			return notFoundExchange(vh, dest)
		}
	} else {
		var err error
		if q, err = s.lookupQueue(c, vh, dest); err != nil {
			if unbind && fromCore(err).code == wire.NotFound {
				return nil
			}
			return err
		}
	}
	if x.kind == "headers" && !unbind {
		if err := checkXMatch(args); err != nil {
			return err
		}
	}
	argsID := string(encodeTable(args))
	s.lockTopo()
	existing := x.findBinding(q, dx, key, argsID)
	switch {
	case unbind && existing != nil:
		x.removeBinding(existing)
	case !unbind && existing == nil:
		x.addBinding(&binding{source: x, queue: q, dest: dx, key: key, args: args, argsID: argsID})
	default:
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	if unbind {
		s.afterUnbind([]*exchange{x})
		return nil
	}
	if q != nil {
		s.e.Touch(s.now(), q.key, core.UseRule)
	}
	s.persistExchange(x)
	return nil
}

// checkXMatch checks a headers binding's x-match argument.
func checkXMatch(args map[string]any) error {
	v, ok := args["x-match"]
	if !ok {
		return nil
	}
	switch v {
	case "all", "any", "all-with-x", "any-with-x":
		return nil
	}
	return channelError(wire.PreconditionFailed, "Invalid x-match field value %s; expected all, any, all-with-x, or any-with-x", erlangValue(v))
}

// erlangValue prints a table value as Erlang's ~p prints its term.
func erlangValue(v any) string {
	switch x := v.(type) {
	case string:
		return "<<\"" + x + "\">>"
	}
	return fmt.Sprint(v)
}
