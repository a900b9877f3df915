package cosmos

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"hash"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// maxClockSkew is how far a request's x-ms-date may be from the wall clock,
// as the service allows.
const maxClockSkew = 15 * time.Minute

// authorize checks the master-key signature of every request: an HMAC-SHA256
// with the account key of the verb, resource type, resource link and date
// (the REST API's "Access control on Cosmos DB resources"). A missing or
// wrong signature is a 401, one whose date is too far from the wall clock a
// 403 (an expired token), and the request goes no further. A request
// signed with a permission's resource token is allowed what the
// permission grants until the token expires on lapse's clock (allowToken).
func (s *Server) authorize() gin.HandlerFunc {
	return func(c *gin.Context) {
		auth := rqAuthorization.of(c)
		if auth == "" {
			s.writeError(c, errorf(http.StatusUnauthorized, "Required Header authorization is missing. Ensure a valid Authorization token is passed."))
			return
		}
		var buf [160]byte // the text of a master token, on the stack
		text := authText(buf[:0], auth)
		if cl, ok, valid := s.readToken(text); ok {
			// A resource token carries its own validity, on lapse's
			// clock; the SDKs send no date with it.
			err := errTokenInvalid()
			if valid {
				err = s.allowToken(c, cl)
			}
			if err != nil {
				s.writeError(c, err)
				return
			}
			c.Next()
			return
		}
		date := rqMsDate.of(c)
		if date == "" {
			date = rqDate.of(c)
		}
		if date == "" {
			s.writeError(c, errorf(http.StatusUnauthorized, "The request is missing the required header x-ms-date."))
			return
		}
		t, err := s.parseDate(date)
		if err != nil {
			s.writeError(c, errorf(http.StatusUnauthorized, "The date header value '%s' is invalid. Please use RFC 1123 format.", date))
			return
		}
		if wall := s.cfg.WallNow(); t.Before(wall.Add(-maxClockSkew)) || t.After(wall.Add(maxClockSkew)) {
			// An expired token is the service's 403, not a 401.
			s.writeError(c, errorf(http.StatusForbidden,
				"The authorization token is not valid at the current time. Please create another token and retry (token start time: %s, token expiry time: %s, current server time: %s).",
				t.UTC().Format(http.TimeFormat), t.Add(maxClockSkew).UTC().Format(http.TimeFormat), wall.UTC().Format(http.TimeFormat)))
			return
		}
		if id := param(c, "id"); id != "" {
			if err := unaddressable(id); err != nil {
				s.writeError(c, err)
				return
			}
		}
		typ, link := resourceOf(c)
		if l, ok := ridLink(c.Request); ok {
			link = l
		}
		payload := appendPayload(make([]byte, 0, len(c.Request.Method)+len(typ)+len(link)+len(date)+5), c.Request.Method, typ, link, date)
		if !s.checkedSignature(c.Request, payload) && !s.signatureOK(text, payload) {
			s.writeError(c, errorf(http.StatusUnauthorized,
				"The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol. For more info: https://aka.ms/cosmosdb-tsg-mac-token. Server used the following payload to sign: '%s'",
				payload))
			return
		}
		c.Next()
	}
}

// appendPayload appends to b the text a master token signs: the verb,
// the resource type, the resource link and the date, the verb and the
// date lower-cased, each followed by a line feed, and an empty line.
func appendPayload(b []byte, verb, typ, link, date string) []byte {
	b = appendLower(b, verb)
	b = append(b, '\n')
	b = append(b, typ...)
	b = append(b, '\n')
	b = append(b, link...)
	b = append(b, '\n')
	b = appendLower(b, date)
	return append(b, "\n\n"...)
}

// appendLower appends s to b lower-cased, as strings.ToLower does.
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(b, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		b = append(b, ch)
	}
	return b
}

// authText appends to buf an Authorization header's text, unescaped: the
// SDKs send a master token query-escaped, and a resource token as the
// service handed it out, escaped or not. A header that is not a valid
// escape is its own text.
func authText(buf []byte, auth string) []byte {
	if strings.HasPrefix(auth, "type=resource") {
		return append(buf, auth...)
	}
	start := len(buf)
	for i := 0; i < len(auth); i++ {
		switch ch := auth[i]; ch {
		case '%':
			if i+2 >= len(auth) || !isHex(auth[i+1]) || !isHex(auth[i+2]) {
				return append(buf[:start], auth...)
			}
			buf = append(buf, unhex(auth[i+1])<<4|unhex(auth[i+2]))
			i += 2
		case '+':
			buf = append(buf, ' ')
		default:
			buf = append(buf, ch)
		}
	}
	return buf
}

// unhex is the value of c, a hex digit.
func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// parsedDate is a request's date header and its time.
type parsedDate struct {
	text string
	t    time.Time
}

// parseDate parses a request's date as http.ParseTime does. An SDK dates
// its requests to the second, so most have the date of the one before:
// that one is kept, as parsing it anew was a fortieth of a point read's
// time in lapse (pprof).
func (s *Server) parseDate(date string) (time.Time, error) {
	if p := s.lastDate.Load(); p != nil && p.text == date {
		return p.t, nil
	}
	t, err := http.ParseTime(date)
	if err == nil {
		s.lastDate.Store(&parsedDate{text: date, t: t})
	}
	return t, err
}

// signatureOK reports whether auth, an Authorization header's text
// (authText), is a master token whose signature of payload is made with
// the account key.
func (s *Server) signatureOK(auth, payload []byte) bool {
	var typ, sig []byte
	for rest := auth; len(rest) > 0; {
		var part []byte
		part, rest, _ = bytes.Cut(rest, []byte("&"))
		k, v, _ := bytes.Cut(part, []byte("="))
		switch string(k) {
		case "type":
			typ = v
		case "sig":
			sig = v
		}
	}
	if string(typ) == "aad" {
		return s.emulatorTokenOK(string(sig))
	}
	if string(typ) != "master" || len(sig) == 0 {
		return false
	}
	var sum [sha256.Size]byte
	var got [64]byte // on the stack: a signature takes 33 bytes to decode
	if base64.StdEncoding.DecodedLen(len(sig)) > len(got) {
		return false
	}
	n, err := base64.StdEncoding.Decode(got[:], sig)
	if err != nil {
		return false
	}
	mac, _ := s.macs.Get().(hash.Hash)
	if mac == nil {
		mac = hmac.New(sha256.New, s.key)
	}
	mac.Reset()
	mac.Write(payload)
	ok := hmac.Equal(got[:n], mac.Sum(sum[:0]))
	s.macs.Put(mac)
	return ok
}

// emulatorTokenOK reports whether token is a Microsoft Entra ID token as
// the official emulator takes them (type=aad): a JWT whose signature part
// is the account key itself, base64url-encoded, valid now by its nbf and
// exp. The SDKs' own emulator tests sign in that way.
func (s *Server) emulatorTokenOK(token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	key, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[2], "="))
	if err != nil || !hmac.Equal(key, []byte(s.cfg.Key)) {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return false
	}
	var claims struct {
		NotBefore *float64 `json:"nbf"`
		Expires   *float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Expires == nil {
		return false
	}
	now := float64(s.cfg.WallNow().Unix())
	skew := maxClockSkew.Seconds()
	return now <= *claims.Expires+skew && (claims.NotBefore == nil || now >= *claims.NotBefore-skew)
}

// resourceOf returns the resource type and link a request is signed for: an
// item's own link, a feed's parent link, and offers' ids lower-cased.
func resourceOf(c *gin.Context) (typ, link string) {
	db, coll := param(c, "db"), param(c, "coll")
	switch path := c.FullPath(); {
	case path == "/":
		return "", ""
	case path == "/dbs":
		return "dbs", ""
	case path == "/dbs/:db":
		return "dbs", "dbs/" + db
	case path == "/dbs/:db/colls":
		return "colls", "dbs/" + db
	case path == "/dbs/:db/colls/:coll":
		return "colls", "dbs/" + db + "/colls/" + coll
	case path == "/dbs/:db/colls/:coll/pkranges":
		return "pkranges", "dbs/" + db + "/colls/" + coll
	case path == "/dbs/:db/colls/:coll/operations/partitionkeydelete":
		return "colls", "dbs/" + db + "/colls/" + coll
	case path == "/dbs/:db/colls/:coll/conflicts":
		return "conflicts", "dbs/" + db + "/colls/" + coll
	case path == "/dbs/:db/colls/:coll/conflicts/:conflict":
		return "conflicts", "dbs/" + db + "/colls/" + coll + "/conflicts/" + param(c, "conflict")
	case path == "/dbs/:db/colls/:coll/docs":
		return "docs", "dbs/" + db + "/colls/" + coll
	case path == "/dbs/:db/colls/:coll/docs/:id":
		return "docs", "dbs/" + db + "/colls/" + coll + "/docs/" + param(c, "id")
	case path == "/dbs/:db/users":
		return "users", "dbs/" + db
	case path == "/dbs/:db/users/:user":
		return "users", "dbs/" + db + "/users/" + param(c, "user")
	case path == "/dbs/:db/users/:user/permissions":
		return "permissions", "dbs/" + db + "/users/" + param(c, "user")
	case path == "/dbs/:db/users/:user/permissions/:perm":
		return "permissions", "dbs/" + db + "/users/" + param(c, "user") + "/permissions/" + param(c, "perm")
	case scriptPath(path) != "":
		kind := scriptPath(path)
		if strings.HasSuffix(path, "/:id") {
			return kind, "dbs/" + db + "/colls/" + coll + "/" + kind + "/" + param(c, "id")
		}
		return kind, "dbs/" + db + "/colls/" + coll
	case path == "/offers":
		return "offers", ""
	case path == "/offers/:offer":
		return "offers", strings.ToLower(param(c, "offer"))
	}
	return "", ""
}
