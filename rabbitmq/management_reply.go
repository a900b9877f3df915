package rabbitmq

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// apiError is an error reply of the management API: an HTTP status and
// RabbitMQ's {"error": ..., "reason": ...} body (rabbit_mgmt_util:
// halt_response). Reason is a string, or a list where RabbitMQ formats an
// Erlang tuple ({not_boolean, <<"yes">>} is ["not_boolean","yes"]).
type apiError struct {
	status int
	kind   string
	reason any
	// challenge adds the WWW-Authenticate header of a login failure.
	challenge bool
	// noBody answers with an empty body (a request without credentials).
	noBody bool
}

func (e *apiError) Error() string {
	if s, ok := e.reason.(string); ok {
		return e.kind + ": " + s
	}
	return e.kind
}

// The fixed error replies.
var (
	errObjectNotFound   = &apiError{status: http.StatusNotFound, kind: "Object Not Found", reason: "Not Found"}
	errMethodNotAllowed = &apiError{status: http.StatusMethodNotAllowed, noBody: true}
	errNoCredentials    = &apiError{status: http.StatusUnauthorized, challenge: true, noBody: true}
	errLoginFailed      = &apiError{status: http.StatusUnauthorized, kind: "not_authorized", reason: "Login failed", challenge: true}
	errVhostNotFound    = &apiError{status: http.StatusNotFound, kind: "not_found", reason: "vhost_not_found"}
	errAccessRefused    = notAuthorised("Access refused.")
)

func badRequest(reason any) *apiError {
	return &apiError{status: http.StatusBadRequest, kind: "bad_request", reason: reason}
}

func notAuthorised(reason string) *apiError {
	return &apiError{status: http.StatusUnauthorized, kind: "not_authorised", reason: reason}
}

func notFound(reason string) *apiError {
	return &apiError{status: http.StatusNotFound, kind: "not_found", reason: reason}
}

// directError maps the error of an operation the API runs as RabbitMQ's
// direct_request does (declare, delete, bind, unbind, purge): the reason is
// the reply text without its "NAME - " prefix; 404 for NOT_FOUND, 401
// "Access refused." for ACCESS_REFUSED and NOT_ALLOWED, 400 otherwise.
func directError(err error) error {
	ae, ok := amqpErrorOf(err)
	if !ok {
		return err
	}
	text := strings.TrimPrefix(ae.text, wire.ReplyName(ae.code)+" - ")
	switch ae.code {
	case wire.NotFound:
		return notFound(text)
	case wire.AccessRefused, wire.NotAllowed:
		return errAccessRefused
	}
	return badRequest(text)
}

// channelReplyError maps the error of an operation the API runs on a
// channel of its own, as RabbitMQ's with_channel does (get, publish): 404
// and 403 keep the whole reply text, anything else is 400 "<code> <text>".
func channelReplyError(err error) error {
	ae, ok := amqpErrorOf(err)
	if !ok {
		return err
	}
	switch ae.code {
	case wire.NotFound:
		return notFound(ae.text)
	case wire.AccessRefused:
		return notAuthorised(ae.text)
	}
	return badRequest(strconv.Itoa(int(ae.code)) + " " + ae.text)
}

// publishError maps the error of a publish: RabbitMQ's API learns of it
// when its channel dies, and answers 400 "<code> <text>" whatever the
// code.
func publishError(err error) error {
	ae, ok := amqpErrorOf(err)
	if !ok {
		return err
	}
	return badRequest(strconv.Itoa(int(ae.code)) + " " + ae.text)
}

// amqpErrorOf returns the AMQP reply err stands for (fromCore's table);
// ok is false for internal errors, whose text stays in the log.
func amqpErrorOf(err error) (*amqpError, bool) {
	var ae *amqpError
	if !errors.As(err, &ae) {
		if core.ErrorCode(err) == core.EINTERNAL {
			return nil, false
		}
		ae = fromCore(err)
	}
	return ae, ae.code != wire.InternalError
}

// apiStatus is the one table from core error codes to the API's replies.
func apiStatus(code string) (int, string) {
	switch code {
	case core.EINVALID, core.EPRECONDITION, core.ECONFLICT, core.ETOOLARGE, core.ERESOURCELOCKED:
		return http.StatusBadRequest, "bad_request"
	case core.EUNAUTHORIZED:
		return http.StatusUnauthorized, "not_authorised"
	case core.ENOTFOUND:
		return http.StatusNotFound, "not_found"
	case core.EUNAVAILABLE:
		return http.StatusServiceUnavailable, "service_unavailable"
	}
	return http.StatusInternalServerError, "internal_server_error"
}

// writeError answers with err's reply. The text of internal errors is
// logged, never sent.
func (m *Management) writeError(c *gin.Context, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		status, kind := apiStatus(core.ErrorCode(err))
		if status == http.StatusInternalServerError {
			m.log.Error("RabbitMQ management API internal error", "method", c.Request.Method,
				"path", c.Request.URL.Path, "err", err)
		}
		ae = &apiError{status: status, kind: kind, reason: core.ErrorMessage(err)}
	}
	if ae.challenge {
		c.Header("WWW-Authenticate", `Basic realm="RabbitMQ Management"`)
	}
	if ae.noBody {
		c.AbortWithStatus(ae.status)
		return
	}
	m.writeJSON(c, ae.status, map[string]any{"error": ae.kind, "reason": ae.reason})
	c.Abort()
}

// writeJSON writes v as JSON without HTML escaping, as RabbitMQ does.
func (m *Management) writeJSON(c *gin.Context, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		m.log.Error("RabbitMQ management API: encoding a reply", "path", c.Request.URL.Path, "err", err)
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString(`{"error":"internal_server_error","reason":"internal error"}`)
	}
	c.Header("Cache-Control", "no-cache")
	c.Data(status, "application/json", bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// reply answers 200 with one object, keeping the columns= asked for.
func (m *Management) reply(c *gin.Context, obj map[string]any) {
	cols := parseColumns(c.Query("columns"))
	m.writeJSON(c, http.StatusOK, pickColumns(obj, cols))
}

// replyList answers 200 with a list, sorted by sort= (then defaultSort)
// and sort_reverse=, with the columns= asked for; paged when paged is set
// and page= is given.
func (m *Management) replyList(c *gin.Context, items []map[string]any, defaultSort []string, paged bool) {
	out, err := listing(items, listQuery{
		sort:     c.Query("sort"),
		reverse:  c.Query("sort_reverse") == "true",
		columns:  c.Query("columns"),
		page:     queryValue(c, "page"),
		pageSize: queryValue(c, "page_size"),
		name:     queryValue(c, "name"),
		useRegex: c.Query("use_regex") == "true",
		paged:    paged,
	}, defaultSort)
	if err != nil {
		m.writeError(c, err)
		return
	}
	m.writeJSON(c, http.StatusOK, out)
}

// queryValue returns a query parameter, nil when absent.
func queryValue(c *gin.Context, key string) *string {
	v, ok := c.GetQuery(key)
	if !ok {
		return nil
	}
	return &v
}

// created answers a PUT: 201 when it created the object, 204 when the
// object existed (as cowboy_rest answers a PUT).
func created(c *gin.Context, existed bool) {
	if existed {
		c.Status(http.StatusNoContent)
	} else {
		c.Status(http.StatusCreated)
	}
	c.Writer.WriteHeaderNow()
}

// noContent answers 204.
func noContent(c *gin.Context) {
	c.Status(http.StatusNoContent)
	c.Writer.WriteHeaderNow()
}
