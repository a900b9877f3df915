package cosmos

import (
	"net"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// The database account as the official emulator describes itself at GET /:
// the account "localhost", one region, "South Central US", for reads and
// writes, at the address the client used, single-region writes, and the
// default consistency level it was started with (Session unless told
// otherwise; azcosmos's own emulator tests start it with Strong).
const (
	accountID     = "localhost"
	accountRegion = "South Central US"
)

// queryEngineConfiguration is the account's query limits as the service
// announces them (a JSON document in a string); the JS SDK reads it.
const queryEngineConfiguration = `{"maxSqlQueryInputLength":262144,"maxJoinsPerSqlQuery":5,"maxLogicalAndPerSqlQuery":500,"maxLogicalOrPerSqlQuery":500,"maxUdfRefPerSqlQuery":10,"maxInExpressionItemsCount":16000,"queryMaxInMemorySortDocumentCount":500,"maxQueryRequestTimeoutFraction":0.9,"sqlAllowNonFiniteNumbers":false,"sqlAllowAggregateFunctions":true,"sqlAllowSubQuery":true,"sqlAllowScalarSubQuery":true,"allowNewKeywords":true,"sqlAllowLike":true,"sqlAllowGroupByClause":true,"maxSpatialQueryCells":12,"spatialMaxGeometryPointCount":256,"sqlDisableOptimizationFlags":0,"sqlAllowTop":true,"enableSpatialIndexing":true}`

// consistencyLevels are the account's possible default consistency levels.
var consistencyLevels = []string{"Strong", "BoundedStaleness", "Session", "ConsistentPrefix", "Eventual"}

// consistencyLevel returns the level of consistencyLevels that name names
// (in any case); an unknown name is an EINVALID error.
func consistencyLevel(name string) (string, error) {
	for _, l := range consistencyLevels {
		if strings.EqualFold(name, l) {
			return l, nil
		}
	}
	return "", core.Errorf(core.EINVALID, "unknown consistency level %q: use one of %s", name, strings.Join(consistencyLevels, ", "))
}

// accountSettings is what of the account can be set: its default
// consistency level.
type accountSettings struct {
	mu          lockorder.Mutex
	consistency string
}

func (a *accountSettings) setConsistency(level string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.consistency = level
}

func (a *accountSettings) defaultConsistency() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.consistency
}

// getAccount answers GET /, the database account. Its one region's
// endpoint is the address the client used, with the scheme it used, so
// that no SDK goes anywhere else; "localhost" is named 127.0.0.1 there, as
// the official emulator names it.
func (s *Server) getAccount(c *gin.Context) {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	endpoint := scheme + "://" + s.endpointHost(c.Request.Host) + "/"
	loc := `[{"name":` + jsonString(accountRegion) + `,"databaseAccountEndpoint":` + jsonString(endpoint) + `}]`
	body := `{"_self":"","id":` + jsonString(accountID) + `,"_rid":` + jsonString(accountID) + `,"media":"//media/","addresses":"//addresses/","_dbs":"//dbs/",` +
		`"writableLocations":` + loc + `,"readableLocations":` + loc + `,"enableMultipleWriteLocations":false,` +
		`"userReplicationPolicy":{"asyncReplication":false,"minReplicaSetSize":1,"maxReplicasetSize":4},` +
		`"userConsistencyPolicy":{"defaultConsistencyLevel":` + jsonString(s.account.defaultConsistency()) + `},` +
		`"systemReplicationPolicy":{"minReplicaSetSize":1,"maxReplicasetSize":4},` +
		`"readPolicy":{"primaryReadCoefficient":1,"secondaryReadCoefficient":1},` +
		`"queryEngineConfiguration":` + jsonString(queryEngineConfiguration) + `}`
	h := c.Writer.Header()
	h.Set("x-ms-max-media-storage-usage-mb", "10240")
	h.Set("x-ms-media-storage-usage-mb", "0")
	writeJSON(c, http.StatusOK, []byte(body))
}

// endpointHost returns the host and port of the account's endpoint for a
// request to host (its Host header): host itself, but 127.0.0.1 for
// localhost when the server takes IPv4 connections, as the official
// emulator reports itself.
func (s *Server) endpointHost(host string) string {
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, ""
	}
	if !strings.EqualFold(name, "localhost") {
		return host
	}
	if a, ok := s.Addr().(*net.TCPAddr); ok && a.IP.To4() == nil && !a.IP.IsUnspecified() {
		return host // listening on an IPv6 address only
	}
	if port == "" {
		return "127.0.0.1"
	}
	return net.JoinHostPort("127.0.0.1", port)
}
