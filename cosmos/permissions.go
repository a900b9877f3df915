package cosmos

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// The life of a resource token: x-ms-documentdb-expiry-seconds on the
// request that issues it, an hour unless told, at most five hours (CO-8).
const (
	hdrExpirySeconds   = "x-ms-documentdb-expiry-seconds"
	defaultTokenLife   = 3600 * time.Second
	maxTokenLifeSecond = 18000
)

// permissionPolicy is a permission entity's policy: its items are the
// tokens it issued, each with its own life, dropped when it runs out, an
// event of rule CO-8.
var permissionPolicy = core.Policy{Base: core.FromModified, Rules: core.RuleIDs{ItemTTL: "CO-8", Expire: "CO-8"}}

// access is what a permission grants: its mode, the link of its resource
// (a container or something in one, by ids or _rids) and the partition key
// it is limited to, as canonical JSON ("" for none).
type access struct {
	Mode string `json:"m"`
	Link string `json:"r"`
	PK   string `json:"k,omitempty"`
}

// accessOf reads a permission's properties from its resource o, with the
// service's 400s.
func accessOf(o *query.Object) (access, error) {
	var missing []string
	mode, ok := getString(o, "permissionMode")
	if !ok {
		missing = append(missing, "permissionMode")
	}
	link, ok := getString(o, "resource")
	if !ok {
		missing = append(missing, "resource")
	}
	if len(missing) > 0 {
		return access{}, errorf(http.StatusBadRequest, "The input content is invalid because the required properties - '%s; ' - are missing", strings.Join(missing, "; "))
	}
	switch {
	case strings.EqualFold(mode, "Read"):
		mode = "Read"
	case strings.EqualFold(mode, "All"):
		mode = "All"
	default:
		return access{}, errorf(http.StatusBadRequest, "The permission mode '%s' is invalid: use Read or All.", mode)
	}
	if _, ok := splitResourceLink(link); !ok {
		return access{}, errorf(http.StatusBadRequest, "The resource link '%s' of the permission is invalid: give a container's link, or one of a document, stored procedure, trigger or user defined function in it.", link)
	}
	a := access{Mode: mode, Link: link}
	if v, ok := o.Get("resourcePartitionKey"); ok && v != nil {
		arr, ok := v.([]any)
		if !ok {
			return access{}, errorf(http.StatusBadRequest, "The resourcePartitionKey of the permission is invalid: give an array of the partition key's values.")
		}
		a.PK = string(query.AppendJSON(nil, arr))
	}
	return a, nil
}

// splitResourceLink returns the segments of a permission's resource link,
// "dbs/{db}/colls/{coll}" and an optional "/{docs|sprocs|triggers|udfs}/{id}",
// leading and trailing '/' aside.
func splitResourceLink(link string) ([]string, bool) {
	segs := strings.Split(strings.Trim(link, "/"), "/")
	if len(segs) != 4 && len(segs) != 6 || segs[0] != "dbs" || segs[2] != "colls" {
		return nil, false
	}
	if len(segs) == 6 {
		switch segs[4] {
		case "docs", "sprocs", "triggers", "udfs":
		default:
			return nil, false
		}
	}
	for _, s := range segs {
		if s == "" {
			return nil, false
		}
	}
	return segs, true
}

// tokenLife reads x-ms-documentdb-expiry-seconds: 1 to 18,000 seconds;
// anything else is the service's 400.
func tokenLife(c *gin.Context) (time.Duration, error) {
	h := rqExpirySeconds.of(c)
	if h == "" {
		return defaultTokenLife, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || n < 1 || n > maxTokenLifeSecond {
		return 0, errorf(http.StatusBadRequest, "Value '%s' specified for the header '%s' is invalid.", h, hdrExpirySeconds)
	}
	return time.Duration(n) * time.Second, nil
}

// permissionMeta stamps a permission's resource o with _rid rid.
func (s *Server) permissionMeta(o *query.Object, rid []byte) meta {
	self := "dbs/" + ridText(rid[:4]) + "/users/" + ridText(rid[:8]) + "/permissions/" + ridText(rid) + "/"
	stamp(o, ridText(rid), self, s.etags.next(), "", nil, s.now())
	return meta{RID: rid, Resource: query.AppendJSON(nil, o)}
}

// permissionEntity makes the entity of permission m, of access a, at k
// under user.
func permissionEntity(k core.EntityKey, user string, m meta, a access) (core.Entity, error) {
	mb, err := json.Marshal(m)
	if err != nil {
		return core.Entity{}, err
	}
	settings := []core.Setting{{Key: "permissionMode", Value: a.Mode}, {Key: "resource", Value: a.Link}}
	if a.PK != "" {
		settings = append(settings, core.Setting{Key: "resourcePartitionKey", Value: a.PK})
	}
	return core.Entity{EntityKey: k, Kind: kindPermission, Parent: user, Durable: true,
		Policy: permissionPolicy, Settings: settings, Meta: mb}, nil
}

// postPermissions answers POST /dbs/{db}/users/{user}/permissions: a
// create, an upsert or a query.
func (s *Server) postPermissions(c *gin.Context) {
	user, err := s.lookup(userKey(param(c, "db"), param(c, "user")), kindUser)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if isQuery(c) {
		s.queryResources(c, user.rid(), "Permissions", s.resourceDocs(kindPermission, user.en.Name))
		return
	}
	life, o, id, a, err := readPermission(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	k := permKey(user.en.Name, id)
	status := http.StatusCreated
	var m meta
	if old, err := s.lookup(k, kindPermission); err == nil && isUpsert(c) {
		status = http.StatusOK
		m, err = s.replacePermission(c.Request.Context(), user, old, o, id, a)
		if err != nil {
			s.writeError(c, err)
			return
		}
	} else {
		m = s.permissionMeta(o, newRID(user.meta.RID, 8))
		en, err := permissionEntity(k, user.en.Name, m, a)
		if err == nil {
			_, err = s.cfg.Engine.CreateDurable(c.Request.Context(), s.now(), en)
		}
		if err != nil {
			s.writeError(c, err)
			return
		}
	}
	s.writePermission(c, status, k, m, a, life, true)
}

// readPermission reads a permission's create, upsert or replace: the
// life of the token to issue (x-ms-documentdb-expiry-seconds), the body,
// its id and the access it grants.
func readPermission(c *gin.Context) (life time.Duration, o *query.Object, id string, a access, err error) {
	if life, err = tokenLife(c); err != nil {
		return
	}
	if o, id, err = readNamed(c); err != nil {
		return
	}
	a, err = accessOf(o)
	return
}

// writePermission answers permission m of entity k with a token of life
// life issued for it.
func (s *Server) writePermission(c *gin.Context, status int, k core.EntityKey, m meta, a access, life time.Duration, write bool) {
	token, err := s.issueToken(c.Request.Context(), k, m.RID, a, life)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeResource(c, status, etagOf(m.Resource), withToken(m.Resource, token), write)
}

// withToken returns a permission's resource with its _token.
func withToken(resource []byte, token string) []byte {
	i := strings.LastIndexByte(string(resource), '}')
	if i < 0 {
		return resource
	}
	out := make([]byte, 0, len(resource)+len(token)+16)
	out = append(out, resource[:i]...)
	out = append(out, `,"_token":`...)
	out = append(out, jsonString(token)...)
	return append(out, resource[i:]...)
}

// listPermissions answers GET /dbs/{db}/users/{user}/permissions, each
// with a new token.
func (s *Server) listPermissions(c *gin.Context) {
	user, err := s.lookup(userKey(param(c, "db"), param(c, "user")), kindUser)
	if err != nil {
		s.writeError(c, err)
		return
	}
	life, err := tokenLife(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var rows [][]byte
	for _, in := range s.children(kindPermission, user.en.Name) {
		r, err := s.lookup(in.EntityKey, kindPermission)
		if err != nil {
			continue
		}
		a, err := storedAccess(r.meta.Resource)
		if err != nil {
			s.writeError(c, err)
			return
		}
		token, err := s.issueToken(c.Request.Context(), in.EntityKey, r.meta.RID, a, life)
		if err != nil {
			s.writeError(c, err)
			return
		}
		rows = append(rows, withToken(r.meta.Resource, token))
	}
	writeFeed(c, user.rid(), "Permissions", rows, "")
}

// storedAccess reads the access of a stored permission's resource.
func storedAccess(resource []byte) (access, error) {
	o, err := decodeObject(resource)
	if err != nil {
		return access{}, err
	}
	return accessOf(o)
}

// getPermission answers GET .../permissions/{perm} with a new token.
func (s *Server) getPermission(c *gin.Context) {
	k := permKey(userKey(param(c, "db"), param(c, "user")).Name, param(c, "perm"))
	r, err := s.lookup(k, kindPermission)
	if err != nil {
		s.writeError(c, err)
		return
	}
	life, err := tokenLife(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	a, err := storedAccess(r.meta.Resource)
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.writePermission(c, http.StatusOK, k, r.meta, a, life, false)
}

// putPermission answers PUT .../permissions/{perm}: new properties, and
// another id renames it.
func (s *Server) putPermission(c *gin.Context) {
	user, err := s.lookup(userKey(param(c, "db"), param(c, "user")), kindUser)
	if err != nil {
		s.writeError(c, err)
		return
	}
	old, err := s.lookup(permKey(user.en.Name, param(c, "perm")), kindPermission)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if !ifMatch(rqIfMatch.of(c), etagOf(old.meta.Resource)) {
		s.writeError(c, errPrecondition())
		return
	}
	life, o, id, a, err := readPermission(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	m, err := s.replacePermission(c.Request.Context(), user, old, o, id, a)
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.writePermission(c, http.StatusOK, permKey(user.en.Name, id), m, a, life, true)
}

// replacePermission gives permission old of user the resource o with id
// id and access a, keeping its _rid; another id moves it to an entity of
// the new name, with the tokens it issued.
func (s *Server) replacePermission(ctx context.Context, user, old *resource, o *query.Object, id string, a access) (meta, error) {
	m := s.permissionMeta(o, old.meta.RID)
	k := permKey(user.en.Name, id)
	en, err := permissionEntity(k, user.en.Name, m, a)
	if err != nil {
		return meta{}, err
	}
	if k != old.en.EntityKey {
		return m, s.moveEntity(ctx, old.en, en)
	}
	_, commit, err := s.cfg.Engine.Update(s.now(), k, func(cur *core.Entity) error {
		cur.Settings, cur.Meta = en.Settings, en.Meta
		return nil
	})
	if err == nil {
		err = commit.Wait(ctx)
	}
	return m, err
}

// deletePermission answers DELETE .../permissions/{perm}: its tokens no
// longer serve.
func (s *Server) deletePermission(c *gin.Context) {
	k := permKey(userKey(param(c, "db"), param(c, "user")).Name, param(c, "perm"))
	if _, err := s.lookup(k, kindPermission); err != nil {
		s.writeError(c, err)
		return
	}
	if err := s.deleteEntities(c.Request.Context(), k); err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
	c.Writer.WriteHeaderNow()
}
