package cosmos

import (
	"strconv"

	"github.com/gin-gonic/gin"
)

// The request charge lapse answers in x-ms-request-charge is a model of
// the service's, from its documented figures: a point read of a 1 KB item
// costs 1 RU and a write of it about 5, and both grow with the item's size.
// lapse charges:
//   - a point read: 1 RU per started KB of the item (at least 1);
//   - a create, replace, upsert, patch or delete: 5 RU per started KB of
//     the item written or deleted (at least 5);
//   - a query or feed page: 2 RU plus 1 per started KB of its rows;
//   - a transactional batch or bulk request: the sum of its operations'.
//   - anything else (databases, containers, offers, an unchanged read):
//     1 RU.
// Nothing is throttled against it: it is only told, so that code that
// logs or sums charges sees figures that move as the service's do.

// Charges of lapse's model, in RU.
const (
	readRUPerKB  = 1
	writeRUPerKB = 5
	pageBaseRU   = 2
	pageRUPerKB  = 1
)

// startedKB is how many started kilobytes size bytes span.
func startedKB(size int) int { return (size + 1023) / 1024 }

// readCharge is the charge of a point read of an item of size bytes.
func readCharge(size int) float64 { return float64(readRUPerKB * max(1, startedKB(size))) }

// writeCharge is the charge of a write or delete of an item of size bytes.
func writeCharge(size int) float64 { return float64(writeRUPerKB * max(1, startedKB(size))) }

// pageCharge is the charge of a query or feed page of size bytes of rows.
func pageCharge(size int) float64 { return float64(pageBaseRU + pageRUPerKB*startedKB(size)) }

// setCharge sets the response's request charge to ru.
func setCharge(c *gin.Context, ru float64) {
	v := ""
	if n := int(ru); float64(n) == ru && n >= 0 && n < len(smallCharges) {
		v = smallCharges[n]
	} else {
		v = strconv.FormatFloat(ru, 'f', -1, 64)
	}
	h := c.Writer.Header()
	if vs := h[requestChargeKey]; len(vs) == 1 {
		vs[0] = v // common's slice, this response's own
		return
	}
	h[requestChargeKey] = []string{v}
}

// requestChargeKey is x-ms-request-charge's key in an http.Header, as the
// service writes it (common's).
const requestChargeKey = hdrRequestCharge

// smallCharges are the texts of the whole charges most requests have, so
// that setting one allocates no string.
var smallCharges = func() (out [64]string) {
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}()
