package cosmos

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// An item is a core item: Key its partition key and id, Group its
// partition key, Body the document as served (with its system properties)
// and Meta its ETag and _rid ("etag rid").

// itemMeta returns the Meta of an item with etag and rid.
func itemMeta(etag, rid string) []byte { return []byte(etag + " " + rid) }

// splitMeta reads an item's Meta.
func splitMeta(m []byte) (etag, rid string) {
	e, r, _ := bytes.Cut(m, []byte{' '})
	return string(e), string(r)
}

// container is a container found for an item request.
type container struct {
	*resource
	key core.EntityKey
}

// lookupContainer finds the container of the request's path.
func (s *Server) lookupContainer(c *gin.Context) (*container, error) {
	k := collKey(param(c, "db"), param(c, "coll"))
	r, err := s.lookup(k, kindContainer)
	if err != nil {
		return nil, err
	}
	return &container{resource: r, key: k}, nil
}

// doc is a document ready to be written.
type doc struct {
	id  string
	pk  partitionKey
	ttl core.TTL
	obj *query.Object
	// size is the length of the body it was read from, 0 when unknown: a
	// hint for the stored JSON's buffer.
	size int
}

// readDoc reads and checks a document body for container ct: an object
// with a valid id and ttl (CO-5), whose partition key matches the header's
// when one is sent.
func (s *Server) readDoc(ct *container, b []byte, header partitionKey, present bool) (*doc, error) {
	o, err := decodeObject(b)
	if err != nil {
		return nil, err
	}
	d, err := s.checkDoc(ct, o, header, present)
	if d != nil {
		d.size = len(b)
	}
	return d, err
}

// checkDoc checks a decoded document, as readDoc.
func (s *Server) checkDoc(ct *container, o *query.Object, header partitionKey, present bool) (*doc, error) {
	id, err := checkID(o)
	if err != nil {
		return nil, err
	}
	var ttl core.TTL
	if v, ok := o.Get("ttl"); ok {
		if ttl, err = adapters.CosmosItemTTL(map[string]any{"ttl": v}); err != nil {
			return nil, err
		}
	}
	pk := ct.meta.PartitionKey.extract(o)
	if present && header.canon() != pk.canon() {
		return nil, errKeyMismatch()
	}
	return &doc{id: id, pk: pk, ttl: ttl, obj: o}, nil
}

// stampFixed is what the system properties add to a body but for the
// values of _rid, _self and _etag: their keys, quotes and commas (43
// bytes), "_attachments":"attachments/" (30), the escapes of the ETag's
// quotes (2) and a _ts of up to 20 digits (27).
const stampFixed = 102

// prepare makes the core item of d in ct: a new _etag and _ts, the item's
// _rid (rid, or a new one), and its unique values (unique.go). Every write
// of a document makes its item here.
func (s *Server) prepare(ct *container, d *doc, rid string, now time.Time) (core.Item, string, error) {
	if rid == "" {
		b, err := s.nextItemRID(ct, now)
		if err != nil {
			return core.Item{}, "", err
		}
		rid = ridText(b)
	}
	etag := s.etags.next()
	self := "dbs/" + ridText(ct.meta.RID[:4]) + "/colls/" + ct.rid() + "/docs/" + rid + "/"
	stamp(d.obj, rid, self, etag, "attachments/", nil, now)
	// Room for the system properties stamp adds, so that the body is
	// written into one buffer: at 192 bytes rather than what they take,
	// every write of a 1 KB document copied its body into a second
	// buffer, 2.4 KB more to allocate.
	body := query.AppendJSON(make([]byte, 0, d.size+len(rid)+len(self)+len(etag)+stampFixed), d.obj)
	if len(body) > maxItemSize {
		return core.Item{}, "", errTooLarge()
	}
	canon := d.pk.canon()
	return core.Item{Key: itemKey(canon, d.id), Group: canon, Body: body, Meta: itemMeta(etag, rid), TTL: d.ttl, Persistent: true,
		Unique: uniqueValues(ct.meta.uniqueSplit, canon, d.obj)}, etag, nil
}

// create stores d in ct as a new item: 409 when its key exists.
func (s *Server) create(ct *container, d *doc) (core.Item, string, *core.Commit, error) {
	now := s.now()
	it, etag, err := s.prepare(ct, d, "", now)
	if err != nil {
		return core.Item{}, "", nil, err
	}
	out, commit, err := s.cfg.Engine.Enqueue(now, ct.key, it)
	return out, etag, commit, err
}

// pointRequest finds the container and the partition key of a point
// operation (a read, replace, delete or patch of one item, or a batch).
func (s *Server) pointRequest(c *gin.Context) (*container, partitionKey, error) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		return nil, nil, err
	}
	pk, err := pointKey(c, ct)
	return ct, pk, err
}

// pointKey returns the partition key of a point operation: the header's,
// which must have every component of the container's key.
func pointKey(c *gin.Context, ct *container) (partitionKey, error) {
	pk, present, err := parseKeyHeader(c.Request)
	if err != nil {
		return nil, err
	}
	if !present {
		if ct.meta.PartitionKey == nil {
			return partitionKey{}, nil
		}
		return nil, errorf(http.StatusBadRequest, "The partition key supplied in x-ms-partitionkey header has fewer components than defined in the the collection.")
	}
	if ct.meta.PartitionKey == nil && len(pk) == 1 {
		// The SDKs send a key even to a container without one.
		return partitionKey{}, nil
	}
	if len(pk) != ct.meta.PartitionKey.paths() {
		return nil, errKeyComponents()
	}
	return pk, nil
}

// postItems is POST .../docs: a create, an upsert, a query or a batch.
func (s *Server) postItems(c *gin.Context) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	switch {
	case isQuery(c):
		s.queryItems(c, ct)
		return
	case strings.EqualFold(rqIsBatchRequest.of(c), "true"):
		s.batch(c, ct)
		return
	}
	header, present, err := parseKeyHeader(c.Request)
	if err != nil {
		s.writeError(c, err)
		return
	}
	b, err := readBody(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	upsert := isUpsert(c)
	if hasTriggers(c) {
		op := "Create"
		if upsert {
			op = "Upsert"
		}
		s.triggered(c, ct, op, "", b)
		return
	}
	d, err := s.readDoc(ct, b, header, present)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var (
		it     core.Item
		etag   string
		commit *core.Commit
		exists bool
	)
	if upsert {
		it, etag, exists, commit, err = s.upsert(ct, d, rqIfMatch.of(c))
	} else {
		it, etag, commit, err = s.create(ct, d)
	}
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	status := http.StatusCreated
	if exists {
		status = http.StatusOK
	}
	s.itemSession(c, ct, it.Group, it.Seq)
	setLSN(c, it.Seq)
	setCharge(c, writeCharge(len(it.Body)))
	writeResource(c, status, etag, it.Body, true)
}

// upsert writes d over the stored item of its key, if its ETag matches
// ifMatchETag, or as a new item when there is none; exists says which.
func (s *Server) upsert(ct *container, d *doc, ifMatchETag string) (it core.Item, etag string, exists bool, commit *core.Commit, err error) {
	key := itemKey(d.pk.canon(), d.id)
	out, commit, err := s.change(ct, func(now time.Time, read reader) ([]string, []core.Item, error) {
		old, ok, err := read(key)
		if err != nil {
			return nil, nil, err
		}
		rid := ""
		if exists = ok; ok {
			var oldETag string
			oldETag, rid = splitMeta(old.Meta)
			if !ifMatch(ifMatchETag, oldETag) {
				return nil, nil, errPrecondition()
			}
		}
		var put core.Item
		put, etag, err = s.prepare(ct, d, rid, now)
		return nil, []core.Item{put}, err
	})
	if err != nil {
		return core.Item{}, "", false, nil, err
	}
	return out[0], etag, exists, commit, nil
}

// ifMatch reports whether an If-Match header lets a write of an item with
// etag go ahead.
func ifMatch(h, etag string) bool { return h == "" || h == "*" || h == etag }

// itemHeaders sets the headers of a response about a container's items
// as a whole (a feed, a query, a batch, a delete): the session token and
// the LSN headers, with the container's LSN (containerLSN). The session
// token is the range's the request addressed, or its partition key's, or
// else every range's.
func (s *Server) itemHeaders(c *gin.Context, ct *container) {
	lsn := s.containerLSN(ct.key)
	ranges := []int(nil)
	if id := rqRangeID.of(c); id != "" {
		if i := strings.LastIndexByte(id, ','); i >= 0 {
			id = id[i+1:]
		}
		if n, err := strconv.Atoi(id); err == nil && n >= 0 && n < ct.ranges() {
			ranges = []int{n}
		}
	} else if pk, present, err := parseKeyHeader(c.Request); err == nil && present && len(pk) == ct.meta.PartitionKey.paths() {
		ranges = []int{ct.rangeOf(pk.canon())}
	}
	if ranges == nil {
		for i := 0; i < ct.ranges(); i++ {
			ranges = append(ranges, i)
		}
	}
	sessionToken(c, ct, ranges, lsn)
	setLSN(c, lsn)
}

// itemSession sets the session token of a response about one item of
// partition group, whose version has LSN lsn.
func (s *Server) itemSession(c *gin.Context, ct *container, group string, lsn uint64) {
	sessionToken(c, ct, []int{ct.rangeOf(group)}, lsn)
}

// sessionToken sets the session token of a response with lsn, for each of
// ranges, as the service forms it ("range:-1#lsn", comma-separated), and
// the container's content path, by which the SDKs keep the tokens they get
// (x-ms-content-path, its _rid; x-ms-alt-content-path, its name). A
// response from one range names it, as the service's do, in
// x-ms-documentdb-partitionkeyrangeid: the Python SDK takes a response
// without it, or with a range it does not know, for a sign of a split and
// drops its cached ranges (issue 26).
func sessionToken(c *gin.Context, ct *container, ranges []int, lsn uint64) {
	var buf [32]byte // one range's token without allocating
	b := buf[:0]
	for i, r := range ranges {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(r), 10)
		b = append(b, ":-1#"...)
		b = strconv.AppendUint(b, lsn, 10)
	}
	// Keys as the service writes them and one array for the four values,
	// as common sets its headers.
	h := c.Writer.Header()
	v := make([]string, 4)
	v[0], v[1], v[2] = string(b), ct.rid(), ct.altPath
	h[sessionTokenKey] = v[0:1:1]
	h[contentPathKey] = v[1:2:2]
	h[altContentPathKey] = v[2:3:3]
	if len(ranges) == 1 {
		v[3] = strconv.Itoa(ranges[0])
		h[rangeIDKey] = v[3:4:4]
	}
}

// The keys of the headers sessionToken sets, as the service writes them.
const (
	sessionTokenKey   = hdrSessionToken
	contentPathKey    = "x-ms-content-path"
	altContentPathKey = "x-ms-alt-content-path"
	rangeIDKey        = hdrRangeID
)

// lastSeq returns the container's last sequence number.
func lastSeq(s *Server, k core.EntityKey) uint64 {
	en, _ := s.cfg.Engine.Entity(k)
	return en.LastSeq
}

// readItem answers GET .../docs/{id}: the document, 404 when it is not
// there or expired (CO-6), 304 when If-None-Match has its ETag.
func (s *Server) readItem(c *gin.Context) {
	ct, pk, err := s.pointRequest(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	it, ok, err := s.cfg.Engine.Get(s.now(), ct.key, itemKey(pk.canon(), param(c, "id")))
	if err != nil {
		s.writeError(c, err)
		return
	}
	if !ok {
		s.writeError(c, errItemNotFound())
		return
	}
	etag, _ := splitMeta(it.Meta)
	s.itemSession(c, ct, it.Group, it.Seq)
	setLSN(c, s.containerLSN(ct.key))
	if inm := rqIfNoneMatch.of(c); inm != "" && (inm == etag || inm == "*") {
		c.Writer.Header()[etagKey] = []string{etag}
		c.Status(http.StatusNotModified)
		c.Writer.WriteHeaderNow()
		return
	}
	setCharge(c, readCharge(len(it.Body)))
	writeResource(c, http.StatusOK, etag, it.Body, false)
}

// replaceItem answers PUT .../docs/{id}.
func (s *Server) replaceItem(c *gin.Context) {
	ct, pk, err := s.pointRequest(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	b, err := readBody(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if hasTriggers(c) {
		s.triggered(c, ct, "Replace", param(c, "id"), b)
		return
	}
	d, err := s.readDoc(ct, b, pk, true)
	if err != nil {
		s.writeError(c, err)
		return
	}
	it, etag, err := s.replace(c, ct, d, param(c, "id"), rqIfMatch.of(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.itemSession(c, ct, it.Group, it.Seq)
	setLSN(c, it.Seq)
	setCharge(c, writeCharge(len(it.Body)))
	writeResource(c, http.StatusOK, etag, it.Body, true)
}

// replace writes d over the stored item of its key, which must exist and
// match ifMatchETag.
//
// The item replaced is the one of id old; a document whose id is another
// renames it, as the service does: the item keeps its _rid under its new
// id, and a new id another item has is the service's 409.
func (s *Server) replace(c *gin.Context, ct *container, d *doc, old, ifMatchETag string) (core.Item, string, error) {
	key := itemKey(d.pk.canon(), old)
	newKey := itemKey(d.pk.canon(), d.id)
	var etag string
	out, commit, err := s.change(ct, func(now time.Time, read reader) ([]string, []core.Item, error) {
		_, rid, err := stored(read, key, ifMatchETag)
		if err != nil {
			return nil, nil, err
		}
		var removes []string
		if newKey != key {
			if _, taken, err := read(newKey); err != nil {
				return nil, nil, err
			} else if taken {
				return nil, nil, errorf(http.StatusConflict, "Entity with the specified id already exists in the system.")
			}
			removes = []string{key}
		}
		var put core.Item
		put, etag, err = s.prepare(ct, d, rid, now)
		return removes, []core.Item{put}, err
	})
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		return core.Item{}, "", err
	}
	return out[0], etag, nil
}

// deleteItem answers DELETE .../docs/{id}.
func (s *Server) deleteItem(c *gin.Context) {
	ct, pk, err := s.pointRequest(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if hasTriggers(c) {
		s.triggered(c, ct, "Delete", param(c, "id"), nil)
		return
	}
	size, commit, err := s.removeItem(ct, itemKey(pk.canon(), param(c, "id")), rqIfMatch.of(c))
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err == nil {
		_, err = s.bumpLSN(c.Request.Context(), ct.key)
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.itemHeaders(c, ct)
	setCharge(c, writeCharge(size))
	c.Status(http.StatusNoContent)
	c.Writer.WriteHeaderNow()
}
