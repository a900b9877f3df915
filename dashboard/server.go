// Package dashboard serves lapse's control API on the control port: the
// clock (EM-1), the event log (EM-2), every entity with its items and
// computed expiries, reset, the addresses of every listener, and /healthz.
// The web UI (pages.go) is served beside it, and /metrics.
package dashboard

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/httpserver"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is what a Server needs.
type Config struct {
	// Addr is the address to listen on (":0" picks a free port).
	Addr string
	// Engine and Clock are lapse's engine and its one clock.
	Engine *core.Engine
	Clock  *core.Clock
	// Logger receives one line per request (debug level, errors above) and
	// the text of internal errors; nil discards.
	Logger *slog.Logger
	// Info returns what GET /api/info shows: every listener and its address.
	// It is called per request, so it may read addresses bound after Open.
	Info func() Info
	// OnReset runs after POST /api/reset dropped everything, to bring back
	// what the configuration files declare. nil does nothing.
	OnReset func(ctx context.Context) error
	// Registry is the Prometheus registry GET /metrics serves; NewServer
	// registers lapse's collectors in it. nil makes a private one.
	Registry *prometheus.Registry
	// Connections returns the open client connections per protocol
	// ("servicebus", "rabbitmq", "cosmos") for the metrics; nil for none.
	Connections func() map[string]int
	// Queries runs a protocol's query language against one of its
	// entities, for the data explorer (Cosmos DB SQL over a container),
	// keyed by protocol.
	Queries map[string]QueryFunc
	// BasePath is the path the pages are served under: "" for the default
	// world's, /sandboxes/{id} for a sandbox's, whose control API the
	// default world's serves there too.
	BasePath string
	// Sandboxes, if set, are served at /api/sandboxes (sandboxes.go); only
	// the default world's control API has them.
	Sandboxes Sandboxes
	// CertificatePEM is lapse's TLS certificate, served at GET /cert.pem
	// for clients to trust; nil serves a 404.
	CertificatePEM []byte
}

// QueryFunc runs query against the entity named name and returns at most
// max rows as JSON. A query the protocol refuses is a core.EINVALID error
// whose text says why.
type QueryFunc func(ctx context.Context, name, query string, max int) ([]json.RawMessage, error)

// Info is the body of GET /api/info.
type Info struct {
	// Version is lapse's version string.
	Version string `json:"version"`
	// Listeners are keyed by name: "control", "amqp", "amqps", "cosmos",
	// "servicebusAdmin", "servicebusWebSocket", "rabbitmqManagement".
	Listeners map[string]Listener `json:"listeners"`
}

// Listener is one port of lapse.
type Listener struct {
	// Addr is the bound address when Served, else the configured one.
	Addr string `json:"addr"`
	// Served is false for a listener whose front-end does not exist yet.
	Served bool `json:"served"`
}

// Server is the control API's HTTP server.
type Server struct {
	*httpserver.Server
	cfg     Config
	log     *slog.Logger
	handler http.Handler
	// quit ends the streams of server-sent events when the server closes.
	quit     chan struct{}
	quitOnce sync.Once
}

// NewServer returns a Server for cfg; Open starts it (httpserver.Server:
// Open, Addr and Close).
func NewServer(cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, quit: make(chan struct{})}
	s.handler = s.routes()
	s.Server = httpserver.New("control API", cfg.Addr, s.handler, log)
	return s
}

// Close ends the pages' event streams, then closes the server as
// httpserver.Server.Close does. It is safe to call twice.
func (s *Server) Close(ctx context.Context) error {
	s.quitOnce.Do(func() { close(s.quit) })
	return s.Server.Close(ctx)
}

// Handler returns the control API as an http.Handler, for tests and for
// mounting elsewhere.
func (s *Server) Handler() http.Handler { return s.handler }

// routes builds the gin engine: our recovery and logging, then the API.
func (s *Server) routes() http.Handler {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	// No redirects to the path with or without a trailing slash: noRoute
	// answers JSON (issue 15.6).
	r.RedirectTrailingSlash = false
	r.Use(httpserver.Recovery(s.log, "control API", s.writeError), s.logRequests())
	r.NoRoute(noRoute(r, s.writeError))
	r.NoMethod(func(c *gin.Context) {
		s.writeError(c, errMethodNotAllowed)
	})

	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/cert.pem", s.getCertificate)
	api := r.Group("/api")
	api.GET("/info", s.getInfo)
	api.GET("/clock", s.getClock)
	api.POST("/clock/advance", s.advanceClock)
	api.POST("/clock/freeze", s.freezeClock)
	api.POST("/clock/resume", s.resumeClock)
	api.POST("/clock/set", s.setClock)
	api.GET("/events", s.getEvents)
	api.GET("/entities", s.getEntities)
	// gin cannot put a catch-all in the middle of a path, so the entity
	// name and the trailing /items come together and getItems splits them.
	api.GET("/entities/:protocol/*rest", s.getItems)
	api.POST("/reset", s.reset)
	s.sandboxRoutes(api)
	s.metricsRoutes(r)
	pprofRoutes(r)
	s.itemRoutes(api)
	s.pageRoutes(r)
	s.sandboxPageRoutes(r)
	return r
}

// getCertificate serves the certificate of lapse's TLS listeners.
func (s *Server) getCertificate(c *gin.Context) {
	if len(s.cfg.CertificatePEM) == 0 {
		s.writeError(c, core.Errorf(core.ENOTFOUND, "lapse serves no TLS certificate"))
		return
	}
	c.Data(http.StatusOK, "application/x-pem-file", s.cfg.CertificatePEM)
}

func (s *Server) getInfo(c *gin.Context) {
	var in Info
	if s.cfg.Info != nil {
		in = s.cfg.Info()
	}
	if in.Listeners == nil {
		in.Listeners = map[string]Listener{}
	}
	c.JSON(http.StatusOK, in)
}

// reset drops every entity and item, waits until the store has the reset,
// then lets the configuration bring back its entities.
func (s *Server) reset(c *gin.Context) {
	ctx := c.Request.Context()
	if err := s.cfg.Engine.Reset(s.cfg.Clock.Now()).Wait(ctx); err != nil {
		s.writeError(c, err)
		return
	}
	if s.cfg.OnReset != nil {
		if err := s.cfg.OnReset(ctx); err != nil {
			s.writeError(c, err)
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": "reset"})
}
