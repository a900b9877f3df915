package servicebus

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// DefaultKey is the key the official emulator's connection string carries:
// Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;
var DefaultKey = sas.Key{Name: "RootManageSharedAccessKey", Value: "SAS_KEY_VALUE"}

// DefaultMaxMessageSize is the largest message a client may send, in bytes
// (256 KB, the standard tier's limit).
const DefaultMaxMessageSize = 256 * 1024

// Config configures a Server.
type Config struct {
	// Engine keeps every entity and message.
	Engine *core.Engine
	// Now reads the one Clock.
	Now func() time.Time
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// Keys are the shared access keys that sign valid tokens; nil gives
	// DefaultKey.
	Keys []sas.Key
	// Namespace is the namespace's name, shown in messages and
	// $namespaceinfo; "" gives "sbemulatorns", the official emulator's.
	Namespace string
	// Tier is the namespace's tier (SB-3).
	Tier adapters.ServiceBusTier
	// MaxMessageSize is the largest message in bytes; 0 gives
	// DefaultMaxMessageSize.
	MaxMessageSize int64
	// Version is lapse's version, shown in the open frame's properties.
	Version string
	// Resolve, set on the default world's server only, returns the
	// server of the world (a sandbox, docs/architecture.md "Sandboxes")
	// whose key is named keyName, or nil when there is none. A
	// connection, or an administration request, that names a key of
	// another world is served by that world's server: a connection from
	// its SASL PLAIN user name or the key name (skn) of its first valid
	// CBS token on, for the rest of its life. Resolve is called without
	// any lock of the server held.
	Resolve func(keyName string) *Server
}

// Server is the Service Bus front-end: queues, topics, subscriptions and
// their rules over core, the AMQP 1.0 connections the SDKs open, and the
// administration API.
type Server struct {
	cfg  Config
	logp atomic.Pointer[slog.Logger]
	e    *core.Engine

	// adminMu serializes changes to entities; it may be held while calling
	// the engine, and no engine hook takes it.
	adminMu lockorder.Mutex
	// mu guards the tables below. It is never held while calling the
	// engine, because the engine's hooks take it.
	mu      lockorder.RWMutex
	queues  map[string]*queueEnt // by folded name
	topics  map[string]*topicEnt
	byKey   map[core.EntityKey]*node
	byID    map[uint32]*node
	nodeSeq uint32
	created time.Time

	// scheduled maps the numbers of messages scheduled on topics to
	// their copies that do not carry that number (forwarded, or a second
	// copy in one subscription), for cancel-scheduled-message; those that
	// do are found by it, which survives a restart (mgmt.go).
	schedMu   lockorder.Mutex
	scheduled map[schedKey][]placed
	// schedPrune is the size of scheduled at which the entries whose
	// copies are all enqueued or gone are dropped next (mgmt.go).
	schedPrune int

	conns sync.Map // *conn -> struct{}
	// readBufs are the connections' read-ahead buffers (readbuf.go).
	readBufs readBuffers
	nconn    atomic.Uint64
	// connsMu guards closed; a connection is registered (wg.Add, conns)
	// under it, so that Close, which sets closed under it, finds every
	// connection it let in.
	connsMu lockorder.Mutex
	closed  bool
	// nholder numbers session receivers, so that each holds its session
	// under a holder id of its own (sessionlink.go).
	nholder atomic.Uint64
	// ntxn numbers the transactions declared (txn.go).
	ntxn    atomic.Uint64
	wg      sync.WaitGroup
	closing chan struct{}
	once    sync.Once
}

// New returns a server on cfg.Engine. Register its Hooks with the engine
// before the engine's Recover.
func New(cfg Config) *Server {
	if cfg.Keys == nil {
		cfg.Keys = []sas.Key{DefaultKey}
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "sbemulatorns"
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = DefaultMaxMessageSize
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, e: cfg.Engine, closing: make(chan struct{})}
	s.logp.Store(log)
	s.clearTables()
	s.created = cfg.Now()
	return s
}

func (s *Server) clearTables() {
	s.queues = map[string]*queueEnt{}
	s.topics = map[string]*topicEnt{}
	s.byKey = map[core.EntityKey]*node{}
	s.byID = map[uint32]*node{}
}

func (s *Server) log() *slog.Logger { return s.logp.Load() }

// SetLogger replaces the server's logger.
func (s *Server) SetLogger(l *slog.Logger) { s.logp.Store(l) }

func (s *Server) now() time.Time { return s.cfg.Now() }

// Hooks are the server's hooks for core.Engine.Register.
func (s *Server) Hooks() core.ProtocolHooks {
	return core.ProtocolHooks{
		DeadLetter: s.deadLetter,
		Available:  s.available,
		// receivers of session entities look when a session has messages
		SessionAvailable: s.sessionAvailable,
		SessionLost:      s.sessionLost,
		Deleted:          s.deleted,
		Recovered:        s.recovered,
		Describe:         describe,
		Resubmit:         s.resubmit,
	}
}

// available wakes the receivers of entity k.
func (s *Server) available(k core.EntityKey) {
	s.mu.RLock()
	n := s.byKey[k]
	s.mu.RUnlock()
	if n != nil {
		n.signal()
	}
}

// deleted forgets an entity the engine deleted because it was idle
// (SB-10), with what belongs to it.
func (s *Server) deleted(en core.Entity) {
	var m entityMeta
	if json.Unmarshal(en.Meta, &m) != nil {
		return
	}
	// As any deletion through the administration API: under adminMu, so
	// that no creation of a subscription finds the topic and then adds
	// to it after it is forgotten, and no queue is made anew while the
	// old one's dead-letter queues are still being deleted.
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	// The incarnation tells the entity deleted from one made anew under
	// its name since (or forgotten already by dropDeleted).
	switch m.Kind {
	case kindQueue:
		if qe := s.queueRecord(m.Name); qe != nil && qe.h == en.Handle {
			s.forgetDeletedQueue(qe)
		}
	case kindTopic:
		if te := s.topicRecord(m.Name); te != nil && te.h == en.Handle {
			s.forgetDeletedTopic(te)
		}
	case kindSubscription:
		if se := s.subscriptionRecord(m.Topic, m.Name); se != nil && se.h == en.Handle {
			s.forgetDeletedSubscription(se)
		}
	}
}

// The engine deletes only the main entity of what is idle; these forget
// it and delete what belongs to it. Callers hold adminMu.

func (s *Server) forgetDeletedQueue(qe *queueEnt) {
	s.forgetQueue(qe)
	s.deleteCore(qe.dlq, qe.tdlq)
}

func (s *Server) forgetDeletedTopic(te *topicEnt) {
	var ns []*node
	for _, se := range s.forgetTopic(te) {
		ns = append(ns, se.main, se.dlq, se.tdlq)
	}
	s.deleteCore(ns...)
}

func (s *Server) forgetDeletedSubscription(se *subEnt) {
	s.forgetSubscription(se)
	s.deleteCore(se.dlq, se.tdlq)
}

// dropDeleted forgets, under adminMu, the queue or topic called name, or
// subscription name of topic te when te is not nil, if the engine has
// deleted it for being idle (SB-10) and its Deleted hook has not run yet:
// a create of that name then succeeds, as on the service, which has
// forgotten it by then. The hook, when it runs, finds another incarnation
// or nothing.
func (s *Server) dropDeleted(now time.Time, te *topicEnt, name string) {
	if te != nil {
		if se := s.subscriptionRecord(te.name, name); se != nil && !s.e.Alive(now, se.h) {
			s.forgetDeletedSubscription(se)
		}
		return
	}
	if qe := s.queueRecord(name); qe != nil && !s.e.Alive(now, qe.h) {
		s.forgetDeletedQueue(qe)
	}
	if te := s.topicRecord(name); te != nil && !s.e.Alive(now, te.h) {
		s.forgetDeletedTopic(te)
	}
}

// recovered rebuilds the tables from the entities the store kept.
func (s *Server) recovered(ents []core.Entity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	type sub struct {
		en core.Entity
		m  entityMeta
	}
	var subs []sub
	for _, en := range ents {
		var m entityMeta
		if json.Unmarshal(en.Meta, &m) != nil {
			continue
		}
		switch m.Kind {
		case kindQueue:
			if m.Queue != nil {
				s.queues[fold(m.Name)] = s.queueRecordOf(en, &m)
			}
		case kindTopic:
			if m.TopicProps != nil {
				s.topics[fold(m.Name)] = topicRecordOf(en, &m)
			}
		case kindSubscription:
			subs = append(subs, sub{en, m})
		}
	}
	for _, x := range subs {
		te := s.topics[fold(x.m.Topic)]
		if te == nil || x.m.Subscription == nil {
			continue
		}
		te.subs[fold(x.m.Name)] = s.subRecordOf(te, x.en, &x.m)
	}
}

// ServeConn serves one AMQP 1.0 connection whose 8-byte protocol header
// (AMQP 0 1 0 0 or SASL's AMQP 3 1 0 0) has been read already; it returns
// when the connection is closed.
//
// On the default world's server (Config.Resolve set), a connection whose
// key names another world continues in that world's server, which then
// holds it: its Close ends the connection and waits for it.
func (s *Server) ServeConn(nc net.Conn, header [8]byte) {
	c := s.newConn(nc)
	if !s.admit(c) {
		nc.Close()
		return
	}
	defer func() {
		// the server that holds the connection when it ends, which
		// moveTo may have changed
		s := c.srv()
		s.conns.Delete(c)
		s.wg.Done()
	}()
	c.serve(header)
}

// admit registers c as one of the server's connections, unless the server
// is closed.
func (s *Server) admit(c *conn) bool {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	s.conns.Store(c, struct{}{})
	return true
}

// isClosed reports whether Close has been called.
func (s *Server) isClosed() bool {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	return s.closed
}

// forceCloseBound is how long CloseConnections lets the connections say
// why they close before it closes their sockets.
const forceCloseBound = 2 * time.Second

// CloseConnections closes every client connection with
// amqp:connection:forced, all at once, and returns within
// forceCloseBound and a moment. A connection whose client reads nothing
// holds its writer in a write, and the close's flush waits for that
// writer: one such connection held Close, and the control API's reset,
// for the writer's deadline of minutes, and each connection after it
// waited its turn. Once the bound is past, the sockets still open are
// closed, which ends every write on them.
func (s *Server) CloseConnections(reason string) {
	var cs []*conn
	s.conns.Range(func(k, _ any) bool {
		cs = append(cs, k.(*conn))
		return true
	})
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { c.forceClose(reason) })
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(forceCloseBound):
		for _, c := range cs {
			c.nc.Close()
		}
		<-done
	}
}

// detachNodes detaches the receivers of deleted nodes, and returns once
// their clients have answered the detaches, a second at most (detach).
func (s *Server) detachNodes(ns ...*node) {
	for _, n := range ns {
		if n == nil {
			continue
		}
		n.mu.Lock()
		n.gone = true
		ls := make([]*link, 0, len(n.waiters))
		for l := range n.waiters {
			ls = append(ls, l)
		}
		n.mu.Unlock()
		detach(ls, errEntityGone(n.path()))
	}
}

// Reset forgets every entity after the engine dropped them all (the
// control API's POST /api/reset) and closes every connection.
func (s *Server) Reset() {
	s.CloseConnections("reset")
	s.adminMu.Lock()
	s.mu.Lock()
	s.clearTables()
	s.mu.Unlock()
	s.adminMu.Unlock()
}

// Close closes every connection and waits for the server's goroutines. It
// is safe to call twice.
func (s *Server) Close(ctx context.Context) error {
	s.connsMu.Lock()
	s.closed = true
	s.connsMu.Unlock()
	s.once.Do(func() { close(s.closing) })
	s.CloseConnections("shutdown")
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Entities lists the queues, topics and subscriptions by path, for tests
// and the log.
func (s *Server) Entities() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, q := range s.queues {
		if q.live() {
			out = append(out, q.name)
		}
	}
	for _, t := range s.topics {
		if !t.live() {
			continue
		}
		out = append(out, t.name)
		for _, se := range t.subs {
			if se.live() {
				out = append(out, se.main.path())
			}
		}
	}
	sort.Strings(out)
	return out
}
