package cosmos

import (
	"net/http"
	"net/textproto"

	"github.com/gin-gonic/gin"
)

// A requestHeader is the name of a request header in canonical form
// ("X-Ms-Documentdb-Query"), the form net/http keys a request's headers
// by. Header.Get and gin's GetHeader put the name they are given in that
// form at every call, in a new string when it is in lower case, as the
// service's headers are: 2% of lapse's CPU in a Cosmos DB write (pprof).
// The names lapse reads are put in that form once, below, and read with
// of; TestRequestHeadersAreReadByCanonicalName keeps it so.
type requestHeader string

// canonical returns name as a requestHeader.
func canonical(name string) requestHeader {
	return requestHeader(textproto.CanonicalMIMEHeaderKey(name))
}

// of returns the request's first value of h, "" when it has none.
func (h requestHeader) of(c *gin.Context) string {
	return h.ofRequest(c.Request)
}

// ofRequest is of for a request outside gin.
func (h requestHeader) ofRequest(r *http.Request) string {
	if v := r.Header[string(h)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// The request headers lapse reads.
var (
	rqAIM                    = canonical("A-IM")
	rqActivityID             = canonical(hdrActivityID)
	rqAuthorization          = canonical("Authorization")
	rqAutopilotSettings      = canonical("x-ms-cosmos-offer-autopilot-settings")
	rqBatchAtomic            = canonical("x-ms-cosmos-batch-atomic")
	rqBatchContinueOnError   = canonical("x-ms-cosmos-batch-continue-on-error")
	rqConsistencyLevel       = canonical(hdrConsistencyLevel)
	rqContentType            = canonical("Content-Type")
	rqContinuation           = canonical(hdrContinuation)
	rqDate                   = canonical("Date")
	rqEnableCrossPartition   = canonical("x-ms-documentdb-query-enablecrosspartition")
	rqEndEPK                 = canonical("x-ms-end-epk")
	rqExpirySeconds          = canonical(hdrExpirySeconds)
	rqIfMatch                = canonical("If-Match")
	rqIfModifiedSince        = canonical("If-Modified-Since")
	rqIfNoneMatch            = canonical("If-None-Match")
	rqIsBatchRequest         = canonical("x-ms-cosmos-is-batch-request")
	rqIsQuery                = canonical("x-ms-documentdb-isquery")
	rqIsQueryPlanRequest     = canonical("x-ms-cosmos-is-query-plan-request")
	rqIsUpsert               = canonical("x-ms-documentdb-is-upsert")
	rqMaxItemCount           = canonical("x-ms-max-item-count")
	rqMsDate                 = canonical("x-ms-date")
	rqOfferThroughput        = canonical("x-ms-offer-throughput")
	rqPartitionKey           = canonical(hdrPartitionKey)
	rqPopulateIndexMetrics   = canonical("x-ms-cosmos-populateindexmetrics")
	rqPopulateQuotaInfo      = canonical(hdrPopulateQuotaInfo)
	rqPostTriggers           = canonical(hdrPostTriggers)
	rqPreTriggers            = canonical(hdrPreTriggers)
	rqPrefer                 = canonical("Prefer")
	rqQuery                  = canonical("x-ms-documentdb-query")
	rqQueryVersion           = canonical("x-ms-cosmos-query-version")
	rqRangeID                = canonical(hdrRangeID)
	rqScriptEnableLogging    = canonical("x-ms-documentdb-script-enable-logging")
	rqStartEPK               = canonical("x-ms-start-epk")
	rqSupportedQueryFeatures = canonical("x-ms-cosmos-supported-query-features")
)
