package cosmos

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// queryEngineConfiguration is the account's query limits as the service
// announces them (a JSON document in a string); the JS SDK reads it.
const queryEngineConfiguration = `{"maxSqlQueryInputLength":262144,"maxJoinsPerSqlQuery":5,"maxLogicalAndPerSqlQuery":500,"maxLogicalOrPerSqlQuery":500,"maxUdfRefPerSqlQuery":10,"maxInExpressionItemsCount":16000,"queryMaxInMemorySortDocumentCount":500,"maxQueryRequestTimeoutFraction":0.9,"sqlAllowNonFiniteNumbers":false,"sqlAllowAggregateFunctions":true,"sqlAllowSubQuery":true,"sqlAllowScalarSubQuery":true,"allowNewKeywords":true,"sqlAllowLike":true,"sqlAllowGroupByClause":true,"maxSpatialQueryCells":12,"spatialMaxGeometryPointCount":256,"sqlDisableOptimizationFlags":0,"sqlAllowTop":true,"enableSpatialIndexing":true}`

// getAccount answers GET /, the database account. Its one location points
// back at the address the client used, with the scheme it used, so that
// neither SDK goes anywhere else.
func (s *Server) getAccount(c *gin.Context) {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	endpoint := scheme + "://" + c.Request.Host + "/"
	loc := `[{"name":"South Central US","databaseAccountEndpoint":` + jsonString(endpoint) + `}]`
	body := `{"_self":"","id":"lapse","_rid":"lapse.documents.azure.com","media":"//media/","addresses":"//addresses/","_dbs":"//dbs/",` +
		`"writableLocations":` + loc + `,"readableLocations":` + loc + `,"enableMultipleWriteLocations":false,` +
		`"userReplicationPolicy":{"asyncReplication":false,"minReplicaSetSize":1,"maxReplicasetSize":4},` +
		`"userConsistencyPolicy":{"defaultConsistencyLevel":"Session"},` +
		`"systemReplicationPolicy":{"minReplicaSetSize":1,"maxReplicasetSize":4},` +
		`"readPolicy":{"primaryReadCoefficient":1,"secondaryReadCoefficient":1},` +
		`"queryEngineConfiguration":` + jsonString(queryEngineConfiguration) + `}`
	c.Data(http.StatusOK, "application/json", []byte(body))
}
