package cosmos

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/script"
	"github.com/lapse-emulator/lapse/httpserver"
)

// EmulatorKey is the official emulator's well-known master key, lapse's
// default.
const EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// maxItemSize is the service's limit on an item, 2 MB.
const maxItemSize = 2 << 20

// Config is what a Server needs.
type Config struct {
	// Addr is the address to listen on (":0" picks a free port).
	Addr string
	// Engine is lapse's engine and Now reads lapse's clock.
	Engine *core.Engine
	Now    func() time.Time
	// WallNow reads the wall clock, against which request dates are
	// checked (the SDKs sign with it); nil uses time.Now.
	WallNow func() time.Time
	// Logger receives the server's log; nil discards.
	Logger *slog.Logger
	// Key is the account's master key in base64; "" is EmulatorKey.
	Key string
	// Certificate, when set, makes the port answer TLS as well as plain
	// HTTP; CertificatePEM is served at /_explorer/emulator.pem.
	Certificate    *tls.Certificate
	CertificatePEM []byte
	// DefaultConsistencyLevel is the account's default consistency level
	// (Strong, BoundedStaleness, Session, ConsistentPrefix or Eventual);
	// "" is Session, the official emulator's default. A config file
	// (LoadConfig) may set it too.
	DefaultConsistencyLevel string
	// PartitionCount is the official emulator's /PartitionCount, how many
	// partitions it has for containers: 1 to MaxPartitionCount; 0 is
	// DefaultPartitionCount.
	PartitionCount int
	// Worlds, set on the default world's server only, returns the Servers
	// of the sandboxes, which share its port: a request signed with one's
	// key is served by it (worlds.go).
	Worlds func() []*Server
	// Used, if set, is called for each request a sandbox's server is
	// handed: a use of the sandbox, which keeps it from going idle.
	Used func()
	// ScriptLimits bound the server-side scripts (stored procedures,
	// triggers, user-defined functions); zero values are the defaults of
	// package script.
	ScriptLimits script.Limits
}

// The official emulator's /PartitionCount: 25 unless told, at most 250.
const (
	DefaultPartitionCount = 25
	MaxPartitionCount     = 250
)

// CheckPartitionCount returns an EINVALID error for a partition count that
// is not 1 to MaxPartitionCount.
func CheckPartitionCount(n int) error {
	if n < 1 || n > MaxPartitionCount {
		return core.Errorf(core.EINVALID, "partition count %d: use 1 to %d (the official emulator's limit)", n, MaxPartitionCount)
	}
	return nil
}

// partitionCount is the most partition key ranges a container gets.
func (s *Server) partitionCount() int {
	if s.cfg.PartitionCount > 0 {
		return s.cfg.PartitionCount
	}
	return DefaultPartitionCount
}

// Server is the Cosmos DB REST server.
type Server struct {
	*httpserver.Server
	cfg   Config
	log   *slog.Logger
	key   []byte
	etags etagSource
	acts  activityIDs
	macs  sync.Pool // HMAC-SHA256s of key, for signatureOK
	// lastDate is the last request date authorize parsed (parseDate).
	lastDate  atomic.Pointer[parsedDate]
	resources resourceCache
	rids      ridIndex
	docNums   docNumbers
	account   accountSettings
	// versions are the containers' changes for the all-versions-and-deletes
	// change feed (versions.go).
	versions versionLogs
	// beforeChange, when set (by tests), runs in each conditional write
	// between its plan and its write (Server.change).
	beforeChange func()
	// lastUnique is the Unique hook's (recoveredUnique), which only the
	// engine's Recover calls, one call at a time.
	lastUnique lastUnique
	// scripts runs server-side scripts (sprocs.go).
	scripts *script.Runner
	// handler is the server's routes, built once (routes); routed is them
	// past the gateway's rewriting (route), gin their engine.
	handler func() http.Handler
	routed  http.Handler
	gin     *gin.Engine
	// recent are the worlds the port found last (findWorld), the default
	// world's; closed is set by Close, after which no request is routed
	// to the server.
	recentMu sync.Mutex
	recent   recentWorlds
	closed   atomic.Bool
}

// NewServer returns a Server for cfg; Open starts it (httpserver.Server:
// Open, Addr and Close). A key that is not base64 is an EINVALID error.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Key == "" {
		cfg.Key = EmulatorKey
	}
	key, err := base64.StdEncoding.DecodeString(cfg.Key)
	if err != nil {
		return nil, core.Errorf(core.EINVALID, "the Cosmos DB key is not base64: %v", err)
	}
	if cfg.DefaultConsistencyLevel == "" {
		cfg.DefaultConsistencyLevel = "Session"
	}
	level, err := consistencyLevel(cfg.DefaultConsistencyLevel)
	if err != nil {
		return nil, err
	}
	if cfg.PartitionCount == 0 {
		cfg.PartitionCount = DefaultPartitionCount
	}
	if err := CheckPartitionCount(cfg.PartitionCount); err != nil {
		return nil, err
	}
	if cfg.WallNow == nil {
		cfg.WallNow = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, key: key, scripts: script.New(cfg.ScriptLimits)}
	s.account.setConsistency(level)
	s.etags.init()
	s.acts.init()
	// The routes are built at the first request: a sandbox's server
	// (issue 29) that no Cosmos DB client uses does not keep them.
	s.handler = sync.OnceValue(s.routes)
	s.Server = httpserver.New("Cosmos DB API", cfg.Addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.handler().ServeHTTP(w, r)
	}), log)
	// Every request of a Cosmos DB SDK is a short exchange: net/http's
	// watch for a client hanging up would cost each a goroutine
	// (docs/benchmarks.md).
	s.ServeOwnHTTP1()
	if cfg.Worlds != nil {
		s.SetConnContext(withConnWorld)
	}
	if cfg.Certificate != nil {
		s.ServeTLS(&tls.Config{Certificates: []tls.Certificate{*cfg.Certificate}})
	}
	return s, nil
}

// Close stops the server as httpserver.Server.Close does; a sandbox's
// server, which has no port of its own, is no longer routed to.
func (s *Server) Close(ctx context.Context) error {
	s.closed.Store(true)
	return s.Server.Close(ctx)
}

// now reads lapse's clock.
func (s *Server) now() time.Time { return s.cfg.Now() }

// routes builds the gin engine. Item ids arrive escaped (a space as %20),
// so paths are matched on the raw path and their values unescaped.
func (s *Server) routes() http.Handler {
	r := gin.New()
	r.UseRawPath = true
	r.UnescapePathValues = false // gin would read '+' as a space: see param
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.Use(httpserver.Recovery(s.log, "cosmos", s.writeError), s.common())
	r.NoRoute(func(c *gin.Context) { s.writeError(c, errNotFound()) })
	r.NoMethod(func(c *gin.Context) {
		s.writeError(c, errorf(http.StatusMethodNotAllowed, "The requested verb is not supported."))
	})
	r.GET("/_explorer/emulator.pem", s.getCertificate)

	a := r.Group("/", s.authorize(), s.checkConsistency())
	a.GET("/", s.getAccount)
	a.POST("/dbs", s.postDatabases)
	a.GET("/dbs", s.listDatabases)
	a.GET("/dbs/:db", s.getDatabase)
	a.DELETE("/dbs/:db", s.deleteDatabase)
	a.POST("/dbs/:db/colls", s.postContainers)
	a.GET("/dbs/:db/colls", s.listContainers)
	a.GET("/dbs/:db/colls/:coll", s.getContainer)
	a.PUT("/dbs/:db/colls/:coll", s.replaceContainer)
	a.DELETE("/dbs/:db/colls/:coll", s.deleteContainer)
	a.GET("/dbs/:db/colls/:coll/pkranges", s.getPartitionKeyRanges)
	a.POST("/dbs/:db/colls/:coll/docs", s.postItems)
	a.GET("/dbs/:db/colls/:coll/docs", s.readFeed)
	a.GET("/dbs/:db/colls/:coll/docs/:id", s.readItem)
	a.PUT("/dbs/:db/colls/:coll/docs/:id", s.replaceItem)
	a.DELETE("/dbs/:db/colls/:coll/docs/:id", s.deleteItem)
	a.PATCH("/dbs/:db/colls/:coll/docs/:id", s.patchItem)
	s.scriptRoutes(a)
	a.POST("/dbs/:db/colls/:coll/operations/partitionkeydelete", s.deletePartitionKey)
	a.GET("/dbs/:db/colls/:coll/conflicts", s.listConflicts)
	a.POST("/dbs/:db/colls/:coll/conflicts", s.queryConflicts)
	a.GET("/dbs/:db/colls/:coll/conflicts/:conflict", s.getConflict)
	a.DELETE("/dbs/:db/colls/:coll/conflicts/:conflict", s.getConflict)
	a.POST("/dbs/:db/users", s.postUsers)
	a.GET("/dbs/:db/users", s.listUsers)
	a.GET("/dbs/:db/users/:user", s.getUser)
	a.PUT("/dbs/:db/users/:user", s.putUser)
	a.DELETE("/dbs/:db/users/:user", s.deleteUser)
	a.POST("/dbs/:db/users/:user/permissions", s.postPermissions)
	a.GET("/dbs/:db/users/:user/permissions", s.listPermissions)
	a.GET("/dbs/:db/users/:user/permissions/:perm", s.getPermission)
	a.PUT("/dbs/:db/users/:user/permissions/:perm", s.putPermission)
	a.DELETE("/dbs/:db/users/:user/permissions/:perm", s.deletePermission)
	a.POST("/offers", s.postOffers)
	a.GET("/offers", s.listOffers)
	a.GET("/offers/:offer", s.getOffer)
	a.PUT("/offers/:offer", s.replaceOffer)
	s.gin, s.routed = r, s.byName(r)
	return queryInID(asService(s.route(s.routed)))
}

// param returns the path parameter name, unescaped as a path ('+' stays
// '+').
func param(c *gin.Context, name string) string {
	v := c.Param(name)
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// Response headers the SDKs read.
const (
	hdrActivityID    = "x-ms-activity-id"
	hdrRequestCharge = "x-ms-request-charge"
	hdrSessionToken  = "x-ms-session-token"
	hdrSubstatus     = "x-ms-substatus"
	hdrContinuation  = "x-ms-continuation"
	hdrItemCount     = "x-ms-item-count"
	hdrPartitionKey  = "x-ms-documentdb-partitionkey"
	hdrRangeID       = "x-ms-documentdb-partitionkeyrangeid"
)

// common sets the headers the service sends on every response: a request
// charge of 1 RU, which item handlers replace with theirs (charge.go), and,
// on responses that are not about items, the engine's last event id as
// their LSN (lsn.go).
func (s *Server) common() gin.HandlerFunc {
	return func(c *gin.Context) {
		// Keys in the service's form, which serviceHeaderWriter then has
		// nothing to rename, and one array for the values of the
		// response's own: Set would canonicalize each name into a new
		// string and allocate a slice for each value. The versions' slices are
		// shared by every response; nothing writes to them (setCharge
		// writes the charge's, which is this response's own).
		h := c.Writer.Header()
		own := make([]string, 2)
		// The client's activity id, when it sends one, as the service
		// echoes it (azure-cosmos's logging tests match the two).
		own[0], own[1] = rqActivityID.of(c), "1"
		if own[0] == "" {
			own[0] = s.acts.next()
		}
		h[activityIDKey] = own[0:1:1]
		h[requestChargeKey] = own[1:2:2]
		h[serviceVersionKey] = serviceVersion
		h[gatewayVersionKey] = gatewayVersion
		h[schemaVersionKey] = schemaVersion
		if !strings.Contains(c.FullPath(), "/docs") {
			setLSN(c, s.cfg.Engine.LastEventID())
		}
		c.Next()
	}
}

// The keys of the headers common sets, as the service writes them (not
// Header.Set's canonical form: read them by key, not with Header.Get), and
// the values of those that never change, which every response shares.
const (
	activityIDKey     = hdrActivityID
	serviceVersionKey = "x-ms-serviceversion"
	gatewayVersionKey = "x-ms-gatewayversion"
	schemaVersionKey  = "x-ms-schemaversion"
)

var (
	serviceVersion = []string{"version=2.14.0.0"}
	gatewayVersion = []string{"version=2.14.0"}
	schemaVersion  = []string{"1.19"}
)

// getCertificate serves the TLS certificate, as the official emulator does,
// so that clients can trust it.
func (s *Server) getCertificate(c *gin.Context) {
	if len(s.cfg.CertificatePEM) == 0 {
		s.writeError(c, errNotFound())
		return
	}
	c.Data(http.StatusOK, "application/x-pem-file", s.cfg.CertificatePEM)
}
