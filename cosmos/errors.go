package cosmos

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// apiError is an error as the service answers it: a status, the code word
// of the body, a substatus where the service sends one, and the text.
type apiError struct {
	status    int
	code      string
	substatus int
	msg       string
	// raw is a message already in the service's "Message: {...}" form (a
	// query's syntax errors), sent as it is.
	raw string
	// info is the body's additionalErrorInfo: the query plan of a query
	// the gateway leaves to the client's pipeline.
	info string
}

func (e *apiError) Error() string { return e.msg }

// errorf returns an apiError with status and the code word the service uses
// for it.
func errorf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, code: codeWord(status), msg: fmt.Sprintf(format, args...)}
}

// codeWord is the body's code for an HTTP status.
func codeWord(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "BadRequest"
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusForbidden:
		return "Forbidden"
	case http.StatusNotFound:
		return "NotFound"
	case http.StatusMethodNotAllowed:
		return "MethodNotAllowed"
	case http.StatusRequestTimeout:
		return "RequestTimeout"
	case http.StatusConflict:
		return "Conflict"
	case http.StatusPreconditionFailed:
		return "PreconditionFailed"
	case http.StatusRequestEntityTooLarge:
		return "RequestEntityTooLarge"
	case http.StatusFailedDependency:
		return "FailedDependency"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailable"
	case statusRetryWith:
		return "RetryWith"
	}
	return "InternalServerError"
}

// The service's texts for the common cases.
var (
	errNotFound = func() *apiError {
		return errorf(http.StatusNotFound, "Resource Not Found. Learn more: https://aka.ms/cosmosdb-tsg-not-found")
	}
	// errItemNotFound is an item's 404, in the service's words for items.
	errItemNotFound = func() *apiError {
		return errorf(http.StatusNotFound, "Entity with the specified id does not exist in the system. More info: https://aka.ms/cosmosdb-tsg-not-found")
	}
	errConflict = func() *apiError {
		return errorf(http.StatusConflict, "Entity with the specified id already exists in the system.")
	}
	errPrecondition = func() *apiError {
		return errorf(http.StatusPreconditionFailed, "One of the specified pre-condition is not met. Learn more: https://aka.ms/CosmosDB/sql/errors/precondition-failed")
	}
	errTooLarge = func() *apiError { return errorf(http.StatusRequestEntityTooLarge, "Request size is too large") }
)

// toAPIError maps lapse's errors to the service's: the one table from core
// codes to HTTP (docs/architecture.md, conventions).
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var qe *query.Error
	if errors.As(err, &qe) {
		return queryError(qe)
	}
	switch core.ErrorCode(err) {
	case core.EINVALID:
		return errorf(http.StatusBadRequest, "%s", core.ErrorMessage(err))
	case core.ENOTFOUND:
		return errNotFound()
	case core.ECONFLICT:
		return errConflict()
	case core.EPRECONDITION:
		return errPrecondition()
	case core.ETOOLARGE:
		return errTooLarge()
	case core.EUNIQUE:
		return errUniqueViolation()
	case core.EUNAUTHORIZED:
		return errorf(http.StatusUnauthorized, "%s", core.ErrorMessage(err))
	case core.EUNAVAILABLE:
		return errorf(http.StatusServiceUnavailable, "The service is shutting down.")
	}
	return &apiError{status: http.StatusInternalServerError, code: "InternalServerError", msg: "An unknown error occurred while processing this request."}
}

// queryError is a query's syntax or semantic error in the service's shape.
func queryError(qe *query.Error) *apiError {
	inner := fmt.Sprintf(`{"errors":[{"severity":"Error","location":{"start":%d,"end":%d},"code":%s,"message":%s}]}`,
		qe.Start, qe.End, strconv.Quote(qe.Code), jsonString(qe.Message))
	return &apiError{status: http.StatusBadRequest, code: "BadRequest", msg: qe.Message, raw: "Message: " + inner}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string { return string(query.AppendJSON(nil, s)) }

// writeError answers err as the service would. Internal errors are logged,
// never shown.
func (s *Server) writeError(c *gin.Context, err error) {
	ae := toAPIError(err)
	if ae.status == http.StatusInternalServerError {
		s.log.Error("cosmos internal error", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
	}
	msg := ae.raw
	if msg == "" {
		msg = "Message: {\"Errors\":[" + jsonString(ae.msg) + "]}"
	}
	h := c.Writer.Header()
	activity := ""
	if v := h[activityIDKey]; len(v) > 0 {
		activity = v[0]
	}
	msg += "\r\nActivityId: " + activity + ", Microsoft.Azure.Documents.Common/2.14.0"
	if ae.substatus != 0 {
		h.Set(hdrSubstatus, strconv.Itoa(ae.substatus))
	}
	h.Set("Content-Type", "application/json")
	body := `{"code":` + jsonString(ae.code) + `,"message":` + jsonString(msg)
	if ae.info != "" {
		body += `,"additionalErrorInfo":` + jsonString(ae.info)
	}
	body += `}`
	c.Status(ae.status)
	c.Writer.WriteString(body)
	c.Abort()
}
