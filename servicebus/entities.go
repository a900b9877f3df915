package servicebus

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/servicebus/atom"
	"github.com/lapse-emulator/lapse/servicebus/sqlfilter"
)

// Entity kinds as core entities carry them.
const (
	kindQueue        = "queue"
	kindTopic        = "topic"
	kindSubscription = "subscription"
	kindDLQ          = "deadletterqueue"
	kindTransferDLQ  = "transferdeadletterqueue"
)

// queueEnt is a queue.
type queueEnt struct {
	name             string
	props            atom.QueueProperties
	created, updated time.Time
	main, dlq, tdlq  *node
	dups             dedup
	h                *core.Handle // its main entity's (core/handle.go)
}

// topicEnt is a topic and its subscriptions.
type topicEnt struct {
	name             string
	props            atom.TopicProperties
	created, updated time.Time
	key              core.EntityKey
	pol              core.Policy        // its core policy, the ceiling of its copies (SB-5)
	subs             map[string]*subEnt // by folded name
	dups             dedup
	h                *core.Handle // its entity's
}

// subEnt is a subscription and its rules.
type subEnt struct {
	topic            *topicEnt
	name             string
	props            atom.SubscriptionProperties
	created, updated time.Time
	rules            []*rule // by name
	main, dlq, tdlq  *node
	h                *core.Handle // its main entity's
}

// The registry (the queues and topics maps) is a cache of the engine's
// entities (issue 25.5, docs/architecture.md): a record is built from its
// core entity by one function (queueRecordOf, topicRecordOf,
// subRecordOf) when it is created and when it is recovered, keeps the
// entity's handle, and is served only while the handle is live. So a
// record never outlives its entity, even before the Deleted hook that
// forgets it has run; and a create whose commit fails deletes its
// entities again (createAll), so no entity outlives its record.

func (q *queueEnt) live() bool { return q.h.Live() }
func (t *topicEnt) live() bool { return t.h.Live() }
func (se *subEnt) live() bool  { return se.h.Live() && se.topic.live() }

// queueRecordOf makes the record of a queue from its core entity and meta.
// It and subRecordOf make nodes: callers hold s.mu.
func (s *Server) queueRecordOf(en core.Entity, m *entityMeta) *queueEnt {
	qe := &queueEnt{name: m.Name, props: *m.Queue, created: en.Created, updated: m.Updated, h: en.Handle}
	qe.main, qe.dlq, qe.tdlq = s.newNodes(en.Name, qe, nil)
	return qe
}

// topicRecordOf makes the record of a topic from its core entity and meta.
func topicRecordOf(en core.Entity, m *entityMeta) *topicEnt {
	return &topicEnt{name: m.Name, props: *m.TopicProps, pol: en.Policy, created: en.Created,
		updated: m.Updated, key: en.EntityKey, subs: map[string]*subEnt{}, h: en.Handle}
}

// subRecordOf makes the record of a subscription of te from its core
// entity and meta; a stored rule that no longer compiles is left out.
func (s *Server) subRecordOf(te *topicEnt, en core.Entity, m *entityMeta) *subEnt {
	se := &subEnt{topic: te, name: m.Name, props: *m.Subscription, created: en.Created, updated: m.Updated, h: en.Handle}
	for _, rm := range m.Rules {
		r, err := compileRule(rm.Props)
		if err != nil {
			s.log().Warn("a stored rule does not compile", "subscription", en.Name, "rule", rm.Props.Name, "err", err)
			continue
		}
		r.created = rm.Created
		se.rules = append(se.rules, r)
	}
	sortRules(se.rules)
	se.main, se.dlq, se.tdlq = s.newNodes(en.Name, nil, se)
	return se
}

// rule is a subscription rule, compiled.
type rule struct {
	props   atom.RuleProperties
	created time.Time
	always  bool // TrueFilter
	never   bool // FalseFilter
	sql     *sqlfilter.Filter
	corr    *sqlfilter.Correlation
	action  *sqlfilter.Action
}

// node is an entity messages are received from: a queue, a subscription or
// one of their dead-letter queues. Its receivers wait on it.
type node struct {
	id    uint32
	key   core.EntityKey
	kind  subQueue
	queue *queueEnt // the owner: a queue or a subscription
	sub   *subEnt
	// sessions is true for the main node of a queue or subscription that
	// requires sessions; RequiresSession never changes.
	sessions bool

	mu      lockorder.Mutex
	waiters map[*link]struct{}
	// gone is set once the node is deleted and its waiters detached:
	// it takes no new ones.
	gone bool
}

// path returns the node's entity path.
func (n *node) path() string { return n.key.Name }

// lockDuration is how long a peek-lock lasts on the node.
func (n *node) lockDuration() time.Duration {
	if n.queue != nil {
		return n.queue.props.LockDuration
	}
	return n.sub.props.LockDuration
}

// maxDeliveryCount is the owner's MaxDeliveryCount; dead-letter queues have none.
func (n *node) maxDeliveryCount() int32 {
	if n.kind != subMain {
		return 0
	}
	if n.queue != nil {
		return n.queue.props.MaxDeliveryCount
	}
	return n.sub.props.MaxDeliveryCount
}

// requiresSession reports whether the node's owner is session-enabled
// (its dead-letter queues are not).
func (n *node) requiresSession() bool { return n.sessions }

// live reports whether the node's entity is still there.
func (n *node) live() bool {
	if n.sub != nil {
		return n.sub.live()
	}
	return n.queue.live()
}

// signal wakes the node's waiting receivers.
func (n *node) signal() {
	n.mu.Lock()
	for l := range n.waiters {
		l.wake()
	}
	n.mu.Unlock()
}

// wait registers l as a receiver to wake and, when the node is deleted,
// to detach; false when the node is deleted already.
func (n *node) wait(l *link) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.gone {
		return false
	}
	if n.waiters == nil {
		n.waiters = map[*link]struct{}{}
	}
	n.waiters[l] = struct{}{}
	return true
}

func (n *node) unwait(l *link) {
	n.mu.Lock()
	delete(n.waiters, l)
	n.mu.Unlock()
}

// entityMeta is what the server keeps in a core entity's Meta to rebuild
// its tables after a restart.
type entityMeta struct {
	Kind         string                       `json:"kind"`
	Name         string                       `json:"name"`
	Topic        string                       `json:"topic,omitempty"`
	Queue        *atom.QueueProperties        `json:"queue,omitempty"`
	TopicProps   *atom.TopicProperties        `json:"topicProperties,omitempty"`
	Subscription *atom.SubscriptionProperties `json:"subscription,omitempty"`
	Rules        []ruleMeta                   `json:"rules,omitempty"`
	Updated      time.Time                    `json:"updated"`
}

type ruleMeta struct {
	Props   atom.RuleProperties `json:"props"`
	Created time.Time           `json:"created"`
}

func (m *entityMeta) marshal() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("servicebus: entity meta: %v", err))
	}
	return b
}

// key is the core key of an entity path.
func key(path string) core.EntityKey { return core.EntityKey{Protocol: core.ServiceBus, Name: path} }

// compileRule compiles a rule's filter and action.
func compileRule(p atom.RuleProperties) (*rule, error) {
	r := &rule{props: p}
	switch p.Filter.Type {
	case atom.TrueFilter, "":
		r.always = true
	case atom.FalseFilter:
		r.never = true
	case atom.CorrelationFilter:
		c := p.Filter.Correlation
		r.corr = &sqlfilter.Correlation{CorrelationID: c.CorrelationID, MessageID: c.MessageID, To: c.To,
			ReplyTo: c.ReplyTo, Subject: c.Subject, SessionID: c.SessionID, ReplyToSessionID: c.ReplyToSessionID,
			ContentType: c.ContentType, Properties: c.Properties}
	case atom.SQLFilter:
		f, err := sqlfilter.Compile(p.Filter.SQLExpression, p.Filter.Parameters)
		if err != nil {
			return nil, err
		}
		r.sql = f
	default:
		return nil, core.Errorf(core.EINVALID, "The filter type '%s' is not supported.", p.Filter.Type)
	}
	if p.Action != nil && p.Action.SQLExpression != "" {
		a, err := sqlfilter.CompileAction(p.Action.SQLExpression, p.Action.Parameters)
		if err != nil {
			return nil, err
		}
		r.action = a
	}
	return r, nil
}

// matches reports whether the rule's filter takes the message.
func (r *rule) matches(m sqlfilter.Message) (bool, error) {
	switch {
	case r.always:
		return true, nil
	case r.never:
		return false, nil
	case r.corr != nil:
		return r.corr.Match(m), nil
	}
	return r.sql.Match(m)
}

// sortRules keeps a subscription's rules in name order.
func sortRules(rs []*rule) {
	sort.Slice(rs, func(i, j int) bool { return fold(rs[i].props.Name) < fold(rs[j].props.Name) })
}

// queuePolicy is the core policy of a queue.
func (s *Server) queuePolicy(p atom.QueueProperties) (core.Policy, error) {
	e := adapters.NewServiceBusEntity(adapters.ServiceBusQueue, s.cfg.Tier)
	e.Namespace = s.cfg.Namespace
	e.DefaultMessageTimeToLive = p.DefaultMessageTimeToLive
	e.DeadLetteringOnMessageExpiration = p.DeadLetteringOnMessageExpiration
	e.AutoDeleteOnIdle = p.AutoDeleteOnIdle
	e.RequiresSession = p.RequiresSession
	return e.Policy()
}

func (s *Server) topicPolicy(p atom.TopicProperties) (core.Policy, error) {
	e := adapters.NewServiceBusEntity(adapters.ServiceBusTopic, s.cfg.Tier)
	e.Namespace = s.cfg.Namespace
	e.DefaultMessageTimeToLive = p.DefaultMessageTimeToLive
	e.AutoDeleteOnIdle = p.AutoDeleteOnIdle
	return e.Policy()
}

func (s *Server) subscriptionPolicy(p atom.SubscriptionProperties) (core.Policy, error) {
	e := adapters.NewServiceBusEntity(adapters.ServiceBusSubscription, s.cfg.Tier)
	e.Namespace = s.cfg.Namespace
	e.DefaultMessageTimeToLive = p.DefaultMessageTimeToLive
	e.DeadLetteringOnMessageExpiration = p.DeadLetteringOnMessageExpiration
	e.AutoDeleteOnIdle = p.AutoDeleteOnIdle
	e.RequiresSession = p.RequiresSession
	return e.Policy()
}

// dlqPolicy is the policy of a dead-letter queue: its messages never
// expire (SB-8: the dead-letter queue does not observe TTL).
var dlqPolicy = core.Policy{DefaultTTL: core.Forever, MaxTTL: core.Forever, IgnoreItemTTL: true}

// settings describe an entity for people.
func durationSetting(k string, d time.Duration) core.Setting {
	return core.Setting{Key: k, Value: adapters.FormatXMLDuration(d)}
}

func queueSettings(p atom.QueueProperties) []core.Setting {
	st := []core.Setting{
		durationSetting("DefaultMessageTimeToLive", p.DefaultMessageTimeToLive),
		{Key: "DeadLetteringOnMessageExpiration", Value: fmt.Sprint(p.DeadLetteringOnMessageExpiration)},
		durationSetting("LockDuration", p.LockDuration),
		{Key: "MaxDeliveryCount", Value: fmt.Sprint(p.MaxDeliveryCount)},
		durationSetting("AutoDeleteOnIdle", p.AutoDeleteOnIdle),
	}
	if p.RequiresSession {
		st = append(st, core.Setting{Key: "RequiresSession", Value: "true"})
	}
	if p.ForwardTo != "" {
		st = append(st, core.Setting{Key: "ForwardTo", Value: p.ForwardTo})
	}
	if p.ForwardDeadLetteredMessagesTo != "" {
		st = append(st, core.Setting{Key: "ForwardDeadLetteredMessagesTo", Value: p.ForwardDeadLetteredMessagesTo})
	}
	return st
}

func topicSettings(p atom.TopicProperties) []core.Setting {
	return []core.Setting{
		durationSetting("DefaultMessageTimeToLive", p.DefaultMessageTimeToLive),
		durationSetting("AutoDeleteOnIdle", p.AutoDeleteOnIdle),
	}
}

func subscriptionSettings(p atom.SubscriptionProperties, rules []*rule) []core.Setting {
	st := []core.Setting{
		durationSetting("DefaultMessageTimeToLive", p.DefaultMessageTimeToLive),
		{Key: "DeadLetteringOnMessageExpiration", Value: fmt.Sprint(p.DeadLetteringOnMessageExpiration)},
		durationSetting("LockDuration", p.LockDuration),
		{Key: "MaxDeliveryCount", Value: fmt.Sprint(p.MaxDeliveryCount)},
		durationSetting("AutoDeleteOnIdle", p.AutoDeleteOnIdle),
	}
	if p.RequiresSession {
		st = append(st, core.Setting{Key: "RequiresSession", Value: "true"})
	}
	if p.ForwardTo != "" {
		st = append(st, core.Setting{Key: "ForwardTo", Value: p.ForwardTo})
	}
	for _, r := range rules {
		v := string(r.props.Filter.Type)
		switch r.props.Filter.Type {
		case atom.SQLFilter:
			v = r.props.Filter.SQLExpression
		case atom.CorrelationFilter:
			v = "correlation " + r.props.Filter.Correlation.CorrelationID
		}
		if r.props.Action != nil && r.props.Action.SQLExpression != "" {
			v += "; action " + r.props.Action.SQLExpression
		}
		st = append(st, core.Setting{Key: "rule " + r.props.Name, Value: v})
	}
	return st
}
