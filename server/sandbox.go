package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/dashboard"
	"github.com/lapse-emulator/lapse/rabbitmq"
	"github.com/lapse-emulator/lapse/servicebus"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// Sandboxes (issue 29, docs/architecture.md "Sandboxes"): worlds of their
// own beside the default one, each with a clock, an engine on a store in
// memory, an expiry runner and a server of each protocol, reached through
// the default world's ports by the settings a client already has: the
// Service Bus shared access key name, the RabbitMQ virtual host, the
// Cosmos DB account key. The default world keeps the registry and routes.

// DefaultSandboxIdleTTL is how long a sandbox may go unused, on the wall
// clock, before it is deleted (EM-5), when its creation names none.
const DefaultSandboxIdleTTL = 30 * time.Minute

// MaxSandboxIdleTTL bounds a sandbox's idle TTL.
const MaxSandboxIdleTTL = 7 * 24 * time.Hour

// sandboxReapEvery is how often the idle sandboxes are looked for.
const sandboxReapEvery = time.Second

// sandbox is one world of its own.
type sandbox struct {
	wall    func() time.Time // the wall clock its clock follows
	id      string
	created time.Time // wall clock
	idleTTL time.Duration
	// lastUsed is the wall clock's time of the last use, in Unix ns.
	lastUsed atomic.Int64

	clock  *core.Clock
	engine *core.Engine
	runner *runner
	rabbit *rabbitmq.Server
	sb     *servicebus.Server
	cosmos *cosmos.Server
	sbKey  string
	dbKey  string
	req    dashboard.SandboxRequest

	// folder, store and meta are a durable sandbox's (open): its folder,
	// its store and what its sandbox.json keeps; metaMu orders its writes.
	folder string
	store  store
	meta   sandboxMeta
	metaMu sync.Mutex

	// control is the sandbox's control API, made at its first use.
	controlOnce sync.Once
	control     http.Handler
}

// sandboxes is the registry of the sandboxes, the default world's.
type sandboxes struct {
	m   *Main
	log *slog.Logger

	mu   sync.Mutex
	byID map[string]*sandbox
	// cosmos are the sandboxes' Cosmos DB servers, for the port's routing,
	// replaced whole on each change.
	cosmos atomic.Pointer[[]*cosmos.Server]
	count  atomic.Int64

	quit chan struct{}
	done chan struct{}
}

func newSandboxes(m *Main) *sandboxes {
	s := &sandboxes{m: m, log: m.Logger.With("sandboxes", true), byID: map[string]*sandbox{},
		quit: make(chan struct{}), done: make(chan struct{})}
	s.cosmos.Store(&[]*cosmos.Server{})
	go s.reap()
	return s
}

// rabbitMQ returns the RabbitMQ server of the sandbox whose vhost is
// vhost, nil for none (rabbitmq.Config.Resolve).
func (s *sandboxes) rabbitMQ(vhost string) *rabbitmq.Server {
	if sb := s.lookup(vhost); sb != nil {
		return sb.rabbit
	}
	return nil
}

// rabbitMQUser reports whether a sandbox's broker has user with password
// pass (rabbitmq.Config.UserElsewhere): a user its definitions declared,
// who logs in through the default world's listener.
func (s *sandboxes) rabbitMQUser(user, pass string) bool {
	s.mu.Lock()
	all := make([]*sandbox, 0, len(s.byID))
	for _, sb := range s.byID {
		all = append(all, sb)
	}
	s.mu.Unlock()
	for _, sb := range all {
		if sb.rabbit != nil && sb.rabbit.Authenticates(user, pass) {
			return true
		}
	}
	return false
}

// serviceBus returns the Service Bus server of the sandbox whose key name
// is name, nil for none (servicebus.Config.Resolve).
func (s *sandboxes) serviceBus(name string) *servicebus.Server {
	if sb := s.lookup(name); sb != nil {
		return sb.sb
	}
	return nil
}

// cosmosWorlds are the sandboxes' Cosmos DB servers (cosmos.Config.Worlds).
func (s *sandboxes) cosmosWorlds() []*cosmos.Server { return *s.cosmos.Load() }

// publish makes the registry's servers visible to the ports' routing; it
// runs under mu.
func (s *sandboxes) publishLocked() {
	cs := make([]*cosmos.Server, 0, len(s.byID))
	for _, sb := range s.byID {
		cs = append(cs, sb.cosmos)
	}
	s.cosmos.Store(&cs)
	s.count.Store(int64(len(s.byID)))
}

// newSandboxID returns "sbx-" and 8 random hex digits: a name every
// protocol takes as a virtual host, a key name and a path segment.
func newSandboxID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "sbx-" + hex.EncodeToString(b[:])
}

// newKey returns a random key of n bytes in base64, as the services' keys.
func newKey(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// sandboxMeta is what a durable sandbox keeps in its folder's
// sandbox.json, to come back after a restart as it was: its keys, its idle
// TTL, its configuration and its clock.
type sandboxMeta struct {
	ID             string                   `json:"id"`
	Created        time.Time                `json:"created"`
	IdleTTLSeconds int64                    `json:"idleTtlSeconds"`
	ServiceBusKey  string                   `json:"servicebusKey"`
	CosmosKey      string                   `json:"cosmosKey"`
	Request        dashboard.SandboxRequest `json:"request"`
	Clock          sandboxClock             `json:"clock"`
}

// sandboxClock is a sandbox clock's state: its mode, and its time, which a
// running clock keeps as its distance from the wall clock (newClock).
type sandboxClock struct {
	Mode core.ClockMode `json:"mode"`
	Now  time.Time      `json:"now"`
	// Ahead is how far ahead of the wall an offset clock runs.
	Ahead time.Duration `json:"ahead,omitempty"`
}

// newClock returns the clock of state c, on wall.
func (c sandboxClock) newClock(wall func() time.Time) *core.Clock {
	switch c.Mode {
	case core.ClockFrozen:
		return core.NewClockAt(wall, c.Now, true)
	case core.ClockOffset:
		return core.NewClockAt(wall, wall().Add(c.Ahead), false)
	}
	return core.NewClock(wall)
}

// sandboxMetaFile is the name of a durable sandbox's sandbox.json.
const sandboxMetaFile = "sandbox.json"

// Create makes a sandbox as req asks (dashboard.Sandboxes).
func (s *sandboxes) Create(ctx context.Context, req dashboard.SandboxRequest, host string) (dashboard.Sandbox, error) {
	idle := DefaultSandboxIdleTTL
	if req.IdleTTLSeconds < 0 || time.Duration(req.IdleTTLSeconds)*time.Second > MaxSandboxIdleTTL {
		return dashboard.Sandbox{}, core.Errorf(core.EINVALID, "idleTtlSeconds %d: use 1 to %d, or leave it out for %d",
			req.IdleTTLSeconds, int64(MaxSandboxIdleTTL/time.Second), int64(DefaultSandboxIdleTTL/time.Second))
	}
	if req.IdleTTLSeconds > 0 {
		idle = time.Duration(req.IdleTTLSeconds) * time.Second
	}
	m := s.m
	meta := sandboxMeta{ID: newSandboxID(), Created: m.Wall().UTC(), IdleTTLSeconds: int64(idle / time.Second),
		ServiceBusKey: newKey(32), CosmosKey: newKey(64), Request: req, Clock: sandboxClock{Mode: core.ClockReal}}
	switch req.Clock {
	case "", "frozen":
		meta.Clock = sandboxClock{Mode: core.ClockFrozen, Now: m.Wall().UTC()}
	case "running":
	default:
		return dashboard.Sandbox{}, core.Errorf(core.EINVALID, "clock %q: use frozen or running", req.Clock)
	}
	if req.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, req.Time)
		if err != nil {
			return dashboard.Sandbox{}, core.Errorf(core.EINVALID, "time %q is not RFC 3339: %v", req.Time, err)
		}
		if meta.Clock.Mode == core.ClockFrozen {
			meta.Clock.Now = t.UTC()
		} else {
			meta.Clock = sandboxClock{Mode: core.ClockOffset, Ahead: t.Sub(m.Wall())}
		}
	}
	if req.Durable && m.Config.Data == ":memory:" {
		return dashboard.Sandbox{}, core.Errorf(core.EINVALID, "this lapse keeps nothing (--data :memory:): a durable sandbox needs a data folder")
	}
	sb, err := s.open(ctx, meta)
	if err != nil {
		return dashboard.Sandbox{}, err
	}
	s.log.Info("sandbox created", "sandbox", sb.id, "idleTTL", idle, "durable", req.Durable)
	return s.view(sb, host), nil
}

// folder is a durable sandbox's folder under the data folder.
func (s *sandboxes) folder(id string) string {
	return filepath.Join(s.m.Config.Data, "sandboxes", id)
}

// open makes the world of meta, on a store in memory or, for a durable
// one, on its folder's (which a restart finds again: restore), declares
// its configuration, and registers it.
func (s *sandboxes) open(ctx context.Context, meta sandboxMeta) (sb *sandbox, err error) {
	m := s.m
	sb = &sandbox{wall: m.Wall, id: meta.ID, created: meta.Created, idleTTL: time.Duration(meta.IdleTTLSeconds) * time.Second,
		sbKey: meta.ServiceBusKey, dbKey: meta.CosmosKey, req: meta.Request}
	sb.lastUsed.Store(m.Wall().UnixNano())
	sb.clock = meta.Clock.newClock(m.Wall)
	log := s.log.With("sandbox", sb.id)
	var st core.Store = core.DiscardStore{}
	if meta.Request.Durable {
		sb.folder = s.folder(sb.id)
		if err := os.MkdirAll(sb.folder, 0o755); err != nil {
			return nil, err
		}
		ds, err := openStore(sb.folder, false, log.With("store", "journal"))
		if err != nil {
			return nil, err
		}
		st, sb.store = ds, ds
		sb.meta = meta
		if err := sb.saveMeta(); err != nil {
			_ = ds.Close(ctx)
			return nil, err
		}
		// The clock's every move is kept, so that a restart finds it
		// where it stood.
		sb.clock.OnChange(func() {
			if err := sb.saveMeta(); err != nil {
				log.Error("keeping the sandbox's clock", "err", err)
			}
		})
	}
	defer func() {
		if err != nil {
			sb.close(context.WithoutCancel(ctx))
		}
	}()
	sb.runner = newRunner(sb.clock)
	sb.engine = core.NewEngine(core.Config{Store: st, Wake: sb.runner.Wake,
		OnPanic: func(p core.HookPanic) { logPanic(log, p) }})
	sb.clock.OnChange(sb.runner.Wake)
	sb.rabbit = rabbitmq.New(rabbitmq.Config{Engine: sb.engine, Now: sb.clock.Now, Logger: log.With("listener", "amqp"),
		Version: m.Version, Vhost: sb.id})
	sb.engine.Register(core.RabbitMQ, sb.rabbit.Hooks())
	sb.sb = servicebus.New(servicebus.Config{Engine: sb.engine, Now: sb.clock.Now,
		Logger: log.With("listener", "amqp", "protocol", "servicebus"), Version: m.Version,
		MaxMessageSize: m.Config.ServiceBusMaxMessageSize, Keys: []sas.Key{{Name: sb.id, Value: sb.sbKey}}})
	sb.engine.Register(core.ServiceBus, sb.sb.Hooks())
	sb.cosmos, err = cosmos.NewServer(cosmos.Config{Engine: sb.engine, Now: sb.clock.Now, WallNow: m.Wall,
		Logger: log.With("listener", "cosmos"), Key: sb.dbKey, Certificate: m.cert, CertificatePEM: m.certPEM,
		DefaultConsistencyLevel: m.Config.CosmosConsistency, PartitionCount: m.Config.CosmosPartitionCount,
		Used: sb.use(m.Wall)})
	if err != nil {
		return nil, err
	}
	sb.engine.Register(core.Cosmos, sb.cosmos.Hooks())
	if err := sb.engine.Recover(ctx, sb.clock.Now()); err != nil {
		return nil, err
	}
	sb.runner.start(sb.engine)
	if err := sb.rabbit.Start(); err != nil {
		return nil, err
	}
	if err := sb.declareConfigured(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.byID[sb.id] = sb
	s.publishLocked()
	s.mu.Unlock()
	return sb, nil
}

// saveMeta writes a durable sandbox's sandbox.json with its clock as it
// stands, through a file renamed over the old one.
func (sb *sandbox) saveMeta() error {
	sb.metaMu.Lock()
	defer sb.metaMu.Unlock()
	meta := sb.meta
	now := sb.clock.Now()
	meta.Clock = sandboxClock{Mode: sb.clock.Mode(), Now: now.UTC(), Ahead: now.Sub(sb.wall())}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(sb.folder, sandboxMetaFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(sb.folder, sandboxMetaFile))
}

// restore brings back the durable sandboxes of the data folder, as they
// were when lapse stopped: their keys, clocks and entities. One that
// cannot be opened is logged and left on disk.
func (s *sandboxes) restore(ctx context.Context) {
	if s.m.Config.Data == ":memory:" {
		return
	}
	dirs, _ := filepath.Glob(filepath.Join(s.m.Config.Data, "sandboxes", "*", sandboxMetaFile))
	for _, f := range dirs {
		var meta sandboxMeta
		b, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(b, &meta)
		}
		if err == nil && filepath.Base(filepath.Dir(f)) != meta.ID {
			err = fmt.Errorf("it names sandbox %q", meta.ID)
		}
		if err == nil {
			_, err = s.open(ctx, meta)
		}
		if err != nil {
			s.log.Error("a durable sandbox could not come back; its folder is kept", "file", f, "err", err)
			continue
		}
		s.log.Info("durable sandbox back", "sandbox", meta.ID)
	}
}

// declareConfigured declares what the sandbox's creation gave: a Service
// Bus Config.json, RabbitMQ definitions and a Cosmos DB config, at its
// creation and again after a reset of it.
func (sb *sandbox) declareConfigured(ctx context.Context) error {
	if len(sb.req.ServiceBusConfig) > 0 {
		if err := sb.sb.LoadConfig(sb.req.ServiceBusConfig); err != nil {
			return fmt.Errorf("servicebusConfig: %w", err)
		}
	}
	if len(sb.req.RabbitMQDefinitions) > 0 {
		if err := sb.rabbit.LoadDefinitions(bytes.NewReader(sb.req.RabbitMQDefinitions)); err != nil {
			return fmt.Errorf("rabbitmqDefinitions: %w", err)
		}
	}
	if len(sb.req.CosmosConfig) > 0 {
		if err := sb.cosmos.LoadConfig(ctx, sb.req.CosmosConfig); err != nil {
			return fmt.Errorf("cosmosConfig: %w", err)
		}
	}
	return nil
}

// reset brings back what every broker has and the sandbox's configuration
// after its control API's reset.
func (sb *sandbox) reset(ctx context.Context) error {
	if err := sb.rabbit.Reset(); err != nil {
		return err
	}
	sb.sb.Reset()
	return sb.declareConfigured(ctx)
}

// use returns a function that counts as a use of the sandbox.
func (sb *sandbox) use(wall func() time.Time) func() {
	return func() { sb.lastUsed.Store(wall().UnixNano()) }
}

// controlAPI returns the sandbox's control API, made at its first use.
func (s *sandboxes) controlAPI(sb *sandbox) http.Handler {
	sb.controlOnce.Do(func() {
		m := s.m
		sb.control = dashboard.NewServer(dashboard.Config{
			BasePath:       "/sandboxes/" + sb.id,
			Engine:         sb.engine,
			Clock:          sb.clock,
			Logger:         s.log.With("sandbox", sb.id, "listener", "control"),
			Info:           m.info,
			OnReset:        sb.reset,
			Queries:        map[string]dashboard.QueryFunc{core.Cosmos: sb.cosmos.Query},
			CertificatePEM: m.certPEM,
		}).Handler()
	})
	return sb.control
}

// List returns every sandbox, oldest first (dashboard.Sandboxes).
func (s *sandboxes) List(host string) []dashboard.Sandbox {
	s.mu.Lock()
	all := make([]*sandbox, 0, len(s.byID))
	for _, sb := range s.byID {
		all = append(all, sb)
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b *sandbox) int { return a.created.Compare(b.created) })
	out := make([]dashboard.Sandbox, len(all))
	for i, sb := range all {
		out[i] = s.view(sb, host)
	}
	return out
}

// Get returns sandbox id and its control API, and counts as a use of it
// (dashboard.Sandboxes).
func (s *sandboxes) Get(id, host string) (dashboard.Sandbox, http.Handler, bool) {
	sb := s.lookup(id)
	if sb == nil {
		return dashboard.Sandbox{}, nil, false
	}
	sb.use(s.m.Wall)()
	return s.view(sb, host), s.controlAPI(sb), true
}

func (s *sandboxes) lookup(id string) *sandbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

// Delete deletes sandbox id with everything in it (dashboard.Sandboxes).
func (s *sandboxes) Delete(ctx context.Context, id string) error {
	sb := s.remove(id)
	if sb == nil {
		return core.Errorf(core.ENOTFOUND, "sandbox %q not found: it was deleted, or went unused past its idle TTL", id)
	}
	sb.drop(ctx, s.log)
	s.forget(sb)
	s.log.Info("sandbox deleted", "sandbox", id)
	return nil
}

// remove takes sandbox id out of the registry and the ports' routing.
func (s *sandboxes) remove(id string) *sandbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.byID[id]
	if sb != nil {
		delete(s.byID, id)
		s.publishLocked()
	}
	return sb
}

// close ends the sandbox's connections and its runner, and closes its
// store; a durable sandbox's folder stays (drop removes it).
func (sb *sandbox) close(ctx context.Context) {
	if sb.cosmos != nil {
		_ = sb.cosmos.Close(ctx)
	}
	if sb.rabbit != nil {
		_ = sb.rabbit.Close(ctx)
	}
	if sb.sb != nil {
		_ = sb.sb.Close(ctx)
	}
	if sb.runner != nil {
		sb.runner.stop()
	}
	if sb.engine != nil {
		_ = sb.engine.WaitHooks(ctx)
	}
	if sb.store != nil {
		_ = sb.store.Close(ctx)
	}
}

// drop closes the sandbox and removes a durable one's folder.
func (sb *sandbox) drop(ctx context.Context, log *slog.Logger) {
	sb.close(ctx)
	if sb.folder != "" {
		if err := os.RemoveAll(sb.folder); err != nil {
			log.Error("removing a deleted sandbox's folder", "sandbox", sb.id, "err", err)
		}
	}
}

// forget drops what the default world's APIs keep of a closed sandbox.
func (s *sandboxes) forget(sb *sandbox) {
	if s.m.sbAdmin != nil {
		s.m.sbAdmin.Forget(sb.sb)
	}
	if s.m.management != nil {
		s.m.management.Forget(sb.rabbit)
	}
}

// reap deletes the sandboxes unused past their idle TTL on the wall clock,
// each with an event in the default world's log (EM-5), until Close.
func (s *sandboxes) reap() {
	defer close(s.done)
	t := time.NewTicker(sandboxReapEvery)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.reapIdle()
		}
	}
}

// reapIdle deletes the sandboxes idle now. A sandbox with an open AMQP
// connection is in use.
func (s *sandboxes) reapIdle() {
	wall := s.m.Wall()
	s.mu.Lock()
	var idle []*sandbox
	for _, sb := range s.byID {
		if sb.rabbit.Connections()+sb.sb.Connections() > 0 {
			sb.lastUsed.Store(wall.UnixNano())
			continue
		}
		if wall.Sub(time.Unix(0, sb.lastUsed.Load())) >= sb.idleTTL {
			idle = append(idle, sb)
		}
	}
	s.mu.Unlock()
	for _, sb := range idle {
		last := time.Unix(0, sb.lastUsed.Load())
		if s.remove(sb.id) == nil {
			continue
		}
		sb.drop(context.Background(), s.log)
		s.forget(sb)
		s.m.Engine.Record(core.Event{Time: s.m.Clock.Now(), Due: last.Add(sb.idleTTL), Protocol: "lapse", Entity: sb.id,
			Rule: "EM-5", Action: core.ActionDeletedIdle,
			Reason: fmt.Sprintf("sandbox unused for %s since %s (its idle TTL, on the wall clock): deleted with everything in it",
				sb.idleTTL, last.UTC().Format(time.RFC3339Nano))})
		s.log.Info("sandbox deleted: idle", "sandbox", sb.id, "idleTTL", sb.idleTTL)
	}
}

// Close deletes every sandbox and stops the reaper; safe twice.
func (s *sandboxes) Close(ctx context.Context) {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	<-s.done
	s.mu.Lock()
	all := s.byID
	s.byID = map[string]*sandbox{}
	s.publishLocked()
	s.mu.Unlock()
	for _, sb := range all {
		sb.close(ctx)
		s.forget(sb)
	}
}

// view is the sandbox as the control API shows it, with the connection
// settings for host.
func (s *sandboxes) view(sb *sandbox, host string) dashboard.Sandbox {
	m := s.m
	port := func(a net.Addr) string {
		if t, ok := a.(*net.TCPAddr); ok {
			return strconv.Itoa(t.Port)
		}
		return ""
	}
	hp := func(a net.Addr) string { return net.JoinHostPort(host, port(a)) }
	v := dashboard.Sandbox{ID: sb.id, Created: sb.created.UTC(), LastUsed: time.Unix(0, sb.lastUsed.Load()).UTC(),
		IdleTTLSeconds: int64(sb.idleTTL / time.Second), Durable: sb.folder != "", ClockOf: sb.clock}
	if m.Control != nil && m.Control.Addr() != nil {
		v.Control = "http://" + hp(m.Control.Addr()) + "/api/sandboxes/" + sb.id
	}
	if m.amqp != nil {
		v.ServiceBus = dashboard.ServiceBusSandbox{KeyName: sb.id, Key: sb.sbKey,
			ConnectionString: "Endpoint=sb://" + hp(m.amqp.Addr()) + ";SharedAccessKeyName=" + sb.id +
				";SharedAccessKey=" + sb.sbKey + ";UseDevelopmentEmulator=true;"}
		v.RabbitMQ = dashboard.RabbitMQSandbox{Vhost: sb.id, URL: "amqp://guest:guest@" + hp(m.amqp.Addr()) + "/" + sb.id}
	}
	if m.management != nil && m.management.Addr() != nil {
		v.RabbitMQ.ManagementURL = "http://" + hp(m.management.Addr()) + "/"
	}
	if m.Cosmos != nil && m.Cosmos.Addr() != nil {
		ep := "http://" + hp(m.Cosmos.Addr()) + "/"
		v.Cosmos = dashboard.CosmosSandbox{Endpoint: ep, TLSEndpoint: "https://" + hp(m.Cosmos.Addr()) + "/", Key: sb.dbKey,
			ConnectionString: "AccountEndpoint=" + ep + ";AccountKey=" + sb.dbKey + ";"}
	}
	return v
}

var _ dashboard.Sandboxes = (*sandboxes)(nil)
