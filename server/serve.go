package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/dashboard"
	"github.com/lapse-emulator/lapse/httpserver"
	"github.com/lapse-emulator/lapse/rabbitmq"
	"github.com/lapse-emulator/lapse/servicebus"
)

// Main is `lapse serve`: it wires the clock, the store, the engine, the
// expiry runner and the listeners. The binary and the end-to-end tests run
// the same Main: ParseFlags, Run, then Close.
type Main struct {
	// Config is set by ParseFlags.
	Config Config
	// Stderr receives the log and flag errors; NewMain sets os.Stderr.
	Stderr io.Writer
	// Logger, if set before Run, is used instead of a text log on Stderr.
	Logger *slog.Logger
	// Wall is the wall clock lapse's Clock follows; NewMain sets time.Now.
	Wall func() time.Time
	// Version is the version lapse reports to clients and in GET /api/info;
	// NewMain sets "dev".
	Version string

	// Clock, Engine, Control and Rabbit are set by Run.
	Clock   *core.Clock
	Engine  *core.Engine
	Control *dashboard.Server
	Rabbit  *rabbitmq.Server
	SB      *servicebus.Server
	Cosmos  *cosmos.Server

	amqp       *amqpListener
	amqps      *amqpListener
	management *rabbitmq.Management
	sbAdmin    *servicebus.Admin
	// sbHTTPS serves the Service Bus WebSocket port and the HTTPS
	// requests of the AMQP ports (serviceBusHTTPS).
	sbHTTPS *httpserver.Server

	store  store
	runner *runner
	// sandboxes are the worlds beside the default one (sandbox.go).
	sandboxes *sandboxes
	// ports are the listeners Run bound, until each server takes its own.
	ports *ports

	// cert is the one TLS certificate of every TLS listener, certPEM its
	// PEM as clients download it to trust it.
	cert    *tls.Certificate
	certPEM []byte
}

// NewMain returns a Main with the defaults of the binary.
func NewMain() *Main {
	return &Main{Stderr: os.Stderr, Wall: time.Now, Version: "dev"}
}

// Run starts lapse: it binds the listeners, opens the data folder, loads
// it and applies what fell due while lapse was not running (RB-13), starts
// the expiry runner and serves on the listeners, then returns. When Run
// fails it undoes what it started.
func (m *Main) Run(ctx context.Context) (err error) {
	if m.Logger == nil {
		m.Logger = slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: m.Config.LogLevel}))
	}
	log := m.Logger
	defer func() {
		if err != nil {
			_ = m.Close(context.WithoutCancel(ctx))
		}
	}()

	if m.ports, err = listen(m.Config); err != nil {
		return err
	}
	m.Clock = core.NewClock(m.Wall)
	if m.Config.Clock == "frozen" {
		m.Clock.Freeze()
	}
	if m.store, err = openStore(m.Config.Data, m.Config.RepairJournal, log.With("store", "journal")); err != nil {
		return err
	}
	// The certificate, read or made (a key to generate, files to write),
	// is needed only by the first TLS listener: it is got meanwhile
	// (issue 25.9). Every return waits for it.
	certDone := make(chan error, 1)
	go func() {
		var err error
		m.cert, m.certPEM, err = m.certificate()
		certDone <- err
	}()
	waitCert := sync.OnceValue(func() error { return <-certDone })
	defer waitCert()
	m.runner = newRunner(m.Clock)
	reg, metrics := newMetrics()
	m.Engine = core.NewEngine(core.Config{Store: m.store, Wake: m.runner.Wake, ObserveLag: metrics.ObserveLag,
		OnPanic: func(p core.HookPanic) { logPanic(log, p) }})
	m.Clock.OnChange(m.runner.Wake)
	m.sandboxes = newSandboxes(m)
	registerSandboxMetrics(reg, m.sandboxes)
	m.Rabbit = rabbitmq.New(rabbitmq.Config{Engine: m.Engine, Now: m.Clock.Now,
		Logger: log.With("listener", "amqp"), Version: m.Version, Resolve: m.sandboxes.rabbitMQ,
		UserElsewhere: m.sandboxes.rabbitMQUser})
	m.Engine.Register(core.RabbitMQ, m.Rabbit.Hooks())
	m.SB = servicebus.New(servicebus.Config{Engine: m.Engine, Now: m.Clock.Now,
		Logger: log.With("listener", "amqp", "protocol", "servicebus"), Version: m.Version,
		MaxMessageSize: m.Config.ServiceBusMaxMessageSize, Resolve: m.sandboxes.serviceBus})
	m.Engine.Register(core.ServiceBus, m.SB.Hooks())
	if err := m.Engine.Recover(ctx, m.Clock.Now()); err != nil {
		return fmt.Errorf("data folder %q: %w", m.Config.Data, err)
	}
	m.runner.start(m.Engine)
	if err := m.Rabbit.Start(); err != nil {
		return err
	}
	if err := m.loadDefinitions(); err != nil {
		return err
	}
	if err := m.loadServiceBusConfig(); err != nil {
		return err
	}

	if err := waitCert(); err != nil {
		return fmt.Errorf("TLS certificate: %w", err)
	}
	m.sbAdmin = servicebus.NewAdmin(m.SB, m.Config.ServiceBusAdminAddr, log.With("listener", "servicebusAdmin"))
	// Admin clients of SDKs without emulator support build https:// URLs;
	// it opens before the AMQPS port, which hands it HTTPS requests.
	m.sbAdmin.ServeTLS(m.tlsConfig())
	m.sbAdmin.SetBodyTimeout(m.Config.HTTPBodyTimeout)
	if err := m.ports.serve(m.sbAdmin, portServiceBusAdmin); err != nil {
		return err
	}
	log.Info("listening", "listener", "servicebusAdmin", "addr", m.sbAdmin.Addr().String())
	// It too opens before the AMQP ports, which hand it HTTPS requests.
	m.sbHTTPS = httpserver.New("Service Bus WebSocket port", m.Config.ServiceBusWebSocketAddr, m.serviceBusHTTPS(), log.With("listener", "servicebusWebSocket"))
	m.sbHTTPS.ServeTLS(m.tlsConfig())
	m.sbHTTPS.SetBodyTimeout(m.Config.HTTPBodyTimeout)
	if err := m.ports.serve(m.sbHTTPS, portServiceBusWebSocket); err != nil {
		return err
	}
	log.Info("listening", "listener", "servicebusWebSocket", "addr", m.sbHTTPS.Addr().String())
	m.amqp = newAMQPListener(m.ports.take(portAMQP), m.tlsConfig(), false, m.handoffHTTPS, m.Rabbit, m.SB, log.With("listener", "amqp"))
	log.Info("listening", "listener", "amqp", "addr", m.amqp.Addr().String())
	m.amqps = newAMQPListener(m.ports.take(portAMQPS), m.tlsConfig(), true, m.handoffHTTPS, m.Rabbit, m.SB, log.With("listener", "amqps"))
	log.Info("listening", "listener", "amqps", "addr", m.amqps.Addr().String())
	m.management = rabbitmq.NewManagement(rabbitmq.ManagementConfig{Addr: m.Config.RabbitMQManagementAddr,
		Server: m.Rabbit, Logger: log.With("listener", "rabbitmqManagement"), AMQPAddr: m.amqp.Addr,
		Resolve: m.sandboxes.rabbitMQ})
	m.management.SetBodyTimeout(m.Config.HTTPBodyTimeout)
	if err := m.ports.serve(m.management, portRabbitMQManagement); err != nil {
		return err
	}
	log.Info("listening", "listener", "rabbitmqManagement", "addr", m.management.Addr().String())
	if err := m.openCosmos(ctx); err != nil {
		return err
	}
	log.Info("listening", "listener", "cosmos", "addr", m.Cosmos.Addr().String())
	// The durable sandboxes come back before the control port opens, as
	// the default world's entities do.
	m.sandboxes.restore(ctx)
	// The control port is served last (issue 16.6): /healthz answers ok
	// only once every other listener accepts, and what GET /api/info reads
	// is set before its first request. Bound since the start, it holds a
	// request that comes earlier until then.
	m.Control = dashboard.NewServer(dashboard.Config{
		Addr:    m.Config.ControlAddr,
		Engine:  m.Engine,
		Clock:   m.Clock,
		Logger:  log.With("listener", "control"),
		Info:    m.info,
		OnReset: m.declareConfigured,
		Queries: map[string]dashboard.QueryFunc{core.Cosmos: m.Cosmos.Query},
		// One registry for the engine's metrics and the server's.
		Registry:       reg,
		Connections:    m.connections,
		CertificatePEM: m.certPEM,
		Sandboxes:      m.sandboxes,
	})
	m.Control.SetBodyTimeout(m.Config.HTTPBodyTimeout)
	if err := m.ports.serve(m.Control, portControl); err != nil {
		return err
	}
	log.Info("listening", "listener", "control", "addr", m.Control.Addr().String())
	log.Info("lapse started", "version", m.Version, "data", m.Config.Data, "clock", m.Clock.Mode())
	return nil
}

// handoffHTTPS serves an HTTPS request that came to an AMQP port as the
// Service Bus WebSocket port serves it: the service serves AMQP, AMQP over
// WebSockets and the administration API on one host name.
func (m *Main) handoffHTTPS(c net.Conn) { m.sbHTTPS.Handoff(c) }

// serviceBusHTTPS is what the service serves over HTTPS on its port 443:
// AMQP over WebSockets at servicebus.WebSocketPath (the SDKs' WebSocket
// transport, issue 31) and the administration API everywhere else.
func (m *Main) serviceBusHTTPS() http.Handler {
	ws, admin := m.SB.WebSocketHandler(), m.sbAdmin.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == servicebus.WebSocketPath {
			ws.ServeHTTP(w, r)
			return
		}
		admin.ServeHTTP(w, r)
	})
}

// tlsConfig is the TLS configuration of the AMQPS port and the Service
// Bus administration API: the one certificate.
func (m *Main) tlsConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{*m.cert}, MinVersion: tls.VersionTLS12}
}

// Close stops the listeners, then the expiry runner, then closes the store,
// which finishes its in-flight commits. It is safe to call twice.
func (m *Main) Close(ctx context.Context) error {
	var errs []error
	if m.Cosmos != nil {
		errs = append(errs, m.Cosmos.Close(ctx))
	}
	if m.sandboxes != nil {
		m.sandboxes.Close(ctx)
	}
	if m.sbAdmin != nil {
		errs = append(errs, m.sbAdmin.Close(ctx))
	}
	if m.sbHTTPS != nil {
		errs = append(errs, m.sbHTTPS.Close(ctx))
	}
	if m.management != nil {
		errs = append(errs, m.management.Close(ctx))
	}
	if m.amqps != nil {
		errs = append(errs, m.amqps.Close(ctx))
	}
	if m.amqp != nil {
		errs = append(errs, m.amqp.Close(ctx))
	}
	if m.Control != nil {
		errs = append(errs, m.Control.Close(ctx))
	}
	if m.runner != nil {
		m.runner.stop()
	}
	// What the hooks queued still change the engine (Service Bus deletes
	// an idle queue's dead-letter queues in its Deleted hook): they run
	// before the store closes, so that a restart finds their changes.
	if m.Engine != nil {
		errs = append(errs, m.Engine.WaitHooks(ctx))
	}
	if m.store != nil {
		errs = append(errs, m.store.Close(ctx))
	}
	// The listeners of a Run that failed before their servers took them.
	m.ports.close()
	return errors.Join(errs...)
}

// info is GET /api/info: every listener with its bound address.
func (m *Main) info() dashboard.Info {
	ls := map[string]dashboard.Listener{}
	if a := m.Control.Addr(); a != nil {
		ls["control"] = dashboard.Listener{Addr: a.String(), Served: true}
	}
	if m.amqp != nil {
		ls["amqp"] = dashboard.Listener{Addr: m.amqp.Addr().String(), Served: true}
	}
	if m.amqps != nil {
		ls["amqps"] = dashboard.Listener{Addr: m.amqps.Addr().String(), Served: true}
	}
	if m.management != nil {
		ls["rabbitmqManagement"] = dashboard.Listener{Addr: m.management.Addr().String(), Served: true}
	}
	if m.sbAdmin != nil {
		ls["servicebusAdmin"] = dashboard.Listener{Addr: m.sbAdmin.Addr().String(), Served: true}
	}
	if m.sbHTTPS != nil {
		ls["servicebusWebSocket"] = dashboard.Listener{Addr: m.sbHTTPS.Addr().String(), Served: true}
	}
	if m.Cosmos != nil && m.Cosmos.Addr() != nil {
		ls["cosmos"] = dashboard.Listener{Addr: m.Cosmos.Addr().String(), Served: true}
	}
	return dashboard.Info{Version: m.Version, Listeners: ls}
}

// declareConfigured declares again what every broker has and the entities
// of the configuration files after POST /api/reset dropped everything.
func (m *Main) declareConfigured(ctx context.Context) error {
	if err := m.Rabbit.Reset(); err != nil {
		return err
	}
	m.SB.Reset()
	if err := m.loadServiceBusConfig(); err != nil {
		return err
	}
	if err := m.loadCosmosConfig(ctx); err != nil {
		return err
	}
	return m.loadDefinitions()
}

// loadServiceBusConfig declares what --servicebus-config holds, if given:
// the official Service Bus emulator's Config.json, unchanged.
func (m *Main) loadServiceBusConfig() error {
	if m.Config.ServiceBusConfig == "" {
		return nil
	}
	return loadConfigFile("servicebus-config", m.Config.ServiceBusConfig, true, m.SB.LoadConfig)
}

// loadDefinitions declares what --rabbitmq-definitions holds, if given:
// RabbitMQ's definitions.json, merged into what the data folder kept.
func (m *Main) loadDefinitions() error {
	if m.Config.RabbitMQDefinitions == "" {
		return nil
	}
	return loadConfigFile("rabbitmq-definitions", m.Config.RabbitMQDefinitions, false, func(b []byte) error {
		return m.Rabbit.LoadDefinitions(bytes.NewReader(b))
	})
}

// logPanic logs a panic the engine recovered (issue 16.1), once, with its
// stack: a hook's, after which every protocol goes on serving, or one of
// the engine's own code, which goes on to the caller with the engine's
// lock released.
func logPanic(log *slog.Logger, p core.HookPanic) {
	msg := "panic in the " + p.Hook + " hook, contained: lapse goes on"
	if p.Hook == "Engine" {
		msg = "panic in the engine, its lock released"
	}
	args := []any{"panic", fmt.Sprint(p.Value), "stack", string(p.Stack)}
	if p.Entity.Name != "" {
		args = append(args, "protocol", p.Entity.Protocol, "entity", p.Entity.Name)
	}
	if p.Item != 0 {
		args = append(args, "item", p.Item)
	}
	log.Error(msg, args...)
}
