package rabbitmq

import (
	"encoding/json"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
)

// PutPolicy creates or replaces a policy (operator false) or an operator
// policy of vhost vh, after RabbitMQ's validation (RB-10), and applies the
// new effective settings to the vhost's queues. As in RabbitMQ's classic
// queues, a changed message TTL applies to messages enqueued afterwards.
// The error is a *core.Error: EINVALID with RabbitMQ's "Validation
// failed..." reason, or ENOTFOUND for a missing vhost.
func (s *Server) PutPolicy(vh string, p adapters.RabbitPolicy, operator bool) error {
	p.VHost = vh
	validate := adapters.ValidateRabbitPolicy
	if operator {
		validate = adapters.ValidateRabbitOperatorPolicy
	}
	if err := validate(p); err != nil {
		return err
	}
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	if s.lookupVhost(vh) == nil {
		return core.Errorf(core.ENOTFOUND, "vhost %q not found", vh)
	}
	kind := kindPolicy
	if operator {
		kind = kindOperatorPolicy
	}
	meta, _ := json.Marshal(policyMeta{VHost: vh, Name: p.Name, Pattern: p.Pattern, ApplyTo: p.ApplyTo,
		Priority: p.Priority, Definition: p.Definition})
	k := s.policyKey(vh, p.Name, operator)
	now := s.now()
	if _, ok := s.e.Entity(k); ok {
		if _, _, err := s.e.Update(now, k, func(en *core.Entity) error { en.Meta = meta; return nil }); err != nil {
			return err
		}
	} else if _, _, err := s.e.Create(now, core.Entity{EntityKey: k, Kind: kind, Durable: true, Meta: meta}); err != nil {
		return err
	}
	s.lockTopo()
	if v := s.vhosts[vh]; v != nil {
		if operator {
			v.opPolicies[p.Name] = p
		} else {
			v.policies[p.Name] = p
		}
	}
	s.mu.Unlock()
	s.reapplyPolicies(vh)
	return nil
}

// DeletePolicy removes a policy or operator policy; ENOTFOUND if there is
// none of that name.
func (s *Server) DeletePolicy(vh, name string, operator bool) error {
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	s.lockTopo()
	v := s.vhosts[vh]
	m := map[string]adapters.RabbitPolicy(nil)
	if v != nil {
		m = v.policies
		if operator {
			m = v.opPolicies
		}
	}
	_, ok := m[name]
	delete(m, name)
	s.mu.Unlock()
	if !ok {
		return core.Errorf(core.ENOTFOUND, "policy %q not found", name)
	}
	s.e.Delete(s.now(), s.policyKey(vh, name, operator))
	s.reapplyPolicies(vh)
	return nil
}

// Policies returns the policies (or operator policies) of vhost vh, by name.
func (s *Server) Policies(vh string, operator bool) []adapters.RabbitPolicy {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := s.vhosts[vh]
	if v == nil {
		return nil
	}
	if operator {
		return policyList(v.opPolicies)
	}
	return policyList(v.policies)
}

// reapplyPolicies recomputes the effective settings of every queue of vh.
// Callers hold topoMu.
func (s *Server) reapplyPolicies(vh string) {
	s.mu.RLock()
	v := s.vhosts[vh]
	if v == nil {
		s.mu.RUnlock()
		return
	}
	pols, ops := policyList(v.policies), policyList(v.opPolicies)
	qs := make([]*queue, 0, len(v.queues))
	for _, q := range v.queues {
		qs = append(qs, q)
	}
	s.mu.RUnlock()
	now := s.now()
	for _, q := range qs {
		st := adapters.RabbitQueueEffective(vh, q.name, q.args, pols, ops)
		q.setSettings(st)
		s.e.Update(now, q.key, func(en *core.Entity) error {
			en.Policy = st.Policy()
			en.Settings = queueSettings(q.args, st)
			return nil
		})
	}
}
