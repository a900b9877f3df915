package cosmos

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// postDatabases creates a database (POST /dbs), or queries them when the
// request is a query.
func (s *Server) postDatabases(c *gin.Context) {
	if isQuery(c) {
		s.queryResources(c, "", "Databases", s.databaseDocs())
		return
	}
	o, err := readObject(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	offer, err := s.offerFromHeaders(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	en, err := s.newDatabase(c.Request.Context(), o, offer)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var m meta
	json.Unmarshal(en.Meta, &m)
	writeResource(c, http.StatusCreated, etagOf(m.Resource), m.Resource, true)
}

// newDatabase makes the database o describes, and waits until it is
// stored.
func (s *Server) newDatabase(ctx context.Context, o *query.Object, offer *offerState) (core.Entity, error) {
	id, err := checkName(o)
	if err != nil {
		return core.Entity{}, err
	}
	now := s.now()
	rid := newRID(nil, 4)
	stamp(o, ridText(rid), "dbs/"+ridText(rid)+"/", s.etags.next(), "", []string{"_colls", "colls/", "_users", "users/"}, now)
	m := meta{RID: rid, Resource: query.AppendJSON(nil, o), Offer: offer}
	mb, err := json.Marshal(m)
	if err != nil {
		return core.Entity{}, err
	}
	return s.cfg.Engine.CreateDurable(ctx, now, core.Entity{
		EntityKey: dbKey(id), Kind: kindDatabase, Durable: true, Meta: mb,
		Settings: offerSettings(offer),
	})
}

// listDatabases answers GET /dbs.
func (s *Server) listDatabases(c *gin.Context) {
	writeFeed(c, "", "Databases", s.databaseDocs(), "")
}

// databaseDocs returns every database's resource, oldest first.
func (s *Server) databaseDocs() [][]byte {
	return s.resourceDocs(kindDatabase, "")
}

// resourceDocs returns the resources of every entity of kind kind (under
// parent, for containers), in creation order.
func (s *Server) resourceDocs(kind, parent string) [][]byte {
	infos := s.cfg.Engine.Entities(s.now(), core.Cosmos)
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].Created.Before(infos[j].Created) })
	var out [][]byte
	for _, in := range infos {
		if in.Kind != kind || in.Parent != parent {
			continue
		}
		var m meta
		if json.Unmarshal(in.Meta, &m) == nil {
			out = append(out, m.Resource)
		}
	}
	return out
}

// getDatabase answers GET /dbs/{db}.
func (s *Server) getDatabase(c *gin.Context) {
	r, err := s.lookup(dbKey(param(c, "db")), kindDatabase)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeResource(c, http.StatusOK, etagOf(r.meta.Resource), r.meta.Resource, false)
}

// deleteDatabase answers DELETE /dbs/{db}: the database goes with its
// containers and their items, its users and their permissions.
func (s *Server) deleteDatabase(c *gin.Context) {
	db := param(c, "db")
	if _, err := s.lookup(dbKey(db), kindDatabase); err != nil {
		s.writeError(c, err)
		return
	}
	now := s.now()
	var commits []*core.Commit
	var gone []core.EntityKey
	for _, in := range s.cfg.Engine.Entities(now, core.Cosmos) {
		if in.Kind == kindContainer && in.Parent == db {
			if commit, err := s.cfg.Engine.Delete(now, in.EntityKey); err == nil {
				commits = append(commits, commit)
				gone = append(gone, in.EntityKey)
			}
		}
	}
	for _, k := range s.accessEntities(db, now) {
		if commit, err := s.cfg.Engine.Delete(now, k); err == nil {
			commits = append(commits, commit)
		}
	}
	commit, err := s.cfg.Engine.Delete(now, dbKey(db))
	if err != nil {
		s.writeError(c, err)
		return
	}
	for _, cm := range append(commits, commit) {
		if err := cm.Wait(c.Request.Context()); err != nil {
			s.writeError(c, err)
			return
		}
	}
	s.forgetVersions(gone...)
	c.Status(http.StatusNoContent)
	c.Writer.WriteHeaderNow()
}

// etagOf reads the _etag of a resource.
func etagOf(resource []byte) string {
	var r struct {
		ETag string `json:"_etag"`
	}
	json.Unmarshal(resource, &r)
	return r.ETag
}
