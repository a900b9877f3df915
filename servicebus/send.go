package servicebus

import (
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// maxForwardHops bounds a chain of auto-forwarding, as the service does.
const maxForwardHops = 4

// placed is one stored copy of a message a send stored.
type placed struct {
	key core.EntityKey
	seq uint64
	msg int // the index of the message it copies among those sent
	// from is the topic that numbered it, for a copy in a subscription.
	from core.EntityKey
}

// plan is what a send stores, made before anything is (issue 25.2): a
// target for each copy of each message, which message each copies, and
// the message ids that duplicate detection records once they are stored.
type plan struct {
	// touch says whether uses may be reported to the engine (not from
	// inside its hooks).
	touch   bool
	targets []core.Target
	msgs    []int
	ids     []pendingID
}

// settleIDs ends the plan's claims on message ids (duplicate detection):
// taken at now when err is nil, the messages being stored, and given up
// when they are not.
func (p *plan) settleIDs(now time.Time, err error) {
	for _, x := range p.ids {
		if err == nil {
			x.d.take(x.id, now, x.window)
		} else {
			x.d.release(x.id)
		}
	}
}

// pendingID is a message id that the plan claimed of dedup d, taken once
// the message is stored.
type pendingID struct {
	d      *dedup
	id     string
	window time.Duration
}

// add plans the copy it of message msg for entity k; optional skips it if
// k is gone by the time it is stored.
func (p *plan) add(msg int, k core.EntityKey, it core.Item, optional bool) {
	p.targets = append(p.targets, core.Target{Key: k, Item: it, IfExists: optional})
	p.msgs = append(p.msgs, msg)
}

// addCopy plans the copy it of message msg for subscription k of topic:
// the service numbers a message once, in its topic, and each
// subscription's copy carries that number (issue 25.3).
func (p *plan) addCopy(msg int, topic, k core.EntityKey, it core.Item) {
	p.targets = append(p.targets, core.Target{Key: k, Item: it, IfExists: true, SeqFrom: topic, Share: msg})
	p.msgs = append(p.msgs, msg)
}

// send stores messages sent to the queue or topic at path, following
// auto-forwarding and, for a topic, every subscription whose rules take
// them: every copy of every message, or, when one is refused, none. It
// returns the copies stored and the commit to wait for before the client
// is told.
func (s *Server) send(now time.Time, path string, ins ...*inMsg) (_ []placed, _ *core.Commit, err error) {
	p := plan{touch: true}
	defer func() { p.settleIDs(now, err) }()
	for i, in := range ins {
		if err := s.route(now, path, in, 0, &p, i, false); err != nil {
			return nil, nil, err
		}
	}
	var c *core.Commit
	var ps []placed
	if len(p.targets) > 0 {
		its, commit, err := s.e.EnqueueBatch(now, p.targets)
		if err != nil {
			return nil, nil, err
		}
		c = commit
		for i, it := range its {
			if it.Seq != 0 {
				ps = append(ps, placed{key: p.targets[i].Key, seq: it.Seq, msg: p.msgs[i], from: p.targets[i].SeqFrom})
			}
		}
	}
	return ps, c, nil
}

// route plans the copies of message msg, in, sent to path; optional says
// that a copy may be skipped if its entity is gone (one reached through a
// subscription, which skips a deleted one). Nothing is planned when it
// fails.
func (s *Server) route(now time.Time, path string, in *inMsg, hops int, p *plan, msg int, optional bool) (err error) {
	nt, ni := len(p.targets), len(p.ids)
	defer func() {
		if err != nil {
			for _, x := range p.ids[ni:] {
				x.d.release(x.id)
			}
			p.targets, p.msgs, p.ids = p.targets[:nt], p.msgs[:nt], p.ids[:ni]
		}
	}()
	if qe := s.queue(path); qe != nil {
		s.mu.RLock()
		props := qe.props
		s.mu.RUnlock()
		if props.ForwardTo != "" && hops < maxForwardHops {
			if p.touch {
				s.e.Touch(now, qe.main.key, core.UseForward)
			}
			return s.route(now, forwardName(props.ForwardTo), in, hops+1, p, msg, optional)
		}
		if props.RequiresSession && in.sessionID() == "" {
			return errNoSession()
		}
		if props.RequiresDuplicateDetection && hops == 0 && in.duplicateOf(&qe.dups, now, props.DuplicateDetectionHistoryTimeWindow, p) {
			return nil
		}
		p.add(msg, qe.main.key, in.item(now, in.ttl, props.RequiresSession), optional)
		return nil
	}
	te := s.topic(path)
	if te == nil {
		return notFound(path)
	}
	s.mu.RLock()
	dupCheck, window := te.props.RequiresDuplicateDetection, te.props.DuplicateDetectionHistoryTimeWindow
	s.mu.RUnlock()
	if dupCheck && hops == 0 && in.duplicateOf(&te.dups, now, window, p) {
		return nil
	}
	if p.touch {
		s.e.Touch(now, te.key, core.UseSend)
		if !in.scheduled.IsZero() && in.scheduled.After(now) {
			s.e.Touch(now, te.key, core.UseSchedule)
		}
	}
	type target struct {
		se    *subEnt
		props struct {
			forward string
			session bool
		}
		rules []*rule
	}
	s.mu.RLock()
	pol := te.pol
	targets := make([]target, 0, len(te.subs))
	for _, se := range te.subs {
		if !se.live() {
			continue
		}
		t := target{se: se, rules: se.rules}
		t.props.forward, t.props.session = se.props.ForwardTo, se.props.RequiresSession
		targets = append(targets, t)
	}
	s.mu.RUnlock()
	ttl := adapters.ServiceBusCopyTTL(pol, in.ttl)
	view := &msgView{m: in.m, now: now, ttl: in.ttl, size: len(in.raw)}
	for _, t := range targets {
		// Rules without actions are OR'ed into one copy; each matching
		// rule with an action makes a copy of its own, named by the
		// application property RuleName ("Topic filters and actions").
		plain := false
		var copies []*inMsg
		for _, r := range t.rules {
			ok, err := r.matches(view)
			if err != nil || !ok {
				continue
			}
			if r.action == nil {
				plain = true
				continue
			}
			cp, err := applyAction(in, r, now)
			if err != nil {
				s.log().Warn("a rule action failed", "subscription", t.se.main.path(), "rule", r.props.Name, "err", err)
				continue
			}
			copies = append(copies, cp)
		}
		if plain {
			copies = append([]*inMsg{in}, copies...)
		}
		for _, cp := range copies {
			if t.props.forward != "" && hops < maxForwardHops {
				if p.touch {
					s.e.Touch(now, t.se.main.key, core.UseForward)
				}
				if err := s.route(now, forwardName(t.props.forward), cp, hops+1, p, msg, true); err != nil {
					s.log().Warn("auto-forwarding failed", "subscription", t.se.main.path(), "err", err)
				}
				continue
			}
			if t.props.session && cp.sessionID() == "" {
				// a subscription that requires sessions takes no copy
				// without one: it is dead-lettered there, as the service
				// does
				s.noSessionCopy(p, msg, t.se, cp.item(now, ttl, false))
				continue
			}
			p.addCopy(msg, te.key, t.se.main.key, cp.item(now, ttl, t.props.session))
		}
	}
	return nil
}

// applyAction returns a copy of the message changed by the rule's action,
// with the application property RuleName.
func applyAction(in *inMsg, r *rule, now time.Time) (*inMsg, error) {
	m, err := amqp.UnmarshalMessage(in.raw)
	if err != nil {
		return nil, err
	}
	view := &msgView{m: m, now: now, ttl: in.ttl, size: len(in.raw)}
	if err := r.action.Apply(view); err != nil {
		return nil, err
	}
	m.ApplicationProperties = m.ApplicationProperties.Set("RuleName", r.props.Name)
	raw, err := m.MarshalBinary()
	if err != nil {
		return nil, err
	}
	out := *in
	out.raw, out.m = raw, m
	return &out, nil
}

// The dead-letter reason of an expired message (SB-8).
const (
	ttlExpiredReason      = "TTLExpiredException"
	ttlExpiredDescription = "The message expired and was dead lettered."
)

// expiredMeta is the Meta of an expired message that had none.
var expiredMeta = (&itemMeta{DeadLetterReason: ttlExpiredReason, DeadLetterDescription: ttlExpiredDescription}).marshal()

// deadLetter is the engine's DeadLetterFunc: the message moves to its
// entity's dead-letter queue (SB-8), or where ForwardDeadLetteredMessagesTo
// sends it, with DeadLetterReason and DeadLetterErrorDescription. It runs
// inside the engine's lock and only uses tx.
func (s *Server) deadLetter(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
	var m itemMeta
	if why.Code == "expired" && len(it.Meta) == 0 {
		// the common case, by the hundred thousand: a shared meta
		it.Meta = expiredMeta
		m = itemMeta{DeadLetterReason: ttlExpiredReason, DeadLetterDescription: ttlExpiredDescription}
	} else {
		m = readItemMeta(it.Meta)
		if why.Code == "expired" {
			m.DeadLetterReason, m.DeadLetterDescription = ttlExpiredReason, ttlExpiredDescription
		} else {
			m.DeadLetterReason, m.DeadLetterDescription = why.Code, why.Description
		}
		it.Meta = m.marshal()
	}
	it.TTL = core.NoTTL
	it.DeliveryCount = 0
	s.mu.RLock()
	n := s.byKey[from.EntityKey]
	fwd := ""
	if n != nil && n.kind == subMain {
		if n.queue != nil {
			fwd = n.queue.props.ForwardDeadLetteredMessagesTo
		} else {
			fwd = n.sub.props.ForwardDeadLetteredMessagesTo
		}
	}
	s.mu.RUnlock()
	if fwd != "" {
		m.DeadLetterSource = from.Name
		fit := it
		fit.Meta = m.marshal()
		in, err := s.readMessage(fit.Body)
		if err == nil {
			p := plan{}
			if err = s.route(tx.Now(), forwardName(fwd), in, 1, &p, 0, false); err == nil {
				for i := range p.targets {
					p.targets[i].Item.Meta = fit.Meta
				}
				if _, err = tx.EnqueueBatch(p.targets); err == nil {
					return
				}
			}
		}
		s.log().Warn("forwarding a dead letter failed; it stays in the dead-letter queue", "entity", from.Name, "to", fwd, "err", err)
	}
	if from.DeadLetterQueue == "" {
		return
	}
	if _, err := tx.Enqueue(key(from.DeadLetterQueue), it); err != nil {
		s.log().Warn("dead-lettering failed", "entity", from.Name, "err", err)
	}
}

// The dead-letter reason of a topic message without a session id copied
// to a subscription that requires sessions (the service's "Session ID is
// null.").
var noSessionReason = core.DeadLetterReason{Code: "Session ID is null.",
	Description: "Session enabled entity doesn't allow a message whose session identifier is null."}

// noSessionCopy plans the dead-lettering of the copy it of message msg
// without a session id in subscription se, which requires sessions:
// through the engine (an event, and ForwardDeadLetteredMessagesTo
// followed), or, inside an engine hook (p.touch false), as a copy for the
// dead-letter queue.
func (s *Server) noSessionCopy(p *plan, msg int, se *subEnt, it core.Item) {
	if !p.touch {
		it.TTL = core.NoTTL
		it.State, it.ScheduledAt = core.Active, time.Time{}
		it.Meta = (&itemMeta{DeadLetterReason: noSessionReason.Code, DeadLetterDescription: noSessionReason.Description}).marshal()
		p.add(msg, se.dlq.key, it, true)
		return
	}
	p.targets = append(p.targets, core.Target{Key: se.main.key, Item: it, IfExists: true, Refused: &noSessionReason})
	p.msgs = append(p.msgs, msg)
}

// errNoSession is the service's refusal of a message without a session id
// sent to a queue that requires sessions; the service names no entity in
// it.
func errNoSession() error {
	return core.Errorf(core.EPRECONDITION, "The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have session support enabled can only receive messages that have the SessionId set to a valid value.")
}
