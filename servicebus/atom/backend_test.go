package atom_test

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// memBackend is a Backend over maps, as the server's would behave: names
// without case, a subscription gets $Default or its DefaultRule, deletes
// cascade, properties are validated by adapters.
type memBackend struct {
	mu      sync.Mutex
	now     time.Time
	entries map[string]atom.Entry // by lowercased Path.String() and kind
}

var _ atom.Backend = (*memBackend)(nil)

func newMemBackend(now time.Time) *memBackend {
	return &memBackend{now: now, entries: map[string]atom.Entry{}}
}

// key is p's map key: queues and topics share their names' space.
func key(p atom.Path) string {
	return strings.ToLower(p.String())
}

func (m *memBackend) Get(p atom.Path) (atom.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key(p)]
	if !ok || e.Path.Kind != p.Kind {
		return atom.Entry{}, core.Errorf(core.ENOTFOUND,
			"The messaging entity 'sbemulatorns:%s:%s' could not be found. To know more visit https://aka.ms/sbResourceMgrExceptions. ",
			p.Kind, p)
	}
	return m.withCounts(e), nil
}

func (m *memBackend) Put(e atom.Entry, update bool) (atom.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := key(e.Path)
	old, exists := m.entries[k]
	switch {
	case update && (!exists || old.Path.Kind != e.Path.Kind):
		return atom.Entry{}, core.Errorf(core.ENOTFOUND, "The messaging entity '%s' could not be found.", e.Path)
	case !update && exists:
		return atom.Entry{}, core.Errorf(core.ECONFLICT, "%s %q exists", e.Path.Kind, e.Path)
	}
	if err := validate(e); err != nil {
		return atom.Entry{}, err
	}
	switch e.Path.Kind {
	case atom.KindSubscription, atom.KindRule:
		parent := atom.Path{Kind: atom.KindTopic, Entity: e.Path.Entity}
		if e.Path.Kind == atom.KindRule {
			parent = atom.Path{Kind: atom.KindSubscription, Entity: e.Path.Entity, Subscription: e.Path.Subscription}
		}
		if p, ok := m.entries[key(parent)]; !ok || p.Path.Kind != parent.Kind {
			return atom.Entry{}, core.Errorf(core.ENOTFOUND, "The messaging entity '%s' could not be found.", parent)
		}
	}
	e.Runtime = old.Runtime
	if !exists {
		e.Runtime = atom.Runtime{CreatedAt: m.now}
	}
	e.Runtime.UpdatedAt = m.now
	if s := e.Subscription; s != nil {
		rule := atom.DefaultRule()
		if s.DefaultRule != nil {
			rule = *s.DefaultRule
		}
		s.DefaultRule = nil
		if !update {
			rp := e.Path
			rp.Kind, rp.Rule = atom.KindRule, rule.Name
			m.entries[key(rp)] = atom.Entry{Path: rp, Rule: &rule, Runtime: atom.Runtime{CreatedAt: m.now}}
		}
	}
	m.entries[k] = e
	return m.withCounts(e), nil
}

// validate checks what adapters checks.
func validate(e atom.Entry) error {
	var se adapters.ServiceBusEntity
	switch {
	case e.Queue != nil:
		se = adapters.NewServiceBusEntity(adapters.ServiceBusQueue, adapters.ServiceBusStandard)
		se.DefaultMessageTimeToLive, se.AutoDeleteOnIdle = e.Queue.DefaultMessageTimeToLive, e.Queue.AutoDeleteOnIdle
	case e.Topic != nil:
		se = adapters.NewServiceBusEntity(adapters.ServiceBusTopic, adapters.ServiceBusStandard)
		se.DefaultMessageTimeToLive, se.AutoDeleteOnIdle = e.Topic.DefaultMessageTimeToLive, e.Topic.AutoDeleteOnIdle
	case e.Subscription != nil:
		se = adapters.NewServiceBusEntity(adapters.ServiceBusSubscription, adapters.ServiceBusStandard)
		se.DefaultMessageTimeToLive, se.AutoDeleteOnIdle = e.Subscription.DefaultMessageTimeToLive, e.Subscription.AutoDeleteOnIdle
	default:
		return nil
	}
	se.Namespace = "sbemulatorns"
	return se.Validate()
}

// withCounts fills a topic's subscription count.
func (m *memBackend) withCounts(e atom.Entry) atom.Entry {
	if e.Path.Kind == atom.KindTopic {
		prefix := key(e.Path) + "/subscriptions/"
		e.Runtime.SubscriptionCount = 0
		for k, o := range m.entries {
			if o.Path.Kind == atom.KindSubscription && strings.HasPrefix(k, prefix) {
				e.Runtime.SubscriptionCount++
			}
		}
	}
	return e
}

func (m *memBackend) Delete(p atom.Path) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := key(p)
	if e, ok := m.entries[k]; !ok || e.Path.Kind != p.Kind {
		return core.Errorf(core.ENOTFOUND, "The messaging entity '%s' could not be found.", p)
	}
	for other := range m.entries {
		if other == k || strings.HasPrefix(other, k+"/") {
			delete(m.entries, other)
		}
	}
	return nil
}

func (m *memBackend) List(kind atom.Kind, parent atom.Path, skip, top int) ([]atom.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []atom.Entry
	for _, e := range m.entries {
		p := e.Path
		if p.Kind != kind || !strings.EqualFold(p.Entity, parent.Entity) && kind >= atom.KindSubscription ||
			kind == atom.KindRule && !strings.EqualFold(p.Subscription, parent.Subscription) {
			continue
		}
		out = append(out, m.withCounts(e))
	}
	slices.SortFunc(out, func(a, b atom.Entry) int { return strings.Compare(key(a.Path), key(b.Path)) })
	if skip >= len(out) {
		return nil, nil
	}
	out = out[skip:]
	return out[:min(top, len(out))], nil
}

func (m *memBackend) NamespaceInfo() atom.NamespaceInfo {
	return atom.NamespaceInfo{Name: "sbemulatorns", CreatedAt: m.now.Add(-time.Hour), ModifiedAt: m.now, MessagingSKU: "Standard"}
}

// setRuntime sets an entity's counts, as the server's engine would.
func (m *memBackend) setRuntime(p atom.Path, set func(*atom.Runtime)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key(p)]
	set(&e.Runtime)
	m.entries[key(p)] = e
}
