package cosmos

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// Users and their permissions are core entities, as databases and
// containers are (docs/architecture.md: everything a protocol keeps goes
// through core): a user "db/users/u" under its database, a permission
// "db/users/u/permissions/p" under its user. Ids cannot hold '/', so
// neither name can be a container's "db/coll". A permission's items are
// the resource tokens it issued, each expiring on lapse's clock (CO-8,
// tokens.go).
const (
	kindUser       = "user"
	kindPermission = "permission"
)

// userKey and permKey name the entities of a user and a permission.
func userKey(db, user string) core.EntityKey {
	return core.EntityKey{Protocol: core.Cosmos, Name: db + "/users/" + user}
}
func permKey(userName, perm string) core.EntityKey {
	return core.EntityKey{Protocol: core.Cosmos, Name: userName + "/permissions/" + perm}
}

// isAccessEntity reports whether an entity name is a user's or a
// permission's: no container's name holds "/users/".
func isAccessEntity(name string) bool { return strings.Contains(name, "/users/") }

// userRID returns a new user _rid: its database's 4 bytes and 4 of its
// own whose first byte has the top bit clear, which is how the SDKs tell
// a user's 8-byte _rid from a container's (newRID).
func userRID(db []byte) []byte {
	b := newRID(db, 4)
	b[4] &^= 0x80
	return b
}

// postUsers answers POST /dbs/{db}/users: a create, an upsert or a query.
func (s *Server) postUsers(c *gin.Context) {
	db, err := s.lookup(dbKey(param(c, "db")), kindDatabase)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if isQuery(c) {
		s.queryResources(c, db.rid(), "Users", s.resourceDocs(kindUser, db.en.Name))
		return
	}
	o, id, err := readNamed(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	k := userKey(db.en.Name, id)
	if isUpsert(c) {
		if old, err := s.lookup(k, kindUser); err == nil {
			m, err := s.replaceUser(c.Request.Context(), db, old, o, id)
			if err != nil {
				s.writeError(c, err)
				return
			}
			writeResource(c, http.StatusOK, etagOf(m.Resource), m.Resource, true)
			return
		}
	}
	rid := userRID(db.meta.RID)
	m := s.userMeta(o, rid)
	mb, err := json.Marshal(m)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if _, err := s.cfg.Engine.CreateDurable(c.Request.Context(), s.now(), core.Entity{
		EntityKey: k, Kind: kindUser, Parent: db.en.Name, Durable: true, Meta: mb,
	}); err != nil {
		s.writeError(c, err)
		return
	}
	writeResource(c, http.StatusCreated, etagOf(m.Resource), m.Resource, true)
}

// userMeta stamps a user's resource o with _rid rid and the service's
// system properties.
func (s *Server) userMeta(o *query.Object, rid []byte) meta {
	self := "dbs/" + ridText(rid[:4]) + "/users/" + ridText(rid) + "/"
	stamp(o, ridText(rid), self, s.etags.next(), "", []string{"_permissions", "permissions/"}, s.now())
	return meta{RID: rid, Resource: query.AppendJSON(nil, o)}
}

// listUsers answers GET /dbs/{db}/users.
func (s *Server) listUsers(c *gin.Context) {
	db, err := s.lookup(dbKey(param(c, "db")), kindDatabase)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeFeed(c, db.rid(), "Users", s.resourceDocs(kindUser, db.en.Name), "")
}

// getUser answers GET /dbs/{db}/users/{user}.
func (s *Server) getUser(c *gin.Context) {
	r, err := s.lookup(userKey(param(c, "db"), param(c, "user")), kindUser)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeResource(c, http.StatusOK, etagOf(r.meta.Resource), r.meta.Resource, false)
}

// putUser answers PUT /dbs/{db}/users/{user}: the body may give the user
// another id, which renames it, its permissions with it.
func (s *Server) putUser(c *gin.Context) {
	db, err := s.lookup(dbKey(param(c, "db")), kindDatabase)
	if err != nil {
		s.writeError(c, err)
		return
	}
	old, err := s.lookup(userKey(db.en.Name, param(c, "user")), kindUser)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if !ifMatch(rqIfMatch.of(c), etagOf(old.meta.Resource)) {
		s.writeError(c, errPrecondition())
		return
	}
	o, id, err := readNamed(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	m, err := s.replaceUser(c.Request.Context(), db, old, o, id)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeResource(c, http.StatusOK, etagOf(m.Resource), m.Resource, true)
}

// replaceUser gives user old the resource o with id id, keeping its _rid:
// under another id, the user and its permissions move to entities of the
// new name.
func (s *Server) replaceUser(ctx context.Context, db, old *resource, o *query.Object, id string) (meta, error) {
	m := s.userMeta(o, old.meta.RID)
	mb, err := json.Marshal(m)
	if err != nil {
		return meta{}, err
	}
	k := userKey(db.en.Name, id)
	if k == old.en.EntityKey {
		_, commit, err := s.cfg.Engine.Update(s.now(), k, func(en *core.Entity) error {
			en.Meta = mb
			return nil
		})
		if err == nil {
			err = commit.Wait(ctx)
		}
		return m, err
	}
	en := old.en
	en.EntityKey, en.Meta = k, mb
	if _, err := s.cfg.Engine.CreateDurable(ctx, s.now(), en); err != nil {
		return meta{}, err
	}
	for _, in := range s.children(kindPermission, old.en.Name) {
		to := in.Entity
		to.EntityKey, to.Parent = permKey(k.Name, strings.TrimPrefix(in.Name, old.en.Name+"/permissions/")), k.Name
		if err := s.moveEntity(ctx, in.Entity, to); err != nil {
			return meta{}, err
		}
	}
	return m, s.deleteEntities(ctx, old.en.EntityKey)
}

// children returns the entities of kind kind under parent, oldest first.
func (s *Server) children(kind, parent string) []core.EntityInfo {
	var out []core.EntityInfo
	for _, in := range s.cfg.Engine.Entities(s.now(), core.Cosmos) {
		if in.Kind == kind && in.Parent == parent {
			out = append(out, in)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out
}

// moveEntity makes entity to, with the live items of entity en (a
// permission's tokens) and the time each has left, and deletes en.
func (s *Server) moveEntity(ctx context.Context, en, to core.Entity) error {
	now := s.now()
	items, err := s.cfg.Engine.Items(now, en.EntityKey, 0)
	if err != nil {
		return err
	}
	k := to.EntityKey
	if _, err := s.cfg.Engine.CreateDurable(ctx, now, to); err != nil {
		return err
	}
	for _, it := range items {
		left := it.DueAt.Sub(now)
		if it.DueAt.IsZero() || left <= 0 {
			continue
		}
		_, commit, err := s.cfg.Engine.Put(now, k, core.Item{Key: it.Key, Body: it.Body, Meta: it.Meta,
			TTL: core.After(left), Persistent: it.Persistent})
		if err == nil {
			err = commit.Wait(ctx)
		}
		if err != nil {
			return err
		}
	}
	return s.deleteEntities(ctx, en.EntityKey)
}

// deleteEntities deletes the entities keys, and waits until that is
// stored.
func (s *Server) deleteEntities(ctx context.Context, keys ...core.EntityKey) error {
	now := s.now()
	var commits []*core.Commit
	for _, k := range keys {
		commit, err := s.cfg.Engine.Delete(now, k)
		if err != nil {
			return err
		}
		commits = append(commits, commit)
	}
	for _, commit := range commits {
		if err := commit.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// deleteUser answers DELETE /dbs/{db}/users/{user}: it goes with its
// permissions, whose tokens no longer serve.
func (s *Server) deleteUser(c *gin.Context) {
	k := userKey(param(c, "db"), param(c, "user"))
	if _, err := s.lookup(k, kindUser); err != nil {
		s.writeError(c, err)
		return
	}
	var keys []core.EntityKey
	for _, in := range s.children(kindPermission, k.Name) {
		keys = append(keys, in.EntityKey)
	}
	if err := s.deleteEntities(c.Request.Context(), append(keys, k)...); err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
	c.Writer.WriteHeaderNow()
}

// accessEntities returns the keys of the users and permissions of database
// db, which go with it.
func (s *Server) accessEntities(db string, now time.Time) []core.EntityKey {
	var out []core.EntityKey
	for _, in := range s.cfg.Engine.Entities(now, core.Cosmos) {
		if in.Kind == kindUser && in.Parent == db || in.Kind == kindPermission && strings.HasPrefix(in.Parent, db+"/users/") {
			out = append(out, in.EntityKey)
		}
	}
	return out
}
