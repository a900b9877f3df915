package cosmos

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// A resource token is "type=resource&ver=1.0&sig=SIG;CLAIMS": CLAIMS the
// base64url JSON of tokenClaims, SIG the base64url HMAC-SHA256 of them
// with the account key. Signed, it needs nothing stored to be checked, so
// it still serves after a restart; its expiry is read on lapse's clock
// (CO-8). Each token issued is also an item of its permission's entity,
// with the token's life as its TTL: the engine expires it at the token's
// expiry like every other item, which makes the expiry an event of rule
// CO-8 in the control API's log and on the dashboard (EM-2,
// docs/architecture.md), at no cost to the requests that use the token.

// tokenPrefix starts every resource token.
const tokenPrefix = "type=resource&ver=1.0&sig="

// tokenClaims is what a resource token says: the permission that issued it
// (its entity's name then and its _rid), what it grants, and when it was
// issued and expires, in Unix milliseconds of lapse's clock.
type tokenClaims struct {
	Entity string `json:"n"`
	RID    string `json:"p"`
	access
	Issued  int64  `json:"i"`
	Expires int64  `json:"e"`
	ID      string `json:"t"`
}

// issueToken makes a token of permission k (_rid rid, access a) that lasts
// life from now on lapse's clock, and keeps it as an item of k that
// expires with it.
func (s *Server) issueToken(ctx context.Context, k core.EntityKey, rid []byte, a access, life time.Duration) (string, error) {
	now := s.now()
	var id [12]byte
	rand.Read(id[:])
	cl := tokenClaims{Entity: k.Name, RID: ridText(rid), access: a, Issued: now.UnixMilli(),
		Expires: now.Add(life).UnixMilli(), ID: base64.RawURLEncoding.EncodeToString(id[:])}
	payload, err := json.Marshal(cl)
	if err != nil {
		return "", err
	}
	body := `{"issued":` + jsonString(now.UTC().Format(time.RFC3339Nano)) + `,"expires":` + jsonString(now.Add(life).UTC().Format(time.RFC3339Nano)) + `}`
	_, commit, err := s.cfg.Engine.Put(now, k, core.Item{Key: cl.ID, Body: []byte(body), TTL: core.After(life), Persistent: true})
	if err == nil {
		err = commit.Wait(ctx)
	}
	if err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(s.tokenMAC(payload)) + ";" +
		base64.RawURLEncoding.EncodeToString(payload), nil
}

// tokenMAC is the signature of a token's claims.
func (s *Server) tokenMAC(payload []byte) []byte {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte("resource\n"))
	mac.Write(payload)
	return mac.Sum(nil)
}

// readToken returns the claims of auth, an Authorization header's text
// (authText), when it is a resource token (ok); valid says whether its
// signature is the account key's.
func (s *Server) readToken(auth []byte) (cl tokenClaims, ok, valid bool) {
	if !bytes.HasPrefix(auth, []byte("type=resource")) {
		return cl, false, false
	}
	rest, ok := strings.CutPrefix(string(auth), tokenPrefix)
	if !ok {
		return cl, true, false
	}
	sig, claims, _ := strings.Cut(strings.TrimSuffix(rest, ";"), ";")
	got, err1 := base64.RawURLEncoding.DecodeString(sig)
	payload, err2 := base64.RawURLEncoding.DecodeString(claims)
	if err1 != nil || err2 != nil || !hmac.Equal(got, s.tokenMAC(payload)) || json.Unmarshal(payload, &cl) != nil {
		return cl, true, false
	}
	return cl, true, true
}

// Errors of requests signed with a resource token, as the service words
// them.
func errTokenRefused() *apiError {
	return errorf(http.StatusForbidden, "Insufficient permissions provided in the authorization header for the corresponding request. Please retry with another authorization header.")
}

func errTokenInvalid() *apiError {
	return errorf(http.StatusUnauthorized, "The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol. For more info: https://aka.ms/cosmosdb-tsg-mac-token")
}

// errTokenExpired is the service's 403 for a token past its expiry.
func errTokenExpired(cl tokenClaims, now time.Time) *apiError {
	return errorf(http.StatusForbidden,
		"The authorization token is not valid at the current time. Please create another token and retry (token start time: %s, token expiry time: %s, current server time: %s).",
		time.UnixMilli(cl.Issued).UTC().Format(http.TimeFormat), time.UnixMilli(cl.Expires).UTC().Format(http.TimeFormat), now.UTC().Format(http.TimeFormat))
}

// allowToken decides a request signed with a resource token of claims
// cl: refused when the token expired on lapse's clock (CO-8) or its
// permission is gone, and otherwise allowed what the permission grants on
// its resource, with the metadata reads the SDKs make first.
func (s *Server) allowToken(c *gin.Context, cl tokenClaims) *apiError {
	if now := s.now(); now.UnixMilli() >= cl.Expires || now.UnixMilli() < cl.Issued {
		return errTokenExpired(cl, now)
	}
	if !s.permissionExists(cl.Entity, cl.RID) {
		return errTokenInvalid()
	}
	segs, _ := splitResourceLink(cl.Link)
	path := c.FullPath()
	if path == "/" {
		// The SDKs read the account with whichever token they have.
		return nil
	}
	db := param(c, "db")
	if !s.sameResource(segs[1], kindDatabase, dbKey(db)) {
		return errTokenRefused()
	}
	if path == "/dbs/:db" {
		if c.Request.Method == http.MethodGet {
			return nil
		}
		return errTokenRefused()
	}
	coll := param(c, "coll")
	if coll == "" || !s.sameResource(segs[3], kindContainer, collKey(db, coll)) {
		return errTokenRefused()
	}
	write := false
	switch path {
	case "/dbs/:db/colls/:coll", "/dbs/:db/colls/:coll/pkranges":
		// The container's properties and its ranges, which the SDKs read
		// before they route an item request.
		if c.Request.Method == http.MethodGet {
			return nil
		}
		return errTokenRefused()
	case "/dbs/:db/colls/:coll/docs":
		if c.Request.Method == http.MethodPost {
			if strings.EqualFold(rqIsQueryPlanRequest.of(c), "true") {
				if len(segs) == 4 {
					return nil
				}
				return errTokenRefused()
			}
			write = !isQuery(c)
		}
		if len(segs) != 4 {
			return errTokenRefused()
		}
	case "/dbs/:db/colls/:coll/docs/:id":
		write = c.Request.Method != http.MethodGet
		if len(segs) == 6 && (segs[4] != "docs" || !s.sameDoc(segs[5], db, coll, param(c, "id"))) {
			return errTokenRefused()
		}
	case "/dbs/:db/colls/:coll/conflicts", "/dbs/:db/colls/:coll/conflicts/:conflict":
		write = c.Request.Method == http.MethodDelete
		if len(segs) != 4 {
			return errTokenRefused()
		}
	case "/dbs/:db/colls/:coll/operations/partitionkeydelete":
		write = true
		if len(segs) != 4 {
			return errTokenRefused()
		}
	default:
		return errTokenRefused()
	}
	if write && cl.Mode != "All" {
		return errTokenRefused()
	}
	if cl.PK != "" {
		pk, present, err := parseKeyHeader(c.Request)
		if err != nil || !present || string(query.AppendJSON(nil, []any(pk))) != cl.PK {
			return errTokenRefused()
		}
	}
	return nil
}

// permissionExists reports whether the permission of _rid rid is still
// there: at entity name, or under another name it was renamed to.
func (s *Server) permissionExists(name, rid string) bool {
	if s.entityRID(core.EntityKey{Protocol: core.Cosmos, Name: name}, kindPermission) == rid {
		return true
	}
	for _, in := range s.cfg.Engine.Entities(s.now(), core.Cosmos) {
		if in.Kind == kindPermission && s.entityRID(in.EntityKey, kindPermission) == rid {
			return true
		}
	}
	return false
}

// entityRID returns the _rid text of entity k of kind kind, "" if none.
func (s *Server) entityRID(k core.EntityKey, kind string) string {
	r, err := s.lookup(k, kind)
	if err != nil {
		return ""
	}
	return r.rid()
}

// sameResource reports whether seg, a segment of a permission's resource
// link, names the resource of entity k: by its id or its _rid.
func (s *Server) sameResource(seg, kind string, k core.EntityKey) bool {
	name := k.Name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return seg == name || seg == s.entityRID(k, kind)
}

// sameDoc reports whether seg, the last segment of a permission's link to
// a document, names document id of container db/coll: by its id or _rid.
func (s *Server) sameDoc(seg, db, coll, id string) bool {
	if seg == id {
		return true
	}
	rid, ok := parseRID(seg, docRIDLen)
	if !ok {
		return false
	}
	got, ok := s.docIDOf(collKey(db, coll), rid)
	return ok && got == id
}
