package cosmos

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// Resource ids (_rid) address databases and containers as well as their
// ids do: "dbs/<db _rid>/colls/<container _rid>/docs" is what a resource's
// _self link leads to, and what azure-cosmos 3.x programs pass around
// (client.CreateItem(container['_self'], ...)). A path is rid-based when
// its database segment is a database's _rid (8 characters of base64, as
// the SDKs tell them apart); its container segment is then a container's
// _rid, and a documents segment's may be a document's _rid (its _self,
// which azure-cosmos 4.x uses for an item given as a dict), found by a walk
// over the container's documents.

// ridLinkKey is the request context key of the link a rid-based request
// is signed for.
type ridLinkKey struct{}

// ridLink returns the link a rid-based request is signed for, if r is one:
// the _rid of the last resource of its path, lower-cased.
func ridLink(r *http.Request) (string, bool) {
	l, ok := r.Context().Value(ridLinkKey{}).(string)
	return l, ok
}

// byName rewrites rid-based paths to the ids they stand for, so that the
// routes see names only, and keeps in the request's context the link the
// request is signed for.
func (s *Server) byName(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if path, link, ok := s.namePath(r.URL.EscapedPath()); ok {
			if unescaped, err := url.PathUnescape(path); err == nil {
				r.URL.Path, r.URL.RawPath = unescaped, path
				r = r.WithContext(context.WithValue(r.Context(), ridLinkKey{}, link))
			}
		}
		h.ServeHTTP(w, r)
	})
}

// namePath returns the escaped path p with the _rids of its database and
// container segments replaced by their ids, and the link it is signed for,
// when p is rid-based.
func (s *Server) namePath(p string) (path, link string, ok bool) {
	// Most paths are name-based: told without splitting them, by the
	// database segment, which as a _rid is 8 characters.
	if len(p) < 13 || p[0] != '/' || p[4] != '/' {
		return "", "", false
	}
	if n := strings.IndexByte(p[5:], '/'); n != 8 && (n >= 0 || len(p) != 13) {
		return "", "", false
	}
	segs := strings.Split(p, "/") // "", "dbs", db, "colls", coll, ...
	if len(segs) < 3 || segs[0] != "" || !strings.EqualFold(segs[1], "dbs") || len(segs[2]) != 8 {
		return "", "", false
	}
	dbRID, ok := parseRID(segs[2], 4)
	if !ok {
		return "", "", false
	}
	db, ok := s.rids.find(s, dbRID, kindDatabase, "")
	if !ok {
		return "", "", false
	}
	link = segs[2]
	segs[2] = url.PathEscape(db)
	if len(segs) >= 5 && strings.EqualFold(segs[3], "colls") {
		// A container segment that is no container's _rid here stays as it
		// is, and finds nothing.
		link = segs[4]
		if collRID, ok := parseRID(segs[4], 8); ok && bytes.HasPrefix(collRID, dbRID) {
			if k, ok := s.rids.find(s, collRID, kindContainer, db); ok {
				segs[4] = url.PathEscape(strings.TrimPrefix(k, db+"/"))
				if len(segs) >= 7 && strings.EqualFold(segs[5], "docs") {
					// A document's _self (azure-cosmos 4.x deletes an item
					// given as a dict by it) is signed for the document's
					// _rid and stands for its id.
					text, _ := url.PathUnescape(segs[6])
					if docRID, ok := parseRID(text, docRIDLen); ok && bytes.HasPrefix(docRID, collRID) {
						link = text
						if id, ok := s.docIDOf(core.EntityKey{Protocol: core.Cosmos, Name: k}, docRID); ok {
							segs[6] = url.PathEscape(id)
						}
					}
				}
			}
		}
	}
	return strings.Join(segs, "/"), strings.ToLower(link), true
}

// docRIDLen is the length of a document's _rid: its container's and a
// document number.
const docRIDLen = 16

// docIDOf returns the id of the document of container k whose _rid is rid,
// by a walk over the container's documents: only rid-based paths ask.
func (s *Server) docIDOf(k core.EntityKey, rid []byte) (string, bool) {
	want := ridText(rid)
	var id string
	found := false
	s.cfg.Engine.Scan(s.now(), k, 0, func(it *core.Item) bool {
		if _, r := splitMeta(it.Meta); r == want {
			id, found = strings.TrimPrefix(it.Key, it.Group), true
			return false
		}
		return true
	})
	return id, found
}

// parseRID reads a _rid's text (ridText) of n bytes.
func parseRID(text string, n int) ([]byte, bool) {
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(text, "-", "/"))
	return b, err == nil && len(b) == n
}

// ridIndex finds databases and containers by _rid: entity names by _rid
// text, checked against the entity at each use (a resource deleted and
// made again has a new _rid), filled from the engine's list on a miss.
type ridIndex struct {
	mu    lockorder.Mutex
	names map[string]string
}

// maxRIDNames bounds a ridIndex, which is emptied when full.
const maxRIDNames = 4096

// find returns the name of the entity of kind kind (under parent, for
// containers) whose _rid is rid.
func (x *ridIndex) find(s *Server, rid []byte, kind, parent string) (string, bool) {
	text := ridText(rid)
	x.mu.Lock()
	name, ok := x.names[text]
	x.mu.Unlock()
	if ok && s.hasRID(name, kind, rid) {
		return name, true
	}
	for _, in := range s.cfg.Engine.Entities(s.now(), core.Cosmos) {
		if in.Kind != kind || in.Parent != parent || !s.hasRID(in.Name, kind, rid) {
			continue
		}
		x.mu.Lock()
		if x.names == nil || len(x.names) >= maxRIDNames {
			x.names = make(map[string]string)
		}
		x.names[text] = in.Name
		x.mu.Unlock()
		return in.Name, true
	}
	return "", false
}

// hasRID reports whether entity name of kind kind has the _rid rid.
func (s *Server) hasRID(name, kind string, rid []byte) bool {
	r, err := s.lookup(core.EntityKey{Protocol: core.Cosmos, Name: name}, kind)
	return err == nil && bytes.Equal(r.meta.RID, rid)
}

// docNumbers numbers each container's items as the service does: an item's
// _rid is its container's followed by 8 bytes, a little-endian number whose
// top 4 bits are 0 for a document (8 a stored procedure, 7 a trigger, 6 a
// function, 4 a conflict), counting 1, 2, 3... (DocumentId reads it back).
// A container's count starts, at its first new item of a run, after the
// highest document number its stored items carry, so that numbers are not
// given twice across restarts. Items stored before lapse numbered them so
// carry the conflict mark (bit 62) and keep it: their numbers never meet
// the new ones.
type docNumbers struct {
	mu   lockorder.Mutex
	last map[string]uint64 // by container _rid text
}

// nextItemRID returns the _rid of a new item of ct.
func (s *Server) nextItemRID(ct *container, now time.Time) ([]byte, error) {
	d := &s.docNums
	d.mu.Lock()
	defer d.mu.Unlock()
	coll := ct.meta.RID
	key := ridText(coll)
	n, ok := d.last[key]
	if !ok {
		err := s.cfg.Engine.Scan(now, ct.key, 0, func(it *core.Item) bool {
			_, rid := splitMeta(it.Meta)
			if b, ok := parseRID(rid, len(coll)+8); ok {
				if v := binary.LittleEndian.Uint64(b[len(coll):]); v>>60 == 0 && v > n {
					n = v
				}
			}
			return true
		})
		if err != nil {
			return nil, err
		}
		if d.last == nil {
			d.last = map[string]uint64{}
		}
	}
	n++
	d.last[key] = n
	b := make([]byte, len(coll)+8)
	copy(b, coll)
	binary.LittleEndian.PutUint64(b[len(coll):], n)
	return b, nil
}
