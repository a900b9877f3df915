package atom

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/lapse-emulator/lapse/core"
)

// errorStatus maps lapse's error codes to the management API's HTTP status
// and the "SubCode=" text the service puts before the message (docs/architecture.md,
// conventions: one table per protocol).
var errorStatus = map[string]struct {
	status  int
	subcode string
}{
	core.ENOTFOUND:     {http.StatusNotFound, ""},
	core.EINVALID:      {http.StatusBadRequest, "SubCode=40000. "},
	core.EPRECONDITION: {http.StatusBadRequest, "SubCode=40000. "},
	core.ECONFLICT:     {http.StatusConflict, "SubCode=40900. "},
	core.EUNAUTHORIZED: {http.StatusUnauthorized, ""},
	core.ETOOLARGE:     {http.StatusForbidden, "SubCode=40300. "},
	core.EUNAVAILABLE:  {http.StatusServiceUnavailable, ""},
}

// conflictText is the service's 409 for creating an entity that exists.
const conflictText = "Conflict. You're requesting an operation that isn't allowed in the resource's current state. " +
	"To know more visit https://aka.ms/sbResourceMgrExceptions. "

// writeError writes err as the service's XML error body. path, the entity
// path the request concerns, goes into the SystemTracker as the service
// writes it.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error, path string) {
	code := core.ErrorCode(err)
	m, ok := errorStatus[code]
	if !ok {
		h.log.Error("atom internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		h.writeStatus(w, r, http.StatusInternalServerError, "The server was unable to process the request; please retry the operation.", path)
		return
	}
	msg := core.ErrorMessage(err)
	if code == core.ECONFLICT {
		h.log.Debug("atom conflict", "path", path, "err", err)
		msg = conflictText
	}
	h.writeStatus(w, r, m.status, m.subcode+msg, path)
}

// writeStatus writes <Error><Code>status</Code><Detail>detail and the
// service's tracking tail</Detail></Error>.
func (h *Handler) writeStatus(w http.ResponseWriter, r *http.Request, status int, detail, path string) {
	tracker := r.Host
	if path != "" {
		tracker += ":" + path
	}
	detail = strings.TrimRight(detail, " ") + fmt.Sprintf(" TrackingId:%s, SystemTracker:%s, Timestamp:%s",
		trackingID(), tracker, h.Now().UTC().Format("2006-01-02T15:04:05"))
	var b xmlBuf
	b.open("Error")
	b.elem("Code", strconv.Itoa(status))
	b.elem("Detail", detail)
	b.close("Error")
	h.write(w, status, contentError, b.Bytes())
}

// trackingID returns a random UUID, the service's TrackingId.
func trackingID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
