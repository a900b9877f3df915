// Package lapsetest starts lapse in-process for a Go test, as
// net/http/httptest starts an HTTP server: one call gives a lapse on free
// loopback ports with an in-memory store and a frozen clock of its own,
// and the connection strings the official SDKs take. The clock moves only
// when the test moves it (Advance, Set), so a 14-day TTL is tested in
// microseconds, and parallel tests each have their own clock.
//
//	srv := lapsetest.New(t, lapsetest.WithServiceBusConfig("testdata/Config.json"))
//	client, _ := azservicebus.NewClientFromConnectionString(srv.ServiceBusConnectionString(), nil)
//	// send a message with a TTL of an hour, then
//	srv.Advance(time.Hour)
//	// the message has expired: dead-lettered or gone, as its queue says
//
// The server stops when the test ends (testing.TB.Cleanup). Start does the
// same outside a test, for a caller that stops it with Close.
package lapsetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/server"
)

// Server is a lapse running in the test's process. Its methods may be
// called from any goroutine.
type Server struct {
	tb testing.TB
	m  *server.Main
}

// options are what New was asked for.
type options struct {
	flags    []string
	logLevel slog.Level
}

// Option changes how New starts lapse.
type Option func(*options)

// WithServiceBusConfig declares the entities of an official Service Bus
// emulator Config.json at start (lapse's --servicebus-config).
func WithServiceBusConfig(path string) Option {
	return WithFlags("--servicebus-config", path)
}

// WithRabbitMQDefinitions declares what a RabbitMQ definitions.json holds
// at start: users, vhosts, queues, exchanges, bindings, policies (lapse's
// --rabbitmq-definitions).
func WithRabbitMQDefinitions(path string) Option {
	return WithFlags("--rabbitmq-definitions", path)
}

// WithCosmosConfig creates the databases and containers of a Cosmos
// config file at start (lapse's --cosmos-config).
func WithCosmosConfig(path string) Option {
	return WithFlags("--cosmos-config", path)
}

// WithFlags passes more flags of `lapse serve` (lapse serve -h lists them),
// such as "--servicebus-max-message-size", "1048576". The data folder, the
// clock and the listeners' addresses are New's to choose: flags that set
// them make a lapse that is not the one this package describes.
func WithFlags(flags ...string) Option {
	return func(o *options) { o.flags = append(o.flags, flags...) }
}

// WithLogLevel sets the level of lapse's log; the default is
// slog.LevelWarn.
func WithLogLevel(level slog.Level) Option {
	return func(o *options) { o.logLevel = level }
}

// New starts lapse on free ports of 127.0.0.1, with an in-memory store and
// a clock frozen at the current time, and stops it at the end of the test.
// It fails the test when lapse cannot start, for example when a
// configuration file does not load; the methods of the Server it returns
// fail the test on a mistake such as moving the clock back. lapse's log
// goes to the test's output (testing.TB.Output). LAPSE_* environment
// variables are ignored.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := start(tb, tb.Output(), opts)
	if err != nil {
		tb.Fatalf("lapsetest: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("lapsetest: stopping lapse: %v", err)
		}
	})
	return s
}

// Start is New outside a test, as httptest.NewServer is: the caller stops
// lapse with Close. lapse's log goes to stderr, and the Server's methods
// panic on a mistake such as moving the clock back.
func Start(opts ...Option) (*Server, error) {
	return start(nil, os.Stderr, opts)
}

// start starts lapse with its log on logTo; tb, if not nil, is the test
// that the Server's methods fail.
func start(tb testing.TB, logTo io.Writer, opts []Option) (*Server, error) {
	o := options{logLevel: slog.LevelWarn}
	for _, opt := range opts {
		opt(&o)
	}
	// gin chooses its mode when it loads, and in debug mode prints every
	// route of every server; the lapse binary runs in release mode.
	if gin.Mode() == gin.DebugMode && os.Getenv(gin.EnvGinMode) == "" {
		gin.SetMode(gin.TestMode)
	}
	m := server.NewMain()
	m.Stderr = io.Discard
	args := append([]string{
		"--data", ":memory:", "--clock", "frozen",
		"--amqp-addr", "127.0.0.1:0", "--amqps-addr", "127.0.0.1:0", "--cosmos-addr", "127.0.0.1:0",
		"--servicebus-admin-addr", "127.0.0.1:0", "--servicebus-websocket-addr", "127.0.0.1:0", "--rabbitmq-management-addr", "127.0.0.1:0",
		"--control-addr", "127.0.0.1:0",
	}, o.flags...)
	if err := m.ParseFlags(args, func(string) string { return "" }); err != nil {
		return nil, err
	}
	m.Logger = slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: o.logLevel}))
	if err := m.Run(context.Background()); err != nil {
		return nil, fmt.Errorf("starting lapse: %w", err)
	}
	return &Server{tb: tb, m: m}, nil
}

// Close stops lapse: its listeners, then its expiry runner and its store.
// New calls it when the test ends; calling it again does nothing.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.m.Close(ctx)
}

// fail fails the test, or panics outside one (Start).
func (s *Server) fail(format string, args ...any) {
	if s.tb == nil {
		panic("lapsetest: " + fmt.Sprintf(format, args...))
	}
	s.tb.Helper()
	s.tb.Fatalf("lapsetest: "+format, args...)
}

// addr returns host:port of the listener name (as GET /api/info names it).
func (s *Server) addr(name string) string {
	a := s.m.Addrs()[name]
	if a == nil {
		s.fail("no %s listener", name)
	}
	_, port, err := net.SplitHostPort(a.String())
	if err != nil {
		s.fail("%s listener address %q: %v", name, a, err)
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// ServiceBusConnectionString is the connection string of lapse's Service
// Bus namespace, the official emulator's with lapse's port:
// Endpoint=sb://127.0.0.1:PORT;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;
// (plain AMQP, as UseDevelopmentEmulator asks).
func (s *Server) ServiceBusConnectionString() string {
	return "Endpoint=sb://" + s.addr("amqp") +
		";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
}

// ServiceBusAdminURL is the base URL of the Service Bus administration API
// (the ATOM API of admin.Client and ServiceBusAdministrationClient) over
// plain HTTP: http://127.0.0.1:PORT. The Go admin.Client builds https URLs
// from a connection string; give it a transport that sends them here.
func (s *Server) ServiceBusAdminURL() string {
	return "http://" + s.addr("servicebusAdmin")
}

// RabbitMQURL is the AMQP 0-9-1 URL of lapse's RabbitMQ broker, with its
// default user: amqp://guest:guest@127.0.0.1:PORT/.
func (s *Server) RabbitMQURL() string {
	return "amqp://guest:guest@" + s.addr("amqp") + "/"
}

// RabbitMQManagementURL is the base URL of the RabbitMQ management HTTP
// API (user guest, password guest): http://127.0.0.1:PORT.
func (s *Server) RabbitMQManagementURL() string {
	return "http://" + s.addr("rabbitmqManagement")
}

// CosmosEndpoint is the Cosmos DB account endpoint over plain HTTP,
// http://127.0.0.1:PORT/, which azcosmos and the other SDKs take without
// a certificate to trust.
func (s *Server) CosmosEndpoint() string {
	return "http://" + s.addr("cosmos") + "/"
}

// CosmosKey is the Cosmos DB account key: the official emulator's
// well-known key, unless WithFlags gave --cosmos-key.
func (s *Server) CosmosKey() string { return s.m.CosmosKey() }

// ControlURL is the base URL of lapse's control API and dashboard,
// http://127.0.0.1:PORT (GET /api/entities, /api/events, the clock calls).
func (s *Server) ControlURL() string {
	return "http://" + s.addr("control")
}

// Now is the time on lapse's clock.
func (s *Server) Now() time.Time { return s.m.Clock.Now() }

// Advance moves lapse's clock forward by d and returns once everything due
// up to the new time is applied: expired messages are dead-lettered or
// gone, idle queues deleted, locks lost (as POST /api/clock/advance does).
// It fails the test when d is negative.
func (s *Server) Advance(d time.Duration) {
	if s.tb != nil {
		s.tb.Helper()
	}
	if _, err := s.m.Clock.Advance(d); err != nil {
		s.fail("advance %v: %v", d, err)
	}
	s.apply()
}

// Set moves lapse's clock to t and returns once everything due up to t is
// applied. The clock never goes back: an earlier t fails the test.
func (s *Server) Set(t time.Time) {
	if s.tb != nil {
		s.tb.Helper()
	}
	if _, err := s.m.Clock.Set(t); err != nil {
		s.fail("set the clock to %v: %v", t, err)
	}
	s.apply()
}

// apply applies what is due at the clock's time and waits until it is
// stored, as the control API's clock calls do (EM-1).
func (s *Server) apply() {
	if s.tb != nil {
		s.tb.Helper()
	}
	if _, err := s.m.Engine.ApplyDue(context.Background(), s.m.Clock.Now()); err != nil {
		s.fail("applying what fell due: %v", err)
	}
}

// Event is an entry of lapse's event log: an item or an entity that
// expired, was dead-lettered or deleted, or a lock that ran out, with the
// rule that decided it.
type Event struct {
	// ID numbers the events from 1, in the order they were applied.
	ID uint64
	// Time is when it was applied on lapse's clock, Due when it was due.
	Time, Due time.Time
	// Protocol is "servicebus", "rabbitmq" or "cosmos".
	Protocol string
	// Entity is the queue, subscription or container as lapse names it:
	// a RabbitMQ queue is its vhost and name, "/orders" on the default
	// vhost "/", "shop/orders" on vhost "shop"; a Cosmos container its
	// database and id, "shop/carts".
	Entity string
	// Item is the item's sequence number, 0 for an event of the entity;
	// ItemKey its key where it has one (a Cosmos item's partition key and
	// id, as ["ann"]cart).
	Item    uint64
	ItemKey string
	// Session is the session whose lock ran out, for such an event.
	Session string
	// Rule is the ID of the rule that decided it (SB-8, RB-3, CO-4...).
	Rule string
	// Action is what happened: expired, dead-lettered, deleted-idle,
	// lock-lost.
	Action string
	// Reason says why, in words.
	Reason string
}

// Events returns lapse's event log, oldest first.
func (s *Server) Events() []Event {
	evs := s.m.Engine.Events(core.EventQuery{})
	out := make([]Event, len(evs))
	for i, ev := range evs {
		out[i] = Event{ID: ev.ID, Time: ev.Time, Due: ev.Due, Protocol: ev.Protocol, Entity: ev.Entity,
			Item: ev.Item, ItemKey: ev.ItemKey, Session: ev.Session, Rule: ev.Rule, Action: string(ev.Action),
			Reason: ev.Reason}
	}
	return out
}

// Main is the running lapse itself, for what the methods above do not
// cover: its engine, its clock, its configuration.
func (s *Server) Main() *server.Main { return s.m }
