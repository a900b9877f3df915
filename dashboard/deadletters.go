package dashboard

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// DeadLetterView says why an item was dead-lettered and where from, in its
// protocol's words (core.DeadLetterInfo): "TTLExpiredException" and its
// description, or x-death's "expired"; Source is the entity it goes back
// to when resubmitted.
type DeadLetterView struct {
	Reason      string `json:"reason"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source,omitempty"`
	Rule        string `json:"rule,omitempty"`
}

// DeadLetterEntityView is one entity holding dead letters, as GET
// /api/deadletters shows it: a dead-letter queue (an entity another names
// as its DeadLetterQueue), or an entity some of whose items are dead
// letters (a RabbitMQ queue fed by a dead-letter exchange).
type DeadLetterEntityView struct {
	Protocol string `json:"protocol"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	// Source is the entity the dead letters come from: the entity whose
	// dead-letter queue this is, or the one source all the dead letters
	// found share; "" when they come from several.
	Source string `json:"source,omitempty"`
	// Count is how many dead letters the entity holds; with Partial, how
	// many were found in the part of it that was examined.
	Count   int  `json:"count"`
	Partial bool `json:"partial,omitempty"`
	// Items are the first dead letters, at most the call's limit.
	Items []ItemView `json:"items"`
}

// Bounds of the search for dead letters in entities that are not
// dead-letter queues: the items examined in one entity, and in all.
const (
	deadLetterScanEntity = 5000
	deadLetterScanTotal  = 50000
)

// defaultQueryRows is how many rows a query returns without "max", and
// maxQueryRows the most it returns.
const (
	defaultQueryRows = 100
	maxQueryRows     = 10000
)

// itemRoutes serves the dead letters and the item actions: resubmit,
// purge and queries.
func (s *Server) itemRoutes(api *gin.RouterGroup) {
	api.GET("/deadletters", s.getDeadLetters)
	// As for GET (getItems), the entity name and the action come together
	// and postEntity splits them.
	api.POST("/entities/:protocol/*rest", s.postEntity)
}

// getDeadLetters answers GET /api/deadletters[?protocol=P&limit=N]: every
// entity that holds dead letters, with the first N of them (default 100, 0
// for all).
func (s *Server) getDeadLetters(c *gin.Context) {
	limit, err := itemLimit(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	out, err := s.deadLetterEntities(s.cfg.Clock.Now(), c.Query("protocol"), limit)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// deadLetterEntities finds the entities of protocol ("" for all) that hold
// dead letters, each with its first limit dead letters (0 for all). Every
// item of a dead-letter queue is a dead letter; in other entities of a
// protocol that resubmits dead letters, the protocol's description says
// which items are, and the search examines a bounded number of items
// (deadLetterScanEntity, deadLetterScanTotal).
func (s *Server) deadLetterEntities(now time.Time, protocol string, limit int) ([]DeadLetterEntityView, error) {
	e := s.cfg.Engine
	infos := e.Entities(now, protocol)
	owner := map[core.EntityKey]string{} // dead-letter queue -> the entity it serves
	for _, in := range infos {
		if in.DeadLetterQueue != "" {
			owner[core.EntityKey{Protocol: in.Protocol, Name: in.DeadLetterQueue}] = in.Name
		}
	}
	resubmits := map[string]bool{}
	budget := deadLetterScanTotal
	out := []DeadLetterEntityView{}
	for _, in := range infos {
		n := in.Counts.Active + in.Counts.Scheduled + in.Counts.Locked + in.Counts.Deferred
		if n == 0 {
			continue
		}
		k := in.EntityKey
		v := DeadLetterEntityView{Protocol: k.Protocol, Name: k.Name, Kind: in.Kind}
		if src, ok := owner[k]; ok {
			items, err := e.Items(now, k, limit)
			if core.ErrorCode(err) == core.ENOTFOUND {
				continue // deleted meanwhile
			} else if err != nil {
				return nil, err
			}
			v.Source, v.Count = src, max(n, len(items))
			v.Items = s.itemViews(k, items)
			for i := range v.Items {
				if v.Items[i].DeadLetter == nil {
					v.Items[i].DeadLetter = &DeadLetterView{Source: src}
				}
			}
			out = append(out, v)
			continue
		}
		can, seen := resubmits[k.Protocol]
		if !seen {
			can = e.CanResubmit(k.Protocol)
			resubmits[k.Protocol] = can
		}
		if !can || budget <= 0 {
			continue
		}
		scan, err := e.DeadLetters(now, k, limit, min(budget, deadLetterScanEntity))
		if core.ErrorCode(err) == core.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		budget -= scan.Examined
		if scan.Found == 0 {
			continue
		}
		v.Count, v.Partial = scan.Found, !scan.Complete
		v.Items = make([]ItemView, len(scan.Items))
		for i := range scan.Items {
			v.Items[i] = itemView(&scan.Items[i])
			v.Items[i].describe(scan.Descriptions[i])
		}
		v.Source = v.Items[0].DeadLetter.Source
		for _, it := range v.Items {
			if it.DeadLetter.Source != v.Source {
				v.Source = ""
				break
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// postEntity answers the POST actions on an entity:
//
//	/api/entities/{protocol}/{name...}/items/{seq}/resubmit  {"resubmitted":1,"to":name}
//	/api/entities/{protocol}/{name...}/resubmit              {"resubmitted":N}
//	/api/entities/{protocol}/{name...}/purge                 {"purged":N}
//	/api/entities/{protocol}/{name...}/query                 {"rows":[...],"count":N}
//
// Each answers once what it changed is durable.
func (s *Server) postEntity(c *gin.Context) {
	protocol := c.Param("protocol")
	rest := strings.TrimPrefix(c.Param("rest"), "/")
	key := func(name string) core.EntityKey { return core.EntityKey{Protocol: protocol, Name: name} }
	if name, ok := strings.CutSuffix(rest, "/resubmit"); ok && name != "" {
		if ent, seq, ok := s.itemPath(protocol, name); ok {
			s.resubmitItem(c, key(ent), seq)
			return
		}
		s.resubmitAll(c, key(name))
		return
	}
	if name, ok := strings.CutSuffix(rest, "/purge"); ok && name != "" {
		s.purge(c, key(name))
		return
	}
	if name, ok := strings.CutSuffix(rest, "/query"); ok && name != "" {
		s.query(c, key(name))
		return
	}
	s.writeError(c, core.Errorf(core.ENOTFOUND, "no such endpoint: %s %s (use /api/entities/{protocol}/{name}/resubmit, /purge, /query or /items/{seq}/resubmit)", c.Request.Method, c.Request.URL.Path))
}

// itemPath splits "{entity}/items/{seq}" of protocol. When an entity is
// itself named like that (Service Bus names may hold slashes), the path
// names the item only if its entity part is an entity.
func (s *Server) itemPath(protocol, path string) (string, uint64, bool) {
	i := strings.LastIndex(path, "/items/")
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseUint(path[i+len("/items/"):], 10, 64)
	if err != nil {
		return "", 0, false
	}
	ent := path[:i]
	if _, ok := s.cfg.Engine.Entity(core.EntityKey{Protocol: protocol, Name: ent}); !ok {
		if _, whole := s.cfg.Engine.Entity(core.EntityKey{Protocol: protocol, Name: path}); whole {
			return "", 0, false
		}
	}
	return ent, seq, true
}

// resubmitItem sends dead letter seq of k back to its source.
func (s *Server) resubmitItem(c *gin.Context, k core.EntityKey, seq uint64) {
	to, commit, err := s.cfg.Engine.Resubmit(s.cfg.Clock.Now(), k, seq)
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"resubmitted": 1, "to": to.Name})
}

// resubmitAll sends every dead letter of k back to its source.
func (s *Server) resubmitAll(c *gin.Context, k core.EntityKey) {
	n, commit, err := s.cfg.Engine.ResubmitAll(s.cfg.Clock.Now(), k)
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"resubmitted": n})
}

// purgesReadyOnly says whether a protocol's purge leaves the unacknowledged
// items to their consumers: RabbitMQ's queue.purge removes the ready
// messages only.
func purgesReadyOnly(protocol string) bool { return protocol == core.RabbitMQ }

// purge removes the items of k: every item, the locked, scheduled and
// deferred ones too (core.Engine.PurgeAll), whose holders' settlements then
// fail with a lost lock; for RabbitMQ the ready messages only, as
// queue.purge does (core.Engine.Purge).
func (s *Server) purge(c *gin.Context, k core.EntityKey) {
	purge := s.cfg.Engine.PurgeAll
	if purgesReadyOnly(k.Protocol) {
		purge = s.cfg.Engine.Purge
	}
	n, commit, err := purge(s.cfg.Clock.Now(), k)
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"purged": n})
}

// queryBody is the body of POST .../query.
type queryBody struct {
	Query string `json:"query"`
	Max   *int   `json:"max"`
}

// query runs the body's query with the protocol's query language
// (Config.Queries) against k.
func (s *Server) query(c *gin.Context, k core.EntityKey) {
	var b queryBody
	if err := decodeBody(c, &b); err != nil {
		s.writeError(c, err)
		return
	}
	run := s.cfg.Queries[k.Protocol]
	if run == nil {
		s.writeError(c, core.Errorf(core.ENOTFOUND, "%s has no query language: the data explorer queries Cosmos DB containers", k.Protocol))
		return
	}
	if strings.TrimSpace(b.Query) == "" {
		s.writeError(c, core.Errorf(core.EINVALID, `the body needs a query: {"query": "SELECT ...", "max": 100}`))
		return
	}
	n := defaultQueryRows
	if b.Max != nil {
		if *b.Max <= 0 || *b.Max > maxQueryRows {
			s.writeError(c, core.Errorf(core.EINVALID, "max must be between 1 and %d, got %d", maxQueryRows, *b.Max))
			return
		}
		n = *b.Max
	}
	rows, err := run(c.Request.Context(), k.Name, b.Query, n)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if rows == nil {
		rows = []json.RawMessage{}
	}
	rows = rows[:min(len(rows), n)]
	c.JSON(http.StatusOK, gin.H{"rows": rows, "count": len(rows)})
}
