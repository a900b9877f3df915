package dashboard

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// errMethodNotAllowed answers a known path asked with another method.
var errMethodNotAllowed = &statusError{status: http.StatusMethodNotAllowed, msg: "method not allowed"}

// statusError is an HTTP-only error with no core code (405).
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

// httpStatus is the one table from core error codes to HTTP statuses.
func httpStatus(code string) int {
	switch code {
	case core.EINVALID:
		return http.StatusBadRequest
	case core.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case core.ENOTFOUND:
		return http.StatusNotFound
	case core.ECONFLICT:
		return http.StatusConflict
	case core.ELOCKLOST:
		return http.StatusGone
	case core.EPRECONDITION:
		return http.StatusPreconditionFailed
	case core.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case core.ERESOURCELOCKED:
		return http.StatusLocked
	case core.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeError answers {"error": "..."} with the status of err's code. The
// text of internal errors is logged, never sent.
func (s *Server) writeError(c *gin.Context, err error) {
	var se *statusError
	if errors.As(err, &se) {
		c.AbortWithStatusJSON(se.status, gin.H{"error": se.msg})
		return
	}
	status := httpStatus(core.ErrorCode(err))
	if status == http.StatusInternalServerError {
		s.log.Error("control API internal error", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
	}
	c.AbortWithStatusJSON(status, gin.H{"error": core.ErrorMessage(err)})
}

// logRequests logs one line per request: debug level, error for a 5xx.
func (s *Server) logRequests() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Next()
		level := slog.LevelDebug
		if c.Writer.Status() >= 500 {
			level = slog.LevelError
		}
		s.log.Log(c.Request.Context(), level, "control API request",
			"method", c.Request.Method, "path", c.Request.URL.Path,
			"status", c.Writer.Status())
	}
}

// maxBody bounds request bodies; every body of the API is a few bytes.
const maxBody = 1 << 20

// decodeBody reads a JSON object into v, refusing unknown fields. An empty
// body leaves v as it is.
func decodeBody(c *gin.Context, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.As(err, &tooLarge):
			return core.Errorf(core.ETOOLARGE, "request body over %d bytes", maxBody)
		}
		return core.Errorf(core.EINVALID, "invalid JSON body: %v", err)
	}
	if dec.More() {
		return core.Errorf(core.EINVALID, "invalid JSON body: more than one value")
	}
	return nil
}
