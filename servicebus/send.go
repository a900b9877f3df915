package servicebus

import (
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// maxForwardHops bounds a chain of auto-forwarding, as the service does.
const maxForwardHops = 4

// enqueueFunc puts an item in an entity: the engine's Enqueue for sends,
// the dead-letter hook's Tx for forwarded dead letters.
type enqueueFunc func(k core.EntityKey, it core.Item) (placed, error)

// placed is one stored copy of a sent message.
type placed struct {
	key    core.EntityKey
	seq    uint64
	commit *core.Commit
}

// commits returns the commits of the copies.
func commitsOf(ps []placed) []*core.Commit {
	out := make([]*core.Commit, len(ps))
	for i, p := range ps {
		out[i] = p.commit
	}
	return out
}

// send enqueues a message sent to the queue or topic at path, following
// auto-forwarding and, for a topic, every subscription whose rules take
// it. It returns the commits to wait for before the client is told.
func (s *Server) send(now time.Time, path string, in *inMsg) ([]placed, error) {
	enq := func(k core.EntityKey, it core.Item) (placed, error) {
		got, c, err := s.e.Enqueue(now, k, it)
		return placed{key: k, seq: got.Seq, commit: c}, err
	}
	return s.route(now, path, in, 0, enq, true)
}

// route delivers a message to path with enq; touch says whether uses may
// be reported to the engine (not from inside its hooks).
func (s *Server) route(now time.Time, path string, in *inMsg, hops int, enq enqueueFunc, touch bool) ([]placed, error) {
	if qe := s.queue(path); qe != nil {
		s.mu.RLock()
		props := qe.props
		s.mu.RUnlock()
		if props.ForwardTo != "" && hops < maxForwardHops {
			if touch {
				s.e.Touch(now, qe.main.key, core.UseForward)
			}
			return s.route(now, forwardName(props.ForwardTo), in, hops+1, enq, touch)
		}
		if props.RequiresSession && in.sessionID() == "" {
			return nil, errNoSession()
		}
		if props.RequiresDuplicateDetection && hops == 0 && in.duplicateOf(&qe.dups, now, props.DuplicateDetectionHistoryTimeWindow) {
			return nil, nil
		}
		p, err := enq(qe.main.key, in.item(now, in.ttl, props.RequiresSession))
		if err != nil {
			return nil, err
		}
		return []placed{p}, nil
	}
	te := s.topic(path)
	if te == nil {
		return nil, notFound(path)
	}
	s.mu.RLock()
	dupCheck, window := te.props.RequiresDuplicateDetection, te.props.DuplicateDetectionHistoryTimeWindow
	s.mu.RUnlock()
	if dupCheck && hops == 0 && in.duplicateOf(&te.dups, now, window) {
		return nil, nil
	}
	if touch {
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
		t := target{se: se, rules: se.rules}
		t.props.forward, t.props.session = se.props.ForwardTo, se.props.RequiresSession
		targets = append(targets, t)
	}
	s.mu.RUnlock()
	ttl := adapters.ServiceBusCopyTTL(pol, in.ttl)
	var cs []placed
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
				if touch {
					s.e.Touch(now, t.se.main.key, core.UseForward)
				}
				more, err := s.route(now, forwardName(t.props.forward), cp, hops+1, enq, touch)
				if err != nil {
					s.log().Warn("auto-forwarding failed", "subscription", t.se.main.path(), "err", err)
					continue
				}
				cs = append(cs, more...)
				continue
			}
			if t.props.session && cp.sessionID() == "" {
				// a subscription that requires sessions takes no copy
				// without one: it is dead-lettered there, as the service
				// does
				p, err := s.noSessionCopy(now, t.se, cp.item(now, ttl, false), enq, touch)
				if err != nil {
					if core.ErrorCode(err) == core.ENOTFOUND {
						continue
					}
					return nil, err
				}
				cs = append(cs, p)
				continue
			}
			p, err := enq(t.se.main.key, cp.item(now, ttl, t.props.session))
			if err != nil {
				if core.ErrorCode(err) == core.ENOTFOUND {
					continue // deleted meanwhile
				}
				return nil, err
			}
			cs = append(cs, p)
		}
	}
	return cs, nil
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
			enq := func(k core.EntityKey, x core.Item) (placed, error) {
				x.Meta = fit.Meta
				got, err := tx.Enqueue(k, x)
				return placed{key: k, seq: got.Seq}, err
			}
			if _, err = s.route(tx.Now(), forwardName(fwd), in, 1, enq, false); err == nil {
				return
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

// noSessionCopy dead-letters the copy it of a message without a session id
// in subscription se, which requires sessions: through the engine (an
// event, and ForwardDeadLetteredMessagesTo followed), or, inside an engine
// hook (touch false), by enqueueing it to the dead-letter queue with enq.
func (s *Server) noSessionCopy(now time.Time, se *subEnt, it core.Item, enq enqueueFunc, touch bool) (placed, error) {
	if !touch {
		it.TTL = core.NoTTL
		it.State, it.ScheduledAt = core.Active, time.Time{}
		it.Meta = (&itemMeta{DeadLetterReason: noSessionReason.Code, DeadLetterDescription: noSessionReason.Description}).marshal()
		return enq(se.dlq.key, it)
	}
	c, err := s.e.DeadLetterRefused(now, se.main.key, it, noSessionReason)
	return placed{key: se.dlq.key, commit: c}, err
}

// errNoSession is the service's refusal of a message without a session id
// sent to a queue that requires sessions; the service names no entity in
// it.
func errNoSession() error {
	return core.Errorf(core.EPRECONDITION, "The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have session support enabled can only receive messages that have the SessionId set to a valid value.")
}
