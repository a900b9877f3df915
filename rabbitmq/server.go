package rabbitmq

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// Config configures a Server.
type Config struct {
	// Engine keeps every queue, exchange, binding, policy and message.
	Engine *core.Engine
	// Now reads the one Clock.
	Now func() time.Time
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// Users may log in; nil gives RabbitMQ's default user guest/guest, an
	// administrator with every permission on the server's own vhost.
	Users []User
	// Version is lapse's version, shown in the server properties.
	Version string
	// Vhost is the server's own vhost, the one Start declares and whose
	// entities are named without a vhost part (names.go); "" means "/". A
	// sandbox's server has its own (the sandbox's id) and no "/" (see
	// "Sandboxes" in docs/architecture.md).
	Vhost string
	// Resolve, set on the default world's server only, returns the server
	// of another world that has vhost vh, or nil. A connection that opens
	// a vhost this server does not have continues in the server it
	// returns, for the rest of its life.
	Resolve func(vh string) *Server
	// UserElsewhere, set with Resolve, reports whether another world has
	// a user of that name and password. Such a login, which this server's
	// users refuse at start-ok, waits for connection.open: the world of
	// the vhost opened there logs the user in, and this one still refuses.
	UserElsewhere func(user, pass string) bool
}

// Server is the RabbitMQ front-end: the broker state (vhosts, exchanges,
// bindings, queues and their consumers) and the AMQP 0-9-1 connections.
type Server struct {
	cfg  Config
	logp atomic.Pointer[slog.Logger]
	e    *core.Engine

	// topoMu serializes the changes clients make to the topology; it may be
	// held while calling the engine, and no engine hook takes it.
	topoMu lockorder.Mutex
	// mu guards the topology and the users. It is never held while calling
	// the engine (see the package doc).
	mu     lockorder.RWMutex
	vhosts map[string]*vhost
	byKey  map[core.EntityKey]*queue // every queue by its entity
	// version counts topology changes, so that what was computed from the
	// topology can be reused until it changes.
	version uint64
	users   map[string]*User

	patterns patternCache

	conns sync.Map // *conn -> struct{}
	// readBufs lends the connections' readers their read-ahead buffers.
	readBufs wire.BufferPool
	// connsMu guards nconn and closed; a connection is registered (wg.Add,
	// conns) under it, so that Close, which sets closed under it, finds
	// every connection it let in.
	connsMu lockorder.Mutex
	nconn   uint64
	closed  bool
	wg      sync.WaitGroup
	closing chan struct{}
	once    sync.Once
}

// New returns a server on cfg.Engine. Register its Hooks with the engine
// before the engine's Recover, then call Start.
func New(cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:     cfg,
		e:       cfg.Engine,
		vhosts:  map[string]*vhost{},
		byKey:   map[core.EntityKey]*queue{},
		users:   map[string]*User{},
		closing: make(chan struct{}),
	}
	s.logp.Store(log)
	users := cfg.Users
	if users == nil {
		u := DefaultUser()
		u.Permissions = map[string]Permission{s.home(): u.Permissions[vhostDefault]}
		users = []User{u}
	}
	for _, u := range users {
		s.putUser(u)
	}
	return s
}

// Hooks are the server's hooks for core.Engine.Register.
func (s *Server) Hooks() core.ProtocolHooks {
	return core.ProtocolHooks{
		DeadLetter: s.deadLetter,
		Available:  s.available,
		Deleted:    s.deleted,
		Recovered:  s.recovered,
		Describe:   describe,
		Resubmit:   s.resubmit,
	}
}

// Start declares what every RabbitMQ has (its own vhost, "/" unless
// Config.Vhost names another, and the amq.* exchanges of each vhost)
// unless the store brought them back.
func (s *Server) Start() error {
	if _, err := s.declareVhost(s.home()); err != nil {
		return err
	}
	return nil
}

// Vhost returns the server's own vhost: Config.Vhost, or "/".
func (s *Server) Vhost() string { return s.home() }

// home is the server's own vhost.
func (s *Server) home() string {
	if s.cfg.Vhost == "" {
		return vhostDefault
	}
	return s.cfg.Vhost
}

func (s *Server) now() time.Time { return s.cfg.Now() }

// ServeConn serves one AMQP connection whose 8-byte protocol header has
// been read already; it returns when the connection is closed.
// A connection whose connection.open names a vhost of another world (see
// Config.Resolve) is served by that world's server from then on.
func (s *Server) ServeConn(nc net.Conn, header [8]byte) {
	c := s.newConn(nc)
	if !s.admit(c) {
		nc.Close()
		return
	}
	// Only this goroutine changes c.s (conn.moveTo), so it reads the
	// server that serves c last here without a lock.
	defer func() { c.s.release(c) }()
	c.serve(header)
}

// admit registers c among the connections Close closes and waits for,
// unless the server is closed. Each admit is followed by one release.
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

// release forgets a connection admit registered.
func (s *Server) release(c *conn) {
	s.connsMu.Lock()
	s.conns.Delete(c)
	s.connsMu.Unlock()
	s.wg.Done()
}

// nextConnID numbers the server's connections, for its log.
func (s *Server) nextConnID() uint64 {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	s.nconn++
	return s.nconn
}

// worldOf returns the server that serves vhost vh: s when vh is one of
// its own vhosts or no other world's server has it.
func (s *Server) worldOf(vh string) *Server {
	if s.cfg.Resolve == nil || s.lookupVhost(vh) != nil {
		return s
	}
	if t := s.cfg.Resolve(vh); t != nil {
		return t
	}
	return s
}

// goForConn runs f on a goroutine Close waits for, as long as c is still
// served: its ServeConn holds the WaitGroup above zero while c is
// registered, so the Add cannot race Close's Wait. It reports whether f
// runs.
func (s *Server) goForConn(c *conn, f func()) bool {
	s.connsMu.Lock()
	_, live := s.conns.Load(c)
	if live {
		s.wg.Add(1)
	}
	s.connsMu.Unlock()
	if !live {
		return false
	}
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// CloseConnections closes every client connection with reply code 320
// CONNECTION_FORCED, as RabbitMQ does when it shuts down.
func (s *Server) CloseConnections(reason string) {
	s.conns.Range(func(k, _ any) bool {
		k.(*conn).forceClose("broker forced connection closure with reason '" + reason + "'")
		return true
	})
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
		// What still runs is held by its socket: close them all, so that
		// nothing a connection does outlives the server for long.
		s.conns.Range(func(k, _ any) bool {
			k.(*conn).nc.Close()
			return true
		})
		return ctx.Err()
	}
}

// queueByKeyLocked returns the queue of entity k; callers hold mu.
func (s *Server) queueByKeyLocked(k core.EntityKey) *queue { return s.byKey[k] }

// available is the engine's hook for messages that became available.
func (s *Server) available(k core.EntityKey) {
	s.mu.RLock()
	q := s.byKey[k]
	s.mu.RUnlock()
	if q != nil {
		q.signal()
	}
}

// Reset forgets the whole topology after the engine dropped every entity
// (the control API's POST /api/reset): every connection is closed, and the
// server's own vhost and its exchanges are declared again.
func (s *Server) Reset() error {
	s.CloseConnections("reset")
	s.topoMu.Lock()
	s.lockTopo()
	old := s.vhosts
	s.vhosts = map[string]*vhost{}
	s.byKey = map[core.EntityKey]*queue{}
	s.mu.Unlock()
	s.topoMu.Unlock()
	for _, vh := range old {
		for _, q := range vh.queues {
			q.stop()
		}
	}
	return s.Start()
}

// lockTopo takes mu to change the topology.
func (s *Server) lockTopo() {
	s.mu.Lock()
	s.version++
}

// SetLogger replaces the server's logger, for connections opened afterwards.
func (s *Server) SetLogger(l *slog.Logger) { s.logp.Store(l) }

func (s *Server) log() *slog.Logger { return s.logp.Load() }
