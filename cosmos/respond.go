package cosmos

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// writeResource answers a resource's JSON with its ETag; a write (write
// true) the client asked to be minimal (Prefer: return=minimal) gets no
// body.
func writeResource(c *gin.Context, status int, etag string, body []byte, write bool) {
	if etag != "" {
		c.Writer.Header()[etagKey] = []string{etag}
	}
	if write && isMinimal(c) {
		c.Status(status)
		c.Writer.WriteHeaderNow()
		return
	}
	writeJSON(c, status, body)
}

// writeJSON answers status with body, a JSON document, as gin's Data
// does but through no renderer and with one Content-Type value that every
// answer shares (nothing writes to it).
func writeJSON(c *gin.Context, status int, body []byte) {
	h := c.Writer.Header()
	if _, ok := h[contentTypeKey]; !ok {
		h[contentTypeKey] = jsonContentType
	}
	c.Status(status)
	if status == http.StatusNoContent || status == http.StatusNotModified || status < 200 {
		c.Writer.WriteHeaderNow()
		return
	}
	c.Writer.Write(body)
}

// contentTypeKey and jsonContentType are an http.Header's key and value
// for a JSON answer.
const contentTypeKey = "Content-Type"

var jsonContentType = []string{"application/json"}

// etagKey is etag's key in an http.Header, as the service writes it.
const etagKey = "etag"

// isMinimal reports whether the client asked for no content on a write.
func isMinimal(c *gin.Context) bool {
	return strings.EqualFold(rqPrefer.of(c), "return=minimal")
}

// writeFeed answers a feed or query page: {"_rid", field: [...],
// "_count"}, with the item count, the continuation, if any, and the
// page's charge (pageCharge) in headers.
func writeFeed(c *gin.Context, rid, field string, rows [][]byte, continuation string) {
	n := 0
	for _, r := range rows {
		n += len(r) + 1
	}
	b := make([]byte, 0, n+len(rid)+len(field)+48)
	b = append(b, `{"_rid":`...)
	b = append(b, jsonString(rid)...)
	b = append(b, `,"`...)
	b = append(b, field...)
	b = append(b, `":[`...)
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	b = append(b, `],"_count":`...)
	b = strconv.AppendInt(b, int64(len(rows)), 10)
	b = append(b, '}')
	setCharge(c, pageCharge(n-len(rows)))
	h := c.Writer.Header()
	h.Set(hdrItemCount, strconv.Itoa(len(rows)))
	if continuation != "" {
		h.Set(hdrContinuation, continuation)
	}
	writeJSON(c, http.StatusOK, b)
}
