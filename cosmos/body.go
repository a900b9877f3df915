package cosmos

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// readBody reads a request body of at most maxItemSize bytes; more is the
// service's 413.
func readBody(c *gin.Context) ([]byte, error) {
	r := http.MaxBytesReader(c.Writer, c.Request.Body, maxItemSize+1)
	var (
		b   []byte
		err error
	)
	if n := c.Request.ContentLength; n > 0 && n <= maxItemSize {
		// One buffer of the announced size: net/http's body ends there.
		b = make([]byte, n)
		_, err = io.ReadFull(r, b)
	} else {
		b, err = io.ReadAll(r)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge) || len(b) > maxItemSize:
		return nil, errTooLarge()
	case err != nil:
		return nil, errorf(http.StatusBadRequest, "The request body could not be read.")
	}
	return b, nil
}

// readObject reads a request body that must be a JSON object.
func readObject(c *gin.Context) (*query.Object, error) {
	b, err := readBody(c)
	if err != nil {
		return nil, err
	}
	return decodeObject(b)
}

// readNamed reads the body of a resource that has a name (a user, a
// permission, a script): a JSON object and its checked id.
func readNamed(c *gin.Context) (*query.Object, string, error) {
	o, err := readObject(c)
	if err != nil {
		return nil, "", err
	}
	id, err := checkName(o)
	return o, id, err
}

// isUpsert reports whether a POST asks for an upsert.
func isUpsert(c *gin.Context) bool {
	return strings.EqualFold(rqIsUpsert.of(c), "true")
}

// decodeObject decodes a JSON object, or answers the service's 400.
func decodeObject(b []byte) (*query.Object, error) {
	v, err := query.Decode(b)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "The request payload is invalid. Ensure to provide a valid request payload.")
	}
	o, ok := v.(*query.Object)
	if !ok {
		return nil, errorf(http.StatusBadRequest, "The request payload is invalid. Ensure to provide a valid request payload.")
	}
	return o, nil
}
