package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// Sandboxes are the worlds of their own that share lapse's ports (issue
// 29, docs/architecture.md "Sandboxes"): the control API creates, lists
// and deletes them, and serves each one's own control API under
// /api/sandboxes/{id}/. The composition root implements it.
type Sandboxes interface {
	// Create makes a sandbox as req asks; host is the host name the
	// caller reached lapse by, which the connection settings name.
	Create(ctx context.Context, req SandboxRequest, host string) (Sandbox, error)
	// List returns every sandbox, oldest first.
	List(host string) []Sandbox
	// Get returns the sandbox id and its control API, and counts as a use
	// of it (its idle TTL starts again); ok is false when there is none.
	Get(id, host string) (sb Sandbox, control http.Handler, ok bool)
	// Delete deletes the sandbox id with everything in it; ENOTFOUND when
	// there is none.
	Delete(ctx context.Context, id string) error
}

// SandboxRequest is the body of POST /api/sandboxes; every field may be
// left out.
type SandboxRequest struct {
	// IdleTTLSeconds is how long, on the wall clock, the sandbox may go
	// unused before it is deleted (EM-5); 0 is the default.
	IdleTTLSeconds int64 `json:"idleTtlSeconds,omitempty"`
	// Clock is the sandbox clock's mode at creation: "frozen" (the
	// default) or "running".
	Clock string `json:"clock,omitempty"`
	// Time, if set, is the sandbox clock's time at creation (RFC 3339);
	// else the wall clock's.
	Time string `json:"time,omitempty"`
	// Durable keeps the sandbox in lapse's data folder, so that it comes
	// back after a restart with its keys, clock and entities; by default
	// it lives in memory.
	Durable bool `json:"durable,omitempty"`
	// ServiceBusConfig is a Service Bus emulator's Config.json,
	// RabbitMQDefinitions a RabbitMQ definitions.json and CosmosConfig a
	// --cosmos-config document, declared in the sandbox as at start-up.
	ServiceBusConfig    json.RawMessage `json:"servicebusConfig,omitempty"`
	RabbitMQDefinitions json.RawMessage `json:"rabbitmqDefinitions,omitempty"`
	CosmosConfig        json.RawMessage `json:"cosmosConfig,omitempty"`
}

// Sandbox is a sandbox as the control API shows it: its id, its idle TTL,
// its clock, and every connection setting a client needs to reach it.
type Sandbox struct {
	ID             string    `json:"id"`
	Created        time.Time `json:"created"`
	LastUsed       time.Time `json:"lastUsed"`
	IdleTTLSeconds int64     `json:"idleTtlSeconds"`
	Durable        bool      `json:"durable"`
	// Clock is set by the control API from ClockOf.
	Clock   ClockState  `json:"clock"`
	ClockOf *core.Clock `json:"-"`
	// Control is the base URL of the sandbox's own control API.
	Control    string            `json:"control"`
	ServiceBus ServiceBusSandbox `json:"servicebus"`
	RabbitMQ   RabbitMQSandbox   `json:"rabbitmq"`
	Cosmos     CosmosSandbox     `json:"cosmos"`
}

// ServiceBusSandbox is how a Service Bus client reaches a sandbox: its own
// shared access key name and key, for the AMQP client and the
// administration client alike.
type ServiceBusSandbox struct {
	ConnectionString string `json:"connectionString"`
	KeyName          string `json:"keyName"`
	Key              string `json:"key"`
}

// RabbitMQSandbox is how a RabbitMQ client reaches a sandbox: its own
// virtual host.
type RabbitMQSandbox struct {
	URL           string `json:"url"`
	Vhost         string `json:"vhost"`
	ManagementURL string `json:"managementUrl"`
}

// CosmosSandbox is how a Cosmos DB client reaches a sandbox: its own
// account key on the shared endpoint, served in plain HTTP (Endpoint) and
// HTTPS (TLSEndpoint, with lapse's certificate) on one port.
type CosmosSandbox struct {
	Endpoint         string `json:"endpoint"`
	TLSEndpoint      string `json:"tlsEndpoint"`
	Key              string `json:"key"`
	ConnectionString string `json:"connectionString"`
}

// sandboxRoutes serves /api/sandboxes when the configuration has
// sandboxes.
func (s *Server) sandboxRoutes(api *gin.RouterGroup) {
	api.POST("/sandboxes", s.createSandbox)
	api.GET("/sandboxes", s.listSandboxes)
	api.GET("/sandboxes/:id", s.getSandbox)
	api.DELETE("/sandboxes/:id", s.deleteSandbox)
	api.Any("/sandboxes/:id/*rest", s.inSandbox)
}

// sandboxPageRoutes serves each sandbox's pages, and its control API, under
// /sandboxes/{id}/, where the world picker leads.
func (s *Server) sandboxPageRoutes(r *gin.Engine) {
	r.GET("/sandboxes/:id", func(c *gin.Context) {
		c.Redirect(http.StatusFound, "/sandboxes/"+url.PathEscape(c.Param("id"))+"/")
	})
	r.Any("/sandboxes/:id/*rest", func(c *gin.Context) {
		if _, h, ok := s.sandbox(c); ok {
			r := c.Request.Clone(c.Request.Context())
			r.URL.Path, r.URL.RawPath = c.Param("rest"), ""
			h.ServeHTTP(c.Writer, r)
		}
	})
}

// maxSandboxRequest bounds the body of POST /api/sandboxes: its three
// configuration documents.
const maxSandboxRequest = 16 << 20

func (s *Server) createSandbox(c *gin.Context) {
	if s.cfg.Sandboxes == nil {
		s.writeError(c, core.Errorf(core.ENOTFOUND, "this lapse serves no sandboxes"))
		return
	}
	var req SandboxRequest
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, maxSandboxRequest+1))
	if err != nil {
		s.writeError(c, core.Errorf(core.EINVALID, "reading the request: %v", err))
		return
	}
	if len(body) > maxSandboxRequest {
		s.writeError(c, core.Errorf(core.EINVALID, "the request is larger than %d bytes", maxSandboxRequest))
		return
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			s.writeError(c, core.Errorf(core.EINVALID, "the body is not a sandbox request: %v", err))
			return
		}
	}
	sb, err := s.cfg.Sandboxes.Create(c.Request.Context(), req, requestHost(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusCreated, withClock(sb))
}

func (s *Server) listSandboxes(c *gin.Context) {
	out := []Sandbox{}
	if s.cfg.Sandboxes != nil {
		for _, sb := range s.cfg.Sandboxes.List(requestHost(c)) {
			out = append(out, withClock(sb))
		}
	}
	c.JSON(http.StatusOK, out)
}

// sandbox returns the sandbox of the path's id, or writes a 404.
func (s *Server) sandbox(c *gin.Context) (Sandbox, http.Handler, bool) {
	if s.cfg.Sandboxes != nil {
		if sb, h, ok := s.cfg.Sandboxes.Get(c.Param("id"), requestHost(c)); ok {
			return sb, h, true
		}
	}
	s.writeError(c, core.Errorf(core.ENOTFOUND, "sandbox %q not found: it was deleted, or went unused past its idle TTL", c.Param("id")))
	return Sandbox{}, nil, false
}

func (s *Server) getSandbox(c *gin.Context) {
	if sb, _, ok := s.sandbox(c); ok {
		c.JSON(http.StatusOK, withClock(sb))
	}
}

func (s *Server) deleteSandbox(c *gin.Context) {
	if s.cfg.Sandboxes == nil {
		s.writeError(c, core.Errorf(core.ENOTFOUND, "sandbox %q not found", c.Param("id")))
		return
	}
	if err := s.cfg.Sandboxes.Delete(c.Request.Context(), c.Param("id")); err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// inSandbox serves /api/sandboxes/{id}/... with the sandbox's own control
// API, as /... of it: /api/sandboxes/{id}/api/clock/advance is the
// sandbox's /api/clock/advance. The /api of the sandbox's paths may be
// left out: /api/sandboxes/{id}/clock/advance is the same call.
func (s *Server) inSandbox(c *gin.Context) {
	_, h, ok := s.sandbox(c)
	if !ok {
		return
	}
	rest := c.Param("rest")
	if !strings.HasPrefix(rest, "/api/") && rest != "/api" && rest != "/healthz" && rest != "/metrics" {
		rest = "/api" + rest
	}
	r := c.Request.Clone(c.Request.Context())
	r.URL.Path, r.URL.RawPath = rest, ""
	h.ServeHTTP(c.Writer, r)
}

// withClock fills the sandbox's clock state.
func withClock(sb Sandbox) Sandbox {
	if sb.ClockOf != nil {
		sb.Clock = ClockState{Now: sb.ClockOf.Now().UTC().Format(time.RFC3339Nano), Mode: sb.ClockOf.Mode()}
	}
	return sb
}

// requestHost is the host name the caller reached the control API by,
// without its port.
func requestHost(c *gin.Context) string {
	host := c.Request.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" {
		host = "localhost"
	}
	return host
}
