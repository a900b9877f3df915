package rabbitmq

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/httpserver"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// This file is the management HTTP API's server: its lifecycle, its routes
// and the authentication every route goes through. The handlers live in
// the other management*.go files; the replies are RabbitMQ 3.10.8's
// (rabbitmq_management's rabbit_mgmt_wm_* resources), as observed on a
// running 3.10.8.
//
// lapse has no statistics lag: RabbitMQ's API shows a queue's counts (and
// the policy applied to it) only after its next statistics emission, up to
// 5 s later; lapse reads them from the engine on every request, so they
// are exact at once.
//
// Where lapse differs, knowingly:
//   - there are no rates (every *_details.rate is 0, message_stats is
//     empty, rates_mode is "none") and none of Erlang's own figures
//     (garbage_collection, reductions);
//   - a binding's properties_key hashes its arguments differently (see
//     management_bindings.go); the keys have RabbitMQ's form;
//   - where RabbitMQ answers 500 because its handler crashes (an unknown
//     ackmode, an unknown destination type in a bindings URL), lapse
//     answers 400 or 404;
//   - users, their permissions and vhost descriptions live in memory only.

// ManagementConfig configures the management API.
type ManagementConfig struct {
	// Addr is the address to listen on (":0" picks a free port).
	Addr string
	// Server is the RabbitMQ front-end the API manages.
	Server *Server
	// Logger receives one line per request (debug level, errors above) and
	// the text of internal errors; nil discards.
	Logger *slog.Logger
	// AMQPAddr, optional, returns the address of the AMQP listener, for the
	// listeners of GET /api/overview and the port and protocol health
	// checks; nil leaves it out.
	AMQPAddr func() net.Addr
	// Resolve, set on the default world's API only, returns the server of
	// another world that has vhost vh, or nil. A request whose path names
	// a vhost Server does not have is served as that server's own API
	// would serve it, users included; lists without a vhost in the path
	// show Server's objects only (see "Sandboxes" in docs/architecture.md).
	Resolve func(vh string) *Server
}

// Management is the RabbitMQ management HTTP API (httpserver.Server:
// Open, Addr and Close).
type Management struct {
	*httpserver.Server
	cfg     ManagementConfig
	s       *Server
	log     *slog.Logger
	handler http.Handler

	// worlds are the APIs of other worlds' servers (Config.Resolve), made
	// on their first request, without a listener of their own.
	worldsMu lockorder.Mutex
	worlds   map[*Server]*Management
}

// NewManagement returns the management API for cfg; Open starts it.
func NewManagement(cfg ManagementConfig) *Management {
	m := newManagement(cfg)
	m.Server = httpserver.New("RabbitMQ management API", cfg.Addr, m.handler, m.log)
	return m
}

// newManagement is NewManagement without its listener.
func newManagement(cfg ManagementConfig) *Management {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Management{cfg: cfg, s: cfg.Server, log: log}
	m.handler = trimTrailingSlash(m.toWorld(m.routes()))
	return m
}

// Forget drops what the API keeps of server s, another world's: the
// world's server is deleted. A later request for one of its vhosts makes
// it anew if Resolve still returns s.
func (m *Management) Forget(s *Server) {
	m.worldsMu.Lock()
	delete(m.worlds, s)
	m.worldsMu.Unlock()
}

// toWorld hands a request whose path names a vhost of another world to
// that world's API, and the others to next.
func (m *Management) toWorld(next http.Handler) http.Handler {
	if m.cfg.Resolve == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := m.worldFor(r.URL.EscapedPath()); o != nil {
			o.handler.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// worldFor returns the API of the world whose vhost the escaped path
// names, or nil when that is m's own (or no world's).
func (m *Management) worldFor(path string) *Management {
	vh, ok := vhostOfPath(path)
	if !ok || m.s.lookupVhost(vh) != nil {
		return nil
	}
	s := m.cfg.Resolve(vh)
	if s == nil || s == m.s {
		return nil
	}
	m.worldsMu.Lock()
	defer m.worldsMu.Unlock()
	o := m.worlds[s]
	if o == nil {
		o = newManagement(ManagementConfig{Server: s, Logger: m.log, AMQPAddr: m.cfg.AMQPAddr})
		if m.worlds == nil {
			m.worlds = map[*Server]*Management{}
		}
		m.worlds[s] = o
	}
	return o
}

// vhostScoped are the first segments, after /api/, of the routes whose
// second segment is a vhost.
var vhostScoped = map[string]bool{
	"queues": true, "exchanges": true, "bindings": true, "policies": true,
	"operator-policies": true, "definitions": true, "vhosts": true,
	"permissions": true, "consumers": true, "aliveness-test": true,
}

// vhostOfPath returns the vhost an escaped API path names, if it names one.
func vhostOfPath(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/api/")
	if !ok {
		return "", false
	}
	first, rest, ok := strings.Cut(rest, "/")
	if !ok || !vhostScoped[first] {
		return "", false
	}
	seg, _, _ := strings.Cut(rest, "/")
	if seg == "" {
		return "", false
	}
	return unescapeSegment(seg), true
}

// Handler returns the API as an http.Handler, for tests and for mounting
// elsewhere.
func (m *Management) Handler() http.Handler { return m.handler }

// Who may call a route (rabbit_mgmt_util:is_authorized*). Every caller
// must log in as a user with one of the management tags.
type authKind uint8

const (
	authAny      authKind = iota // any management user
	authVhost                    // an administrator, or a user with permissions on the path's vhost
	authAdmin                    // an administrator
	authPolicies                 // an administrator, or a policymaker with permissions on the path's vhost
)

// routes builds the gin engine: our recovery and logging, then the API.
func (m *Management) routes() http.Handler {
	r := gin.New()
	// Vhosts are in paths URL-encoded ("/" is %2F): match on the escaped
	// path and decode each segment ourselves, as cowboy does (no '+').
	r.UseEscapedPath = true
	r.UnescapePathValues = false
	r.HandleMethodNotAllowed = true
	// A trailing slash is trimmed before routing (trimTrailingSlash), never
	// answered with a redirect.
	r.RedirectTrailingSlash = false
	r.Use(httpserver.Recovery(m.log, "RabbitMQ management API", m.writeError), m.logRequests())
	r.NoRoute(func(c *gin.Context) { m.writeError(c, errObjectNotFound) })
	r.NoMethod(func(c *gin.Context) { m.writeError(c, errMethodNotAllowed) })

	api := r.Group("/api")
	h := func(method, path string, kind authKind, fn gin.HandlerFunc) {
		if method != http.MethodGet {
			fn = m.durable(fn)
		}
		api.Handle(method, path, m.authenticate(kind), fn)
	}
	get, put, post, del := http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete

	h(get, "/overview", authAny, m.getOverview)
	h(get, "/whoami", authAny, m.getWhoami)
	h(get, "/cluster-name", authAny, m.getClusterName)

	h(get, "/queues", authVhost, m.listQueues)
	h(get, "/queues/:vhost", authVhost, m.listQueues)
	h(get, "/queues/:vhost/:name", authVhost, m.getQueue)
	h(put, "/queues/:vhost/:name", authVhost, m.putQueue)
	h(del, "/queues/:vhost/:name", authVhost, m.deleteQueue)
	h(del, "/queues/:vhost/:name/contents", authVhost, m.purgeQueue)
	h(post, "/queues/:vhost/:name/get", authVhost, m.getMessages)
	h(get, "/queues/:vhost/:name/bindings", authVhost, m.listQueueBindings)

	h(get, "/exchanges", authVhost, m.listExchanges)
	h(get, "/exchanges/:vhost", authVhost, m.listExchanges)
	h(get, "/exchanges/:vhost/:name", authVhost, m.getExchange)
	h(put, "/exchanges/:vhost/:name", authVhost, m.putExchange)
	h(del, "/exchanges/:vhost/:name", authVhost, m.deleteExchange)
	h(post, "/exchanges/:vhost/:name/publish", authVhost, m.publishMessage)
	h(get, "/exchanges/:vhost/:name/bindings/source", authVhost, m.listExchangeBindings(true))
	h(get, "/exchanges/:vhost/:name/bindings/destination", authVhost, m.listExchangeBindings(false))

	h(get, "/bindings", authVhost, m.listBindings)
	h(get, "/bindings/:vhost", authVhost, m.listBindings)
	h(get, "/bindings/:vhost/e/:source/:dtype/:dest", authVhost, m.listBindingsBetween)
	h(post, "/bindings/:vhost/e/:source/:dtype/:dest", authVhost, m.postBinding)
	h(get, "/bindings/:vhost/e/:source/:dtype/:dest/:props", authVhost, m.getBinding)
	h(del, "/bindings/:vhost/e/:source/:dtype/:dest/:props", authVhost, m.deleteBinding)

	for _, op := range []bool{false, true} {
		base := "/policies"
		single := authPolicies
		if op {
			base, single = "/operator-policies", authAdmin
		}
		h(get, base, authVhost, m.listPolicies(op))
		h(get, base+"/:vhost", authVhost, m.listPolicies(op))
		h(get, base+"/:vhost/:name", single, m.getPolicy(op))
		h(put, base+"/:vhost/:name", single, m.putPolicy(op))
		h(del, base+"/:vhost/:name", single, m.deletePolicy(op))
	}

	h(get, "/definitions", authAdmin, m.getDefinitions)
	h(get, "/definitions/:vhost", authAdmin, m.getDefinitions)
	h(post, "/definitions", authAdmin, m.postDefinitions)
	h(post, "/definitions/:vhost", authAdmin, m.postDefinitions)

	h(get, "/vhosts", authAny, m.listVhosts)
	h(get, "/vhosts/:vhost", authVhost, m.getVhost)
	h(put, "/vhosts/:vhost", authAdmin, m.putVhost)
	h(del, "/vhosts/:vhost", authAdmin, m.deleteVhost)
	h(get, "/vhosts/:vhost/permissions", authAdmin, m.listPermissions)
	h(get, "/vhosts/:vhost/connections", authVhost, m.listConnections)
	h(get, "/vhosts/:vhost/channels", authVhost, m.listChannels)

	h(get, "/users", authAdmin, m.listUsers)
	h(get, "/users/:user", authAdmin, m.getUser)
	h(put, "/users/:user", authAdmin, m.putUser)
	h(del, "/users/:user", authAdmin, m.deleteUser)
	h(get, "/users/:user/permissions", authAdmin, m.listPermissions)

	h(get, "/permissions", authAdmin, m.listPermissions)
	h(get, "/permissions/:vhost/:user", authAdmin, m.getPermission)
	h(put, "/permissions/:vhost/:user", authAdmin, m.putPermission)
	h(del, "/permissions/:vhost/:user", authAdmin, m.deletePermission)

	h(get, "/connections", authAny, m.listConnections)
	h(get, "/connections/:conn", authAny, m.getConnection)
	h(del, "/connections/:conn", authAny, m.deleteConnection)
	h(get, "/connections/:conn/channels", authAny, m.listConnectionChannels)
	h(get, "/channels", authAny, m.listChannels)
	h(get, "/consumers", authAny, m.listConsumers)
	h(get, "/consumers/:vhost", authVhost, m.listConsumers)

	h(get, "/aliveness-test/:vhost", authVhost, m.alivenessTest)
	h(get, "/health/checks/alarms", authAny, m.healthOK)
	h(get, "/health/checks/local-alarms", authAny, m.healthOK)
	h(get, "/health/checks/virtual-hosts", authAny, m.healthOK)
	h(get, "/health/checks/port-listener/:port", authAny, m.healthPort)
	h(get, "/health/checks/protocol-listener/:proto", authAny, m.healthProtocol)
	return r
}

// trimTrailingSlash serves a path with one trailing slash as the path
// without it, as RabbitMQ's router (cowboy) does: GET /api/queues/ is GET
// /api/queues, not a redirect.
func trimTrailingSlash(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The escaped path decides: "/api/queues/%2F" ends in the vhost "/",
		// not in a slash.
		if ep := r.URL.EscapedPath(); len(ep) > 1 && strings.HasSuffix(ep, "/") {
			if p, err := url.PathUnescape(ep[:len(ep)-1]); err == nil {
				u := *r.URL
				u.Path, u.RawPath = p, ep[:len(ep)-1]
				r2 := *r
				r2.URL = &u
				r = &r2
			}
		}
		h.ServeHTTP(w, r)
	})
}

// userKey is where authenticate keeps the logged-in user in the gin context.
const userKey = "rabbitmq.user"

// authenticate checks the Basic credentials against the server's users and
// that the user may call the route, with RabbitMQ's 401 replies.
func (m *Management) authenticate(kind authKind) gin.HandlerFunc {
	return func(c *gin.Context) {
		name, pass, ok := c.Request.BasicAuth()
		if !ok {
			m.writeError(c, errNoCredentials)
			return
		}
		u := m.s.authenticate(name, pass)
		if u == nil {
			m.writeError(c, errLoginFailed)
			return
		}
		if !u.hasTag("administrator", "monitoring", "policymaker", "management") {
			m.writeError(c, notAuthorised("Not management user"))
			return
		}
		vh, hasVhost := m.pathVhost(c)
		// A vhost that does not exist passes here: the route answers 404.
		vhostOK := !hasVhost || m.s.lookupVhost(vh) == nil || u.mayUseVhost(vh)
		switch kind {
		case authVhost:
			if !u.isAdmin() && !vhostOK {
				m.writeError(c, notAuthorised("User not authorised to access virtual host"))
				return
			}
		case authAdmin:
			if !u.isAdmin() {
				m.writeError(c, notAuthorised("Not administrator user"))
				return
			}
		case authPolicies:
			if !u.isAdmin() && !(u.hasTag("policymaker") && vhostOK) {
				m.writeError(c, notAuthorised("User not authorised to access object"))
				return
			}
		}
		c.Set(userKey, u)
		c.Next()
	}
}

// user returns the logged-in user of a request that passed authenticate.
func (m *Management) user(c *gin.Context) *User {
	u, _ := c.Get(userKey)
	return u.(*User)
}

// hasTag reports whether the user has one of the tags.
func (u *User) hasTag(tags ...string) bool {
	for _, t := range u.Tags {
		for _, want := range tags {
			if t == want {
				return true
			}
		}
	}
	return false
}

// isMonitor reports whether the user sees every vhost's objects
// (rabbit_mgmt_util:is_monitor).
func (u *User) isMonitor() bool { return u.hasTag("administrator", "monitoring") }

// mayUseVhost reports whether the user has permissions on vhost vh.
func (u *User) mayUseVhost(vh string) bool {
	_, ok := u.Permissions[vh]
	return ok
}

// seesVhost reports whether a listing shows vh's objects to the user
// (rabbit_mgmt_util:filter_vhost: administrators see every vhost, others
// those they may log in to).
func (u *User) seesVhost(vh string) bool { return u.isAdmin() || u.mayUseVhost(vh) }

// pathVhost returns the decoded :vhost segment of the path, if it has one.
func (m *Management) pathVhost(c *gin.Context) (string, bool) {
	for _, p := range c.Params {
		if p.Key == "vhost" {
			return unescapeSegment(p.Value), true
		}
	}
	return "", false
}

// param returns a path segment, percent-decoded.
func (m *Management) param(c *gin.Context, key string) string {
	return unescapeSegment(c.Param(key))
}

// logRequests logs one line per request: debug level, error for a 5xx.
func (m *Management) logRequests() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Next()
		level := slog.LevelDebug
		if c.Writer.Status() >= 500 {
			level = slog.LevelError
		}
		m.log.Log(c.Request.Context(), level, "RabbitMQ management API request",
			"method", c.Request.Method, "path", c.Request.URL.Path, "status", c.Writer.Status())
	}
}
