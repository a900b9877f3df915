package cosmos

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// A container's server-side scripts, stored procedures, triggers and
// user-defined functions, are kept in its entity's meta (meta.Scripts), by
// kind: they are few and small, are written rarely, and so go with the
// container by every path that deletes it, are journaled with it, and need
// no entity of their own that every listing of Cosmos DB entities would
// have to pass over.

// scriptKind is a kind of script: its path segment, the field of its feed
// and the last byte of its resources' _rids.
type scriptKind struct {
	path, feed string
	ridByte    byte
}

// The kinds of scripts.
var (
	kindSprocs   = scriptKind{"sprocs", "StoredProcedures", 0x80}
	kindTriggers = scriptKind{"triggers", "Triggers", 0x60}
	kindUDFs     = scriptKind{"udfs", "UserDefinedFunctions", 0x70}
	scriptKinds  = []scriptKind{kindSprocs, kindTriggers, kindUDFs}
)

// scriptPath returns the kind ("sprocs", ...) of a route of scripts, "" for
// another route.
func scriptPath(route string) string {
	rest, ok := strings.CutPrefix(route, "/dbs/:db/colls/:coll/")
	if !ok {
		return ""
	}
	rest = strings.TrimSuffix(rest, "/:id")
	for _, k := range scriptKinds {
		if rest == k.path {
			return rest
		}
	}
	return ""
}

// scriptRoutes adds the routes of every kind of script to a.
func (s *Server) scriptRoutes(a gin.IRoutes) {
	for _, k := range scriptKinds {
		base := "/dbs/:db/colls/:coll/" + k.path
		a.POST(base, func(c *gin.Context) { s.postScript(c, k) })
		a.GET(base, func(c *gin.Context) { s.listScripts(c, k) })
		a.GET(base+"/:id", func(c *gin.Context) { s.readScript(c, k) })
		a.PUT(base+"/:id", func(c *gin.Context) { s.replaceScript(c, k) })
		a.DELETE(base+"/:id", func(c *gin.Context) { s.deleteScript(c, k) })
	}
	a.POST("/dbs/:db/colls/:coll/sprocs/:id", s.executeSproc)
}

// keepScripts returns mb, a container's new meta, with the scripts of cur,
// its meta as stored: what replaces a container's settings or offer keeps
// its scripts.
func keepScripts(cur, mb []byte) ([]byte, error) {
	var old struct {
		Scripts map[string][]json.RawMessage `json:"scripts"`
	}
	if err := json.Unmarshal(cur, &old); err != nil || len(old.Scripts) == 0 {
		return mb, nil
	}
	var m meta
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, err
	}
	m.Scripts = old.Scripts
	return json.Marshal(m)
}

// scriptOf is the id and body of a stored script resource.
type scriptOf struct {
	ID               string `json:"id"`
	Body             string `json:"body"`
	TriggerType      string `json:"triggerType"`
	TriggerOperation string `json:"triggerOperation"`
	ETag             string `json:"_etag"`
}

// findScript returns the script of kind k and id in ct's meta, and its
// index.
func findScript(m meta, k scriptKind, id string) (json.RawMessage, scriptOf, int) {
	for i, raw := range m.Scripts[k.path] {
		var sc scriptOf
		if json.Unmarshal(raw, &sc) == nil && sc.ID == id {
			return raw, sc, i
		}
	}
	return nil, scriptOf{}, -1
}

// readScriptBody reads and checks a script resource from the request: an
// id, a string body, and for a trigger its type and operation.
func readScriptBody(c *gin.Context, k scriptKind) (*query.Object, string, error) {
	o, id, err := readNamed(c)
	if err != nil {
		return nil, "", err
	}
	if b, ok := o.Get("body"); !ok {
		return nil, "", errorf(http.StatusBadRequest, "The input content is invalid because the required properties - 'body; ' - are missing")
	} else if _, ok := b.(string); !ok {
		return nil, "", errorf(http.StatusBadRequest, "The input content is invalid: the body of a script must be a string.")
	}
	if k == kindTriggers {
		t, _ := getString(o, "triggerType")
		op, _ := getString(o, "triggerOperation")
		// Kept as sent (the Python SDK sends "pre" and reads it back),
		// read in any case.
		_, tok := triggerTypes[strings.ToLower(t)]
		_, ook := triggerOps[strings.ToLower(op)]
		if !tok || !ook {
			return nil, "", errorf(http.StatusBadRequest, "The input content is invalid: a trigger needs a triggerType (Pre or Post) and a triggerOperation (All, Create, Replace, Delete or Update).")
		}
	}
	return o, id, nil
}

// The trigger types and operations, as the service writes them.
var (
	triggerTypes = map[string]string{"pre": "Pre", "post": "Post"}
	triggerOps   = map[string]string{"all": "All", "create": "Create", "replace": "Replace", "delete": "Delete", "update": "Update", "upsert": "Upsert"}
)

// stampScript adds a script's system properties.
func (s *Server) stampScript(ct *container, k scriptKind, o *query.Object, rid string) []byte {
	if rid == "" {
		b := make([]byte, 16)
		copy(b, ct.meta.RID)
		rand.Read(b[8:12])
		b[8] |= 1
		b[15] = k.ridByte
		rid = ridText(b)
	}
	self := "dbs/" + ridText(ct.meta.RID[:4]) + "/colls/" + ct.rid() + "/" + k.path + "/" + rid + "/"
	stamp(o, rid, self, s.etags.next(), "", nil, s.now())
	return query.AppendJSON(nil, o)
}

// updateScripts changes the scripts of kind k of ct through fn, which gets
// the list as stored at the engine's instant and returns the new one.
func (s *Server) updateScripts(c *gin.Context, ct *container, k scriptKind, fn func([]json.RawMessage) ([]json.RawMessage, error)) error {
	_, commit, err := s.cfg.Engine.Update(s.now(), ct.key, func(en *core.Entity) error {
		var m meta
		if err := json.Unmarshal(en.Meta, &m); err != nil {
			return err
		}
		list, err := fn(m.Scripts[k.path])
		if err != nil {
			return err
		}
		if m.Scripts == nil {
			m.Scripts = map[string][]json.RawMessage{}
		}
		m.Scripts[k.path] = list
		if len(list) == 0 {
			delete(m.Scripts, k.path)
		}
		mb, err := json.Marshal(m)
		en.Meta = mb
		return err
	})
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	return err
}

// scriptID returns the id of a stored script resource.
func scriptID(raw json.RawMessage) string {
	var sc scriptOf
	json.Unmarshal(raw, &sc)
	return sc.ID
}

// postScript answers POST .../{sprocs,triggers,udfs}: a create, an upsert
// (x-ms-documentdb-is-upsert) or a query.
func (s *Server) postScript(c *gin.Context, k scriptKind) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if isQuery(c) {
		s.queryResources(c, ct.rid(), k.feed, ct.meta.scriptDocs(k))
		return
	}
	o, id, err := readScriptBody(c, k)
	if err != nil {
		s.writeError(c, err)
		return
	}
	upsert := isUpsert(c)
	var body []byte
	status := http.StatusCreated
	err = s.updateScripts(c, ct, k, func(list []json.RawMessage) ([]json.RawMessage, error) {
		for i, raw := range list {
			if scriptID(raw) != id {
				continue
			}
			if !upsert {
				return nil, errorf(http.StatusConflict, "Resource with specified id or name already exists.")
			}
			var old struct {
				RID string `json:"_rid"`
			}
			json.Unmarshal(raw, &old)
			body = s.stampScript(ct, k, o, old.RID)
			status = http.StatusOK
			list = append(list[:i:i], append([]json.RawMessage{body}, list[i+1:]...)...)
			return list, nil
		}
		body = s.stampScript(ct, k, o, "")
		return append(list[:len(list):len(list)], body), nil
	})
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeResource(c, status, etagOf(body), body, true)
}

// scriptDocs returns the resources of the scripts of kind k.
func (m meta) scriptDocs(k scriptKind) [][]byte {
	list := m.Scripts[k.path]
	out := make([][]byte, len(list))
	for i, raw := range list {
		out[i] = raw
	}
	return out
}

// listScripts answers GET .../{sprocs,triggers,udfs}: the feed of them.
func (s *Server) listScripts(c *gin.Context, k scriptKind) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeFeed(c, ct.rid(), k.feed, ct.meta.scriptDocs(k), "")
}

// readScript answers GET .../{kind}/{id}.
func (s *Server) readScript(c *gin.Context, k scriptKind) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	raw, _, i := findScript(ct.meta, k, param(c, "id"))
	if i < 0 {
		s.writeError(c, errNotFound())
		return
	}
	writeResource(c, http.StatusOK, etagOf(raw), raw, false)
}

// replaceScript answers PUT .../{kind}/{id}: 404 when there is none, 412
// when If-Match is not its ETag.
func (s *Server) replaceScript(c *gin.Context, k scriptKind) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	o, id, err := readScriptBody(c, k)
	if err != nil {
		s.writeError(c, err)
		return
	}
	old := param(c, "id")
	var body []byte
	err = s.updateScripts(c, ct, k, func(list []json.RawMessage) ([]json.RawMessage, error) {
		at := -1
		for i, raw := range list {
			switch scriptID(raw) {
			case old:
				at = i
			case id:
				return nil, errorf(http.StatusConflict, "Resource with specified id or name already exists.")
			}
		}
		if at < 0 {
			return nil, errNotFound()
		}
		var cur struct {
			RID  string `json:"_rid"`
			ETag string `json:"_etag"`
		}
		json.Unmarshal(list[at], &cur)
		if !ifMatch(rqIfMatch.of(c), cur.ETag) {
			return nil, errPrecondition()
		}
		body = s.stampScript(ct, k, o, cur.RID)
		out := append([]json.RawMessage(nil), list...)
		out[at] = body
		return out, nil
	})
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeResource(c, http.StatusOK, etagOf(body), body, true)
}

// deleteScript answers DELETE .../{kind}/{id}.
func (s *Server) deleteScript(c *gin.Context, k scriptKind) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	id := param(c, "id")
	err = s.updateScripts(c, ct, k, func(list []json.RawMessage) ([]json.RawMessage, error) {
		for i, raw := range list {
			if scriptID(raw) == id {
				var cur struct {
					ETag string `json:"_etag"`
				}
				json.Unmarshal(raw, &cur)
				if !ifMatch(rqIfMatch.of(c), cur.ETag) {
					return nil, errPrecondition()
				}
				out := append([]json.RawMessage(nil), list[:i]...)
				return append(out, list[i+1:]...), nil
			}
		}
		return nil, errNotFound()
	})
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
	c.Writer.WriteHeaderNow()
}

// scriptSource returns the body of script id of kind k, if there is one.
func (ct *container) scriptSource(k scriptKind, id string) (scriptOf, bool) {
	_, sc, i := findScript(ct.meta, k, id)
	return sc, i >= 0
}
