package cosmos

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// The account's default consistency level (Config.DefaultConsistencyLevel,
// --cosmos-consistency) is what GET / reports and what a request without
// x-ms-consistency-level is served at; a request may ask for the same
// level or a weaker one, and a stronger one is the service's 400. lapse
// keeps one copy of each item, so every level reads the latest write: the
// level decides what is refused, not what is read.

// hdrConsistencyLevel is the request header that asks for a level.
const hdrConsistencyLevel = "x-ms-consistency-level"

// ParseConsistencyLevel returns the consistency level name names, in any
// case (Strong, BoundedStaleness, Session, ConsistentPrefix or Eventual);
// another name is an EINVALID error.
func ParseConsistencyLevel(name string) (string, error) { return consistencyLevel(name) }

// strength is a level's place in consistencyLevels, strongest first: the
// lower, the stronger.
func strength(level string) int {
	for i, l := range consistencyLevels {
		if l == level {
			return i
		}
	}
	return len(consistencyLevels)
}

// checkConsistency refuses a request on items (point operations, feeds,
// queries, batches) whose x-ms-consistency-level is not a level, or is
// stronger than the account's, as the service does. Requests on the
// account, databases, containers and offers are not checked: the SDKs
// send their client's level on every request, the account read that
// tells them the default included.
func (s *Server) checkConsistency() gin.HandlerFunc {
	return func(c *gin.Context) {
		asked := rqConsistencyLevel.of(c)
		if asked == "" || !strings.HasPrefix(c.FullPath(), "/dbs/:db/colls/:coll/docs") {
			c.Next()
			return
		}
		level, err := consistencyLevel(asked)
		if err != nil {
			s.writeError(c, errorf(http.StatusBadRequest, "Value '%s' specified for the header '%s' is invalid.", asked, hdrConsistencyLevel))
			return
		}
		account := s.account.defaultConsistency()
		if strength(level) < strength(account) {
			s.writeError(c, errorf(http.StatusBadRequest,
				"ConsistencyLevel %s specified in the request is invalid when service is configured with consistency level %s. Ensure the request consistency level is not stronger than the service consistency level.",
				level, account))
			return
		}
		c.Next()
	}
}
