package servicebus

import (
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/httpserver"
	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/servicebus/atom"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// Admin is the Service Bus administration API: the ATOM API admin.Client
// and ServiceBusAdministrationClient speak, over plain HTTP as the
// official emulator serves it, and GET /health.
//
// On the default world's server (Config.Resolve set), a request signed
// with the key of another world is served by that world's API, on this
// listener.
type Admin struct {
	*httpserver.Server
	s       *Server
	log     *slog.Logger
	own     http.Handler // s's
	handler http.Handler // the one served: own, or another world's

	mu lockorder.Mutex
	// worlds are the APIs of the other worlds, by their servers, made
	// at their first request (world.go).
	worlds map[*Server]http.Handler
}

// NewAdmin returns the administration API of s on addr; Open binds it.
func NewAdmin(s *Server, addr string, log *slog.Logger) *Admin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Admin{s: s, log: log, own: adminHandler(s, log), worlds: map[*Server]http.Handler{}}
	a.handler = http.HandlerFunc(a.serve)
	a.Server = httpserver.New("Service Bus administration API", addr, a.handler, log)
	return a
}

// adminHandler is the ATOM API of s.
func adminHandler(s *Server, log *slog.Logger) http.Handler {
	h := atom.NewHandler(backend{s}, s.authorizeHTTP, log)
	h.Now = s.cfg.Now
	return h
}

// Handler returns the API as an http.Handler.
func (a *Admin) Handler() http.Handler { return a.handler }

// authorizeHTTP checks a request's SharedAccessSignature; tokens expire on
// the wall clock that signed them.
func (s *Server) authorizeHTTP(r *http.Request) error {
	tok := r.Header.Get("Authorization")
	if tok == "" {
		return core.Errorf(core.EUNAUTHORIZED, "MissingToken: The authorization header was not found.")
	}
	return sas.Verify(tok, s.cfg.Keys, "", time.Now())
}

// backend is the server as the ATOM handler's Backend.
type backend struct{ s *Server }

var _ atom.Backend = backend{}

func (b backend) Get(p atom.Path) (atom.Entry, error) {
	s := b.s
	switch p.Kind {
	case atom.KindQueue:
		if qe := s.queue(p.Entity); qe != nil {
			return s.queueEntry(qe), nil
		}
	case atom.KindTopic:
		if te := s.topic(p.Entity); te != nil {
			return s.topicEntry(te), nil
		}
	case atom.KindSubscription:
		if se := s.subscription(p.Entity, p.Subscription); se != nil {
			return s.subEntry(se), nil
		}
	case atom.KindRule:
		if se := s.subscription(p.Entity, p.Subscription); se != nil {
			s.mu.RLock()
			defer s.mu.RUnlock()
			for _, r := range se.rules {
				if fold(r.props.Name) == fold(p.Rule) {
					return ruleEntry(se, r), nil
				}
			}
		}
	}
	return atom.Entry{}, notFound(p.String())
}

func (b backend) Put(e atom.Entry, update bool) (atom.Entry, error) {
	s := b.s
	p := e.Path
	switch {
	case e.Queue != nil:
		var qe *queueEnt
		var err error
		if update {
			qe, err = s.updateQueue(p.Entity, *e.Queue)
		} else {
			qe, err = s.createQueue(p.Entity, *e.Queue)
		}
		if err != nil {
			return atom.Entry{}, err
		}
		return s.queueEntry(qe), nil
	case e.Topic != nil:
		var te *topicEnt
		var err error
		if update {
			te, err = s.updateTopic(p.Entity, *e.Topic)
		} else {
			te, err = s.createTopic(p.Entity, *e.Topic)
		}
		if err != nil {
			return atom.Entry{}, err
		}
		return s.topicEntry(te), nil
	case e.Subscription != nil:
		var se *subEnt
		var err error
		if update {
			se, err = s.updateSubscription(p.Entity, p.Subscription, e.Subscription, nil, 0)
		} else {
			se, err = s.createSubscription(p.Entity, p.Subscription, *e.Subscription)
		}
		if err != nil {
			return atom.Entry{}, err
		}
		return s.subEntry(se), nil
	case e.Rule != nil:
		rp := *e.Rule
		rp.Name = p.Rule
		var err error
		if update {
			_, err = s.replaceRule(p.Entity, p.Subscription, rp)
		} else {
			_, err = s.addRule(p.Entity, p.Subscription, rp)
		}
		if err != nil {
			return atom.Entry{}, err
		}
		return b.Get(p)
	}
	return atom.Entry{}, core.Errorf(core.EINVALID, "The request body has no entity description.")
}

func (b backend) Delete(p atom.Path) error {
	s := b.s
	switch p.Kind {
	case atom.KindQueue:
		if s.queue(p.Entity) == nil && s.topic(p.Entity) != nil {
			return s.deleteTopic(p.Entity)
		}
		return s.deleteQueue(p.Entity)
	case atom.KindTopic:
		if s.topic(p.Entity) == nil && s.queue(p.Entity) != nil {
			return s.deleteQueue(p.Entity)
		}
		return s.deleteTopic(p.Entity)
	case atom.KindSubscription:
		return s.deleteSubscription(p.Entity, p.Subscription)
	case atom.KindRule:
		return s.removeRule(p.Entity, p.Subscription, p.Rule)
	}
	return notFound(p.String())
}

func (b backend) List(kind atom.Kind, parent atom.Path, skip, top int) ([]atom.Entry, error) {
	s := b.s
	var out []atom.Entry
	switch kind {
	case atom.KindQueue:
		s.mu.RLock()
		qs := make([]*queueEnt, 0, len(s.queues))
		for _, q := range s.queues {
			if q.live() {
				qs = append(qs, q)
			}
		}
		s.mu.RUnlock()
		sort.Slice(qs, func(i, j int) bool { return fold(qs[i].name) < fold(qs[j].name) })
		for _, q := range page(qs, skip, top) {
			out = append(out, s.queueEntry(q))
		}
	case atom.KindTopic:
		s.mu.RLock()
		ts := make([]*topicEnt, 0, len(s.topics))
		for _, t := range s.topics {
			if t.live() {
				ts = append(ts, t)
			}
		}
		s.mu.RUnlock()
		sort.Slice(ts, func(i, j int) bool { return fold(ts[i].name) < fold(ts[j].name) })
		for _, t := range page(ts, skip, top) {
			out = append(out, s.topicEntry(t))
		}
	case atom.KindSubscription:
		te := s.topic(parent.Entity)
		if te == nil {
			return nil, notFound(parent.Entity)
		}
		s.mu.RLock()
		ss := make([]*subEnt, 0, len(te.subs))
		for _, se := range te.subs {
			if se.live() {
				ss = append(ss, se)
			}
		}
		s.mu.RUnlock()
		sort.Slice(ss, func(i, j int) bool { return fold(ss[i].name) < fold(ss[j].name) })
		for _, se := range page(ss, skip, top) {
			out = append(out, s.subEntry(se))
		}
	case atom.KindRule:
		se := s.subscription(parent.Entity, parent.Subscription)
		if se == nil {
			return nil, notFound(parent.String())
		}
		s.mu.RLock()
		rs := append([]*rule(nil), se.rules...)
		s.mu.RUnlock()
		for _, r := range page(rs, skip, top) {
			out = append(out, ruleEntry(se, r))
		}
	}
	return out, nil
}

func page[T any](xs []T, skip, top int) []T {
	if skip > 0 {
		if skip >= len(xs) {
			return nil
		}
		xs = xs[skip:]
	}
	if top > 0 && top < len(xs) {
		xs = xs[:top]
	}
	return xs
}

func (b backend) NamespaceInfo() atom.NamespaceInfo {
	s := b.s
	sku := "Standard"
	switch s.cfg.Tier {
	case 1:
		sku = "Premium"
	case 2:
		sku = "Basic"
	}
	return atom.NamespaceInfo{Name: s.cfg.Namespace, CreatedAt: s.created, ModifiedAt: s.created, MessagingSKU: sku}
}

// runtime reads the figures of a queue or subscription.
func (s *Server) runtime(main, dlq, tdlq *node, created, updated time.Time) atom.Runtime {
	now := s.now()
	rt := atom.Runtime{CreatedAt: created, UpdatedAt: updated, AccessedAt: updated}
	if info, err := s.e.Info(now, main.key); err == nil {
		c := info.Counts
		rt.ActiveMessageCount = int64(c.Active + c.Locked)
		rt.ScheduledMessageCount = int64(c.Scheduled)
		rt.ActiveMessageCount += int64(c.Deferred)
		rt.SizeInBytes = c.ActiveBytes
		if !info.LastUsed.IsZero() {
			rt.AccessedAt = info.LastUsed
		}
	}
	if c, _, err := s.e.Counts(now, dlq.key); err == nil {
		rt.DeadLetterMessageCount = int64(c.Active + c.Locked + c.Deferred)
	}
	if c, _, err := s.e.Counts(now, tdlq.key); err == nil {
		rt.TransferDeadLetterMessageCount = int64(c.Active + c.Locked + c.Deferred)
	}
	return rt
}

func (s *Server) queueEntry(qe *queueEnt) atom.Entry {
	s.mu.RLock()
	props, created, updated := qe.props, qe.created, qe.updated
	s.mu.RUnlock()
	return atom.Entry{Path: atom.Path{Kind: atom.KindQueue, Entity: qe.name}, Queue: &props,
		Runtime: s.runtime(qe.main, qe.dlq, qe.tdlq, created, updated)}
}

func (s *Server) topicEntry(te *topicEnt) atom.Entry {
	s.mu.RLock()
	props := te.props
	rt := atom.Runtime{CreatedAt: te.created, UpdatedAt: te.updated, AccessedAt: te.updated}
	for _, se := range te.subs {
		if !se.live() {
			continue
		}
		rt.SubscriptionCount++
		for _, r := range se.rules {
			if r.props.Filter.Type == atom.CorrelationFilter {
				rt.CorrelationFilterCount++
			} else {
				rt.SQLFilterCount++
			}
		}
	}
	s.mu.RUnlock()
	if info, err := s.e.Info(s.now(), te.key); err == nil && !info.LastUsed.IsZero() {
		rt.AccessedAt = info.LastUsed
	}
	return atom.Entry{Path: atom.Path{Kind: atom.KindTopic, Entity: te.name}, Topic: &props, Runtime: rt}
}

func (s *Server) subEntry(se *subEnt) atom.Entry {
	s.mu.RLock()
	props, created, updated := se.props, se.created, se.updated
	s.mu.RUnlock()
	return atom.Entry{Path: atom.Path{Kind: atom.KindSubscription, Entity: se.topic.name, Subscription: se.name},
		Subscription: &props, Runtime: s.runtime(se.main, se.dlq, se.tdlq, created, updated)}
}

func ruleEntry(se *subEnt, r *rule) atom.Entry {
	p := r.props
	return atom.Entry{Path: atom.Path{Kind: atom.KindRule, Entity: se.topic.name, Subscription: se.name, Rule: p.Name},
		Rule: &p, Runtime: atom.Runtime{CreatedAt: r.created, UpdatedAt: r.created, AccessedAt: r.created}}
}

// LoadConfig declares what the official emulator's Config.json holds:
// queues, topics, subscriptions and rules; entities that exist already are
// updated to the file's properties. The namespace name is taken from the
// file.
func (s *Server) LoadConfig(data []byte) error {
	cfg, err := atom.ParseConfig(data)
	if err != nil {
		return err
	}
	b := backend{s}
	for _, e := range cfg.Entries() {
		_, err := b.Get(e.Path)
		exists := err == nil
		var first *atom.RuleProperties
		if e.Path.Kind == atom.KindSubscription && e.Subscription != nil && exists {
			// an existing subscription keeps its rules; the file's first
			// rule, which stands in for $Default on creation, is updated
			// like the others
			sp := *e.Subscription
			first, sp.DefaultRule = sp.DefaultRule, nil
			e.Subscription = &sp
		}
		if _, err := b.Put(e, exists); err != nil {
			return core.Errorf(core.EINVALID, "%s '%s': %s", strings.ToLower(e.Path.Kind.String()), e.Path.String(), core.ErrorMessage(err))
		}
		if first != nil {
			if _, err := s.replaceRule(e.Path.Entity, e.Path.Subscription, *first); core.ErrorCode(err) == core.ENOTFOUND {
				_, err = s.addRule(e.Path.Entity, e.Path.Subscription, *first)
				if err != nil {
					return err
				}
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}
