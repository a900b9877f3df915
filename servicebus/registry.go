package servicebus

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// waitAll waits for the commits of one change.
func waitAll(cs ...*core.Commit) error {
	var errs []error
	for _, c := range cs {
		if err := c.Wait(context.Background()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// validName checks an entity name as the service does.
func validName(kind, name string) error {
	if name == "" || len(name) > 260 {
		return core.Errorf(core.EINVALID, "The %s name '%s' is invalid: it must have between 1 and 260 characters.", kind, name)
	}
	if strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "$") ||
		strings.ContainsAny(name, "@?#*\\") {
		return core.Errorf(core.EINVALID, "The %s name '%s' is invalid: it may contain only letters, numbers, periods, hyphens, underscores and slashes, and cannot start or end with a slash.", kind, name)
	}
	return nil
}

// createAll creates the core entities ens, in order, and waits for their
// commit. It is all or nothing: when a create or the commit fails, the
// entities it created are deleted again, so that a failed create leaves
// no entity behind that the front-end does not know of (issue 25.5).
func (s *Server) createAll(now time.Time, ens ...core.Entity) ([]core.Entity, error) {
	var cs []*core.Commit
	out := make([]core.Entity, 0, len(ens))
	undo := func() {
		for i := len(out) - 1; i >= 0; i-- {
			s.e.Delete(now, out[i].EntityKey)
		}
	}
	for _, en := range ens {
		got, c, err := s.e.Create(now, en)
		if err != nil {
			undo()
			return nil, err
		}
		cs = append(cs, c)
		out = append(out, got)
	}
	if err := waitAll(cs...); err != nil {
		undo()
		return nil, err
	}
	return out, nil
}

// createNodes creates the core entities of a queue or subscription: its
// two dead-letter queues and the entity, which comes last.
func (s *Server) createNodes(now time.Time, path, kind string, p core.Policy, settings []core.Setting, meta []byte, parent string) ([]core.Entity, error) {
	dlqMeta := (&entityMeta{Kind: kindDLQ, Name: path}).marshal()
	tdlqMeta := (&entityMeta{Kind: kindTransferDLQ, Name: path}).marshal()
	return s.createAll(now,
		core.Entity{EntityKey: key(path + suffixDLQ), Kind: kindDLQ, Parent: path, Durable: true, Policy: dlqPolicy, Meta: dlqMeta},
		core.Entity{EntityKey: key(path + suffixTransferDLQ), Kind: kindTransferDLQ, Parent: path, Durable: true, Policy: dlqPolicy, Meta: tdlqMeta},
		core.Entity{EntityKey: key(path), Kind: kind, Parent: parent, DeadLetterQueue: path + suffixDLQ,
			Durable: true, Policy: p, Settings: settings, Meta: meta})
}

// newNodes makes the nodes of a queue or subscription.
func (s *Server) newNodes(path string, q *queueEnt, sub *subEnt) (main, dlq, tdlq *node) {
	sessions := (q != nil && q.props.RequiresSession) || (sub != nil && sub.props.RequiresSession)
	mk := func(p string, k subQueue) *node {
		s.nodeSeq++
		n := &node{id: s.nodeSeq, key: key(p), kind: k, queue: q, sub: sub, sessions: sessions && k == subMain}
		s.byKey[n.key] = n
		s.byID[n.id] = n
		return n
	}
	return mk(path, subMain), mk(path+suffixDLQ, subDLQ), mk(path+suffixTransferDLQ, subTransferDLQ)
}

// dropNodes forgets the nodes of a queue or subscription and detaches
// their receivers.
func (s *Server) dropNodes(ns ...*node) {
	for _, n := range ns {
		if n == nil {
			continue
		}
		delete(s.byKey, n.key)
		delete(s.byID, n.id)
	}
}

// createQueue creates a queue.
func (s *Server) createQueue(name string, p atom.QueueProperties) (*queueEnt, error) {
	if err := validName("queue", name); err != nil {
		return nil, err
	}
	pol, err := s.queuePolicy(p)
	if err != nil {
		return nil, err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	if err := s.checkForward(p.ForwardTo, p.ForwardDeadLetteredMessagesTo, name); err != nil {
		return nil, err
	}
	s.dropDeleted(s.now(), nil, name)
	s.mu.RLock()
	_, q := s.queues[fold(name)]
	_, t := s.topics[fold(name)]
	s.mu.RUnlock()
	if q || t {
		return nil, core.Errorf(core.ECONFLICT, "The messaging entity '%s' already exists.", name)
	}
	now := s.now()
	m := &entityMeta{Kind: kindQueue, Name: name, Queue: &p, Updated: now}
	ents, err := s.createNodes(now, name, kindQueue, pol, queueSettings(p), m.marshal(), "")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	qe := s.queueRecordOf(ents[len(ents)-1], m)
	s.queues[fold(name)] = qe
	s.mu.Unlock()
	return qe, nil
}

// updateQueue changes a queue's properties.
func (s *Server) updateQueue(name string, p atom.QueueProperties) (*queueEnt, error) {
	pol, err := s.queuePolicy(p)
	if err != nil {
		return nil, err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	qe := s.queue(name)
	if qe == nil {
		return nil, notFound(name)
	}
	if err := s.checkForward(p.ForwardTo, p.ForwardDeadLetteredMessagesTo, qe.name); err != nil {
		return nil, err
	}
	if p.RequiresSession != qe.props.RequiresSession {
		return nil, core.Errorf(core.EINVALID, "The value for the RequiresSession property of an existing Queue cannot be changed.")
	}
	now := s.now()
	m := &entityMeta{Kind: kindQueue, Name: qe.name, Queue: &p, Updated: now}
	c, err := s.updateCore(now, qe.main.key, pol, queueSettings(p), m.marshal())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	qe.props, qe.updated = p, now
	s.mu.Unlock()
	return qe, waitAll(c)
}

// updateCore gives an entity's core entity a new policy, settings and Meta.
func (s *Server) updateCore(now time.Time, k core.EntityKey, pol core.Policy, st []core.Setting, meta []byte) (*core.Commit, error) {
	_, c, err := s.e.Update(now, k, func(en *core.Entity) error {
		en.Policy, en.Settings, en.Meta = pol, st, meta
		return nil
	})
	return c, err
}

// deleteQueue deletes a queue with its messages.
func (s *Server) deleteQueue(name string) error {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	qe := s.queue(name)
	if qe == nil {
		return notFound(name)
	}
	s.forgetQueue(qe)
	return s.deleteCore(qe.main, qe.dlq, qe.tdlq)
}

func (s *Server) forgetQueue(qe *queueEnt) {
	s.mu.Lock()
	if s.queues[fold(qe.name)] == qe {
		delete(s.queues, fold(qe.name))
		s.dropNodes(qe.main, qe.dlq, qe.tdlq)
	}
	s.mu.Unlock()
	s.detachNodes(qe.main, qe.dlq, qe.tdlq)
}

// deleteCore deletes the core entities of nodes; one already gone is fine.
func (s *Server) deleteCore(ns ...*node) error {
	now := s.now()
	var cs []*core.Commit
	for _, n := range ns {
		c, err := s.e.Delete(now, n.key)
		if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		cs = append(cs, c)
	}
	return waitAll(cs...)
}

// createTopic creates a topic.
func (s *Server) createTopic(name string, p atom.TopicProperties) (*topicEnt, error) {
	if err := validName("topic", name); err != nil {
		return nil, err
	}
	pol, err := s.topicPolicy(p)
	if err != nil {
		return nil, err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	s.dropDeleted(s.now(), nil, name)
	s.mu.RLock()
	_, q := s.queues[fold(name)]
	_, t := s.topics[fold(name)]
	s.mu.RUnlock()
	if q || t {
		return nil, core.Errorf(core.ECONFLICT, "The messaging entity '%s' already exists.", name)
	}
	now := s.now()
	m := &entityMeta{Kind: kindTopic, Name: name, TopicProps: &p, Updated: now}
	ens, err := s.createAll(now, core.Entity{EntityKey: key(name), Kind: kindTopic, Durable: true, Policy: pol,
		Settings: topicSettings(p), Meta: m.marshal()})
	if err != nil {
		return nil, err
	}
	te := topicRecordOf(ens[0], m)
	s.mu.Lock()
	s.topics[fold(name)] = te
	s.mu.Unlock()
	return te, nil
}

func (s *Server) updateTopic(name string, p atom.TopicProperties) (*topicEnt, error) {
	pol, err := s.topicPolicy(p)
	if err != nil {
		return nil, err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	te := s.topic(name)
	if te == nil {
		return nil, notFound(name)
	}
	now := s.now()
	m := &entityMeta{Kind: kindTopic, Name: te.name, TopicProps: &p, Updated: now}
	c, err := s.updateCore(now, te.key, pol, topicSettings(p), m.marshal())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	te.props, te.pol, te.updated = p, pol, now
	s.mu.Unlock()
	return te, waitAll(c)
}

func (s *Server) deleteTopic(name string) error {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	te := s.topic(name)
	if te == nil {
		return notFound(name)
	}
	subs := s.forgetTopic(te)
	var ns []*node
	for _, se := range subs {
		ns = append(ns, se.main, se.dlq, se.tdlq)
	}
	if err := s.deleteCore(ns...); err != nil {
		return err
	}
	c, err := s.e.Delete(s.now(), te.key)
	if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
		return err
	}
	return waitAll(c)
}

func (s *Server) forgetTopic(te *topicEnt) []*subEnt {
	s.mu.Lock()
	var subs []*subEnt
	if s.topics[fold(te.name)] == te {
		delete(s.topics, fold(te.name))
		for _, se := range te.subs {
			subs = append(subs, se)
			s.dropNodes(se.main, se.dlq, se.tdlq)
		}
	}
	s.mu.Unlock()
	for _, se := range subs {
		s.detachNodes(se.main, se.dlq, se.tdlq)
	}
	return subs
}

// subscriptionMeta is the Meta of subscription name of topic.
func subscriptionMeta(topic, name string, p atom.SubscriptionProperties, rules []*rule, now time.Time) *entityMeta {
	m := &entityMeta{Kind: kindSubscription, Name: name, Topic: topic, Subscription: &p, Updated: now}
	for _, r := range rules {
		m.Rules = append(m.Rules, ruleMeta{Props: r.props, Created: r.created})
	}
	return m
}

// createSubscription creates a subscription with its default rule (or the
// one given), "$Default" accepting everything.
func (s *Server) createSubscription(topic, name string, p atom.SubscriptionProperties) (*subEnt, error) {
	if err := validName("subscription", name); err != nil {
		return nil, err
	}
	if strings.Contains(name, "/") {
		return nil, core.Errorf(core.EINVALID, "The subscription name '%s' is invalid: it cannot contain a slash.", name)
	}
	pol, err := s.subscriptionPolicy(p)
	if err != nil {
		return nil, err
	}
	def := atom.DefaultRule()
	if p.DefaultRule != nil {
		def = *p.DefaultRule
		if def.Name == "" {
			def.Name = atom.DefaultRule().Name
		}
	}
	p.DefaultRule = nil
	r, err := compileRule(def)
	if err != nil {
		return nil, err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	s.dropDeleted(s.now(), nil, topic)
	te := s.topic(topic)
	if te == nil {
		return nil, notFound(topic)
	}
	if err := s.checkForward(p.ForwardTo, p.ForwardDeadLetteredMessagesTo, ""); err != nil {
		return nil, err
	}
	s.dropDeleted(s.now(), te, name)
	s.mu.RLock()
	_, dup := te.subs[fold(name)]
	s.mu.RUnlock()
	if dup {
		return nil, core.Errorf(core.ECONFLICT, "The messaging entity '%s' already exists.", te.name+subscriptionsPart+name)
	}
	now := s.now()
	r.created = now
	rules := []*rule{r}
	path := te.name + subscriptionsPart + name
	m := subscriptionMeta(te.name, name, p, rules, now)
	ents, err := s.createNodes(now, path, kindSubscription, pol, subscriptionSettings(p, rules), m.marshal(), te.name)
	if err != nil {
		return nil, err
	}
	s.e.Touch(now, te.key, core.UseChild)
	s.mu.Lock()
	se := s.subRecordOf(te, ents[len(ents)-1], m)
	te.subs[fold(name)] = se
	s.mu.Unlock()
	return se, nil
}

// updateSubscription changes a subscription's properties, or its rules when
// rules is not nil.
func (s *Server) updateSubscription(topic, name string, p *atom.SubscriptionProperties, rules []*rule, use core.Use) (*subEnt, error) {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	return s.updateSubscriptionLocked(topic, name, p, rules, use)
}

func (s *Server) updateSubscriptionLocked(topic, name string, p *atom.SubscriptionProperties, rules []*rule, use core.Use) (*subEnt, error) {
	se := s.subscription(topic, name)
	if se == nil {
		return nil, notFound(topic + subscriptionsPart + name)
	}
	s.mu.RLock()
	props, rs := se.props, se.rules
	s.mu.RUnlock()
	if p != nil {
		props = *p
		props.DefaultRule = nil
		if props.RequiresSession != se.props.RequiresSession {
			return nil, core.Errorf(core.EINVALID, "The value for the RequiresSession property of an existing Subscription cannot be changed.")
		}
		if err := s.checkForward(props.ForwardTo, props.ForwardDeadLetteredMessagesTo, ""); err != nil {
			return nil, err
		}
	}
	if rules != nil {
		rs = rules
	}
	pol, err := s.subscriptionPolicy(props)
	if err != nil {
		return nil, err
	}
	now := s.now()
	c, err := s.updateCore(now, se.main.key, pol, subscriptionSettings(props, rs), subscriptionMeta(se.topic.name, se.name, props, rs, now).marshal())
	if err != nil {
		return nil, err
	}
	if use != 0 {
		s.e.Touch(now, se.main.key, use)
	}
	s.e.Touch(now, se.topic.key, core.UseChild)
	s.mu.Lock()
	se.props, se.rules, se.updated = props, rs, now
	s.mu.Unlock()
	return se, waitAll(c)
}

func (s *Server) deleteSubscription(topic, name string) error {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	se := s.subscription(topic, name)
	if se == nil {
		return notFound(topic + subscriptionsPart + name)
	}
	s.forgetSubscription(se)
	s.e.Touch(s.now(), se.topic.key, core.UseChild)
	return s.deleteCore(se.main, se.dlq, se.tdlq)
}

func (s *Server) forgetSubscription(se *subEnt) {
	s.mu.Lock()
	if se.topic.subs[fold(se.name)] == se {
		delete(se.topic.subs, fold(se.name))
		s.dropNodes(se.main, se.dlq, se.tdlq)
	}
	s.mu.Unlock()
	s.detachNodes(se.main, se.dlq, se.tdlq)
}

// addRule adds a rule to a subscription (the admin API and add-rule).
func (s *Server) addRule(topic, sub string, p atom.RuleProperties) (*rule, error) {
	if p.Name == "" || len(p.Name) > 50 {
		return nil, core.Errorf(core.EINVALID, "The rule name '%s' is invalid: it must have between 1 and 50 characters.", p.Name)
	}
	r, err := compileRule(p)
	if err != nil {
		return nil, err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	se := s.subscription(topic, sub)
	if se == nil {
		return nil, notFound(topic + subscriptionsPart + sub)
	}
	s.mu.RLock()
	rs := append([]*rule(nil), se.rules...)
	s.mu.RUnlock()
	for _, x := range rs {
		if fold(x.props.Name) == fold(p.Name) {
			return nil, core.Errorf(core.ECONFLICT, "The messaging entity '%s' already exists.", se.main.path()+"/Rules/"+p.Name)
		}
	}
	r.created = s.now()
	rs = append(rs, r)
	sortRules(rs)
	if _, err := s.updateSubscriptionLocked(topic, sub, nil, rs, core.UseRule); err != nil {
		return nil, err
	}
	return r, nil
}

// replaceRule changes a rule (the admin API's update).
func (s *Server) replaceRule(topic, sub string, p atom.RuleProperties) (*rule, error) {
	r, err := compileRule(p)
	if err != nil {
		return nil, err
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	se := s.subscription(topic, sub)
	if se == nil {
		return nil, notFound(topic + subscriptionsPart + sub)
	}
	s.mu.RLock()
	rs := append([]*rule(nil), se.rules...)
	s.mu.RUnlock()
	for i, x := range rs {
		if fold(x.props.Name) == fold(p.Name) {
			r.created = x.created
			rs[i] = r
			if _, err := s.updateSubscriptionLocked(topic, sub, nil, rs, core.UseRule); err != nil {
				return nil, err
			}
			return r, nil
		}
	}
	return nil, notFound(se.main.path() + "/Rules/" + p.Name)
}

// removeRule removes a rule.
func (s *Server) removeRule(topic, sub, name string) error {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	se := s.subscription(topic, sub)
	if se == nil {
		return notFound(topic + subscriptionsPart + sub)
	}
	s.mu.RLock()
	rs := make([]*rule, 0, len(se.rules))
	found := false
	for _, x := range se.rules {
		if fold(x.props.Name) == fold(name) {
			found = true
			continue
		}
		rs = append(rs, x)
	}
	s.mu.RUnlock()
	if !found {
		return notFound(se.main.path() + "/Rules/" + name)
	}
	_, err := s.updateSubscriptionLocked(topic, sub, nil, rs, 0)
	return err
}

// checkForward checks that auto-forwarding targets exist (a missing one is
// a 400, as the service answers) and that a queue does not forward to
// itself.
func (s *Server) checkForward(to, dlqTo, self string) error {
	for _, t := range []string{to, dlqTo} {
		if t == "" {
			continue
		}
		name := forwardName(t)
		if self != "" && fold(name) == fold(self) {
			return core.Errorf(core.EINVALID, "The auto-forwarding destination entity '%s' cannot be the entity itself.", t)
		}
		if s.queue(name) == nil && s.topic(name) == nil {
			return core.Errorf(core.EINVALID, "The auto-forwarding destination entity '%s' could not be found.", t)
		}
	}
	return nil
}

// forwardName reads a ForwardTo value: a name, or "sb://host/name" as the
// JS admin client writes it.
func forwardName(t string) string {
	if a, ok := parseAddress(t); ok {
		return a.path()
	}
	return t
}

// Lookups; they take s.mu for reading. Those that serve clients return
// live records only (entities.go); the *Record ones, for the code that
// keeps the registry, return a record whether or not its entity is live.

func (s *Server) queue(name string) *queueEnt {
	if qe := s.queueRecord(name); qe != nil && qe.live() {
		return qe
	}
	return nil
}

func (s *Server) topic(name string) *topicEnt {
	if te := s.topicRecord(name); te != nil && te.live() {
		return te
	}
	return nil
}

func (s *Server) subscription(topic, name string) *subEnt {
	if se := s.subscriptionRecord(topic, name); se != nil && se.live() {
		return se
	}
	return nil
}

func (s *Server) queueRecord(name string) *queueEnt {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.queues[fold(name)]
}

func (s *Server) topicRecord(name string) *topicEnt {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.topics[fold(name)]
}

func (s *Server) subscriptionRecord(topic, name string) *subEnt {
	s.mu.RLock()
	defer s.mu.RUnlock()
	te := s.topics[fold(topic)]
	if te == nil {
		return nil
	}
	return te.subs[fold(name)]
}

// resolve finds the node an address names, nil if there is none or its
// entity is gone.
func (s *Server) resolve(a address) *node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var main, dlq, tdlq *node
	if a.sub != "" {
		te := s.topics[fold(a.entity)]
		if te == nil {
			return nil
		}
		se := te.subs[fold(a.sub)]
		if se == nil || !se.live() {
			return nil
		}
		main, dlq, tdlq = se.main, se.dlq, se.tdlq
	} else {
		qe := s.queues[fold(a.entity)]
		if qe == nil || !qe.live() {
			return nil
		}
		main, dlq, tdlq = qe.main, qe.dlq, qe.tdlq
	}
	switch a.queue {
	case subDLQ:
		return dlq
	case subTransferDLQ:
		return tdlq
	}
	return main
}

func notFound(path string) error {
	return core.Errorf(core.ENOTFOUND, "The messaging entity '%s' could not be found.", path)
}
