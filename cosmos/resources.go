package cosmos

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// Kinds of the core entities this front-end keeps.
const (
	kindDatabase  = "database"
	kindContainer = "container"
)

// dbKey and collKey name the core entities of a database and a container;
// ids cannot contain '/', so "db/coll" is unambiguous.
func dbKey(db string) core.EntityKey { return core.EntityKey{Protocol: core.Cosmos, Name: db} }
func collKey(db, coll string) core.EntityKey {
	return core.EntityKey{Protocol: core.Cosmos, Name: db + "/" + coll}
}

// meta is what a database or container keeps in its entity's Meta: its
// resource as the service shows it, the raw bytes of its _rid, and its
// offer when it has throughput of its own.
type meta struct {
	RID      []byte          `json:"rid"`
	Resource json.RawMessage `json:"resource"`
	// PartitionKey is a container's partition key definition.
	PartitionKey *pkDef      `json:"partitionKey,omitempty"`
	Offer        *offerState `json:"offer,omitempty"`
	// Ranges is how many partition key ranges a container has, fixed at
	// its creation (ranges.go); 0, in containers of earlier versions, is 1.
	Ranges int `json:"ranges,omitempty"`
	// UniqueKeys are the paths of each unique key of a container's
	// uniqueKeyPolicy (unique.go), and uniqueSplit their segments.
	UniqueKeys  [][]string `json:"uniqueKeys,omitempty"`
	uniqueSplit [][][]string
	// Scripts are a container's stored procedures, triggers and
	// user-defined functions (scripts.go), by kind ("sprocs", "triggers",
	// "udfs"), each kind's resources in creation order.
	Scripts map[string][]json.RawMessage `json:"scripts,omitempty"`
}

// pkDef is a container's partition key definition.
type pkDef struct {
	Paths []string `json:"paths"`
	Kind  string   `json:"kind"`
	// Version is the definition's hashing version: 2, or 1 when the client
	// gave none, as the service takes it (ranges.go).
	Version int `json:"version,omitempty"`
	// split holds each path's segments, unescaped.
	split [][]string
}

// offerState is a resource's provisioned throughput.
type offerState struct {
	ID           string `json:"id"`
	Throughput   int    `json:"throughput"`
	AutoscaleMax int    `json:"autoscaleMax,omitempty"`
	TS           int64  `json:"ts"`
	ETag         string `json:"etag"`
}

// resource is a database or container found by its link. One found
// through lookup is shared by every request that finds the same entity
// with the same meta, and nothing changes it: a handler that needs another
// meta copies it (m := r.meta) or the resource (r2 := *r).
type resource struct {
	// en is the entity as lookup found it: its identity (key, kind,
	// parent, creation) holds while the resource is handed out, but not
	// its figures (LastSeq), which the engine moves on.
	en   core.Entity
	meta meta
	// ridText is meta.RID's text, and altPath the resource's name-based
	// path ("dbs/db/colls/c"), which every item response sends.
	ridText, altPath string
}

// rid returns the resource's _rid text.
func (r *resource) rid() string { return r.ridText }

// lookup finds the resource of key k and kind kind, or a 404.
func (s *Server) lookup(k core.EntityKey, kind string) (*resource, error) {
	en, ok := s.cfg.Engine.Entity(k)
	if !ok || en.Kind != kind {
		return nil, errNotFound()
	}
	if r := s.resources.get(en); r != nil {
		return r, nil
	}
	r := &resource{en: en}
	if err := json.Unmarshal(en.Meta, &r.meta); err != nil {
		return nil, fmt.Errorf("meta of %v: %w", k, err)
	}
	if pk := r.meta.PartitionKey; pk != nil {
		for _, p := range pk.Paths {
			pk.split = append(pk.split, splitPath(p))
		}
	}
	r.meta.uniqueSplit = splitUniqueKeys(r.meta.UniqueKeys)
	r.ridText = ridText(r.meta.RID)
	r.altPath = "dbs/" + strings.Replace(en.Name, "/", "/colls/", 1)
	s.resources.put(r)
	return r, nil
}

// maxCachedResources bounds a resourceCache, which is emptied when full.
const maxCachedResources = 1024

// resourceCache keeps the resources lookup built, by entity, so that an item
// request neither parses its container's meta again (a tenth of a point
// read's time) nor copies it. A resource is kept with the entity's handle
// and the meta bytes it was parsed from, and handed out while both are
// the same: an entity deleted and created again under its name, or whose
// meta changed, is parsed anew.
type resourceCache struct {
	mu lockorder.Mutex
	m  map[core.EntityKey]*resource
}

// get returns the resource kept for en, if en has not changed since.
func (c *resourceCache) get(en core.Entity) *resource {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.m[en.EntityKey]
	if r == nil || r.en.Handle != en.Handle || !bytes.Equal(r.en.Meta, en.Meta) {
		return nil
	}
	return r
}

// put keeps r, whose en.Meta must be its own copy.
func (c *resourceCache) put(r *resource) {
	r.en.Meta = bytes.Clone(r.en.Meta)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedResources {
		c.m = make(map[core.EntityKey]*resource)
	}
	c.m[r.en.EntityKey] = r
}

// splitPath splits a partition key path "/a/b" into its segments; a segment
// may be quoted ("/\"a b\"").
func splitPath(p string) []string {
	var out []string
	for seg := range strings.SplitSeq(strings.TrimPrefix(p, "/"), "/") {
		if len(seg) >= 2 && seg[0] == '"' && seg[len(seg)-1] == '"' {
			seg = seg[1 : len(seg)-1]
		}
		out = append(out, seg)
	}
	return out
}

// ridText writes a _rid as the service does: base64, '/' as '-'.
func ridText(b []byte) string {
	return strings.ReplaceAll(base64.StdEncoding.EncodeToString(b), "/", "-")
}

// newRID returns prefix followed by n random bytes: a database's _rid has
// 4 bytes, a container's its database's and 4 more.
func newRID(prefix []byte, n int) []byte {
	b := make([]byte, len(prefix)+n)
	copy(b, prefix)
	rand.Read(b[len(prefix):])
	// The service's ids never have a zero first byte in a new part.
	b[len(prefix)] |= 1
	if len(prefix) == 4 && n == 4 {
		// A container's: the top bit of its first byte is set. The SDKs
		// read an 8-byte _rid without it as a user's (the Java SDK's
		// ResourceId then finds no container in it, and asks for the
		// container's partition key ranges at the database's _rid).
		b[4] |= 0x80
	}
	return b
}

// etagSource makes ETags, unique across restarts: a random prefix for this
// run and a counter.
type etagSource struct {
	prefix [8]byte
	n      atomic.Uint64
}

func (e *etagSource) init() { rand.Read(e.prefix[:]) }

// next returns a new ETag, quoted as the service writes them:
// "pppppppp-pppp-0000-pppp-nnnnnnnnnnnn", the prefix's bytes and the
// counter's low 48 bits in hex (written by hand: fmt took a create's
// ETag about 3 µs).
func (e *etagSource) next() string {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], e.n.Add(1))
	var b [38]byte
	b[0], b[37] = '"', '"'
	hex.Encode(b[1:9], e.prefix[0:4])
	b[9] = '-'
	hex.Encode(b[10:14], e.prefix[4:6])
	copy(b[14:20], "-0000-")
	hex.Encode(b[20:24], e.prefix[6:8])
	b[24] = '-'
	hex.Encode(b[25:37], n[2:8])
	return string(b[:])
}

// activityIDs makes the x-ms-activity-id of each response: a GUID of
// version 4's form, a random prefix drawn once and a counter, unique in the
// process without reading random bytes per request.
type activityIDs struct {
	prefix [8]byte
	n      atomic.Uint64
}

func (a *activityIDs) init() { rand.Read(a.prefix[:]) }

// next returns a new activity ID.
func (a *activityIDs) next() string {
	var id [16]byte
	copy(id[:8], a.prefix[:])
	binary.BigEndian.PutUint64(id[8:], a.n.Add(1))
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	return uuid.UUID(id).String()
}

// systemProps are the properties the service adds to every resource; a
// client's values for them are replaced.
var systemProps = []string{"_rid", "_self", "_etag", "_attachments", "_ts"}

// stamp removes a client's system properties from o and appends the
// service's, in the service's order, with the given _rid, _self, _etag and
// _ts; attachments is the _attachments link or "" for none (databases have
// other links, passed in extra before _ts).
func stamp(o *query.Object, rid, self, etag, attachments string, extra []string, ts time.Time) {
	for _, p := range systemProps {
		o.Delete(p)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		o.Delete(extra[i])
	}
	o.Set("_rid", rid)
	o.Set("_self", self)
	o.Set("_etag", etag)
	if attachments != "" {
		o.Set("_attachments", attachments)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		o.Set(extra[i], extra[i+1])
	}
	o.Set("_ts", float64(ts.Unix()))
}

// getString returns o's string property k, if it is one.
func getString(o *query.Object, k string) (string, bool) {
	v, ok := o.Get(k)
	if !ok {
		return "", false
	}
	str, ok := v.(string)
	return str, ok
}

// checkName validates the id of a database or container: a non-empty
// string of at most 255 characters, no '/', '\\', '?' or '#', and no
// trailing space.
func checkName(o *query.Object) (string, error) {
	id, err := idOf(o, maxNameLength, maxNameLength)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(id, "/\\?#") || strings.HasSuffix(id, " ") {
		return "", errorf(http.StatusBadRequest, "The input name '%s' is invalid. Ensure to provide a unique non-empty string less than '255' characters. Ensure to not include '/', '\\\\', '?', '#' characters or end it with space.", id)
	}
	return id, nil
}

// The longest ids: an item's is 1023 bytes (the service's quotas, per-item
// limits), a database's or container's 255 characters.
const (
	maxItemIDBytes = 1023
	maxNameLength  = 255
)

// checkID validates an item id as the service does: a non-empty string of
// at most 1023 bytes. Which characters it may hold is not checked on
// create, as the service's gateway does not check them: an id it cannot
// route is refused by the point operations (unaddressable).
func checkID(o *query.Object) (string, error) {
	return idOf(o, maxItemIDBytes, maxItemIDBytes+1)
}

// idOf returns o's id, a non-empty string of at most max bytes; the
// service's 400 for another names limit in its text.
func idOf(o *query.Object, max, limit int) (string, error) {
	v, ok := o.Get("id")
	if !ok {
		return "", errorf(http.StatusBadRequest, "The input content is invalid because the required properties - 'id; ' - are missing")
	}
	id, ok := v.(string)
	if !ok || id == "" || len(id) > max {
		return "", errorf(http.StatusBadRequest, "The input name '%s' is invalid. Ensure to provide a unique non-empty string less than '%d' characters.", valueText(v), limit)
	}
	return id, nil
}

// unaddressable answers what the service's gateway answers a point
// operation on an item whose id it cannot route, though the id was
// accepted on create (the service's documentation forbids such ids, its
// gateway does not refuse them): a control character is a 400; a '/',
// '\\' or '#', a trailing space, or a percent sign that reads as an escape
// break the signed link, a 401. nil for an id that is fine.
func unaddressable(id string) *apiError {
	if strings.ContainsAny(id, "\r\n\t") {
		return errorf(http.StatusBadRequest, "The request URL is invalid: the item id has a control character.")
	}
	if strings.ContainsAny(id, "/\\#") || strings.HasSuffix(id, " ") || hasEscape(id) {
		return errorf(http.StatusUnauthorized, "The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol. For more info: https://aka.ms/cosmosdb-tsg-mac-token")
	}
	return nil
}

// hasEscape reports whether s holds a percent sign followed by two hex
// digits.
func hasEscape(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && isHex(s[i+1]) && isHex(s[i+2]) {
			return true
		}
	}
	return false
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

// valueText writes v for an error message: strings as they are, others as
// JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return string(query.AppendJSON(nil, v))
}
