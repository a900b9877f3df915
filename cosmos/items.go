package cosmos

import (
	"bytes"
	"context"
	"hash/fnv"
	"net/http"
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

// stripe returns the index of the lock in s.writes that serializes
// read-check-write sequences on item key of container k.
func (s *Server) stripe(k core.EntityKey, key string) int {
	h := fnv.New32a()
	h.Write([]byte(k.Name))
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(len(s.writes)))
}

// doc is a document ready to be written.
type doc struct {
	id  string
	pk  partitionKey
	ttl core.TTL
	obj *query.Object
}

// readDoc reads and checks a document body for container ct: an object
// with a valid id and ttl (CO-5), whose partition key matches the header's
// when one is sent.
func (s *Server) readDoc(ct *container, b []byte, header partitionKey, present bool) (*doc, error) {
	o, err := decodeObject(b)
	if err != nil {
		return nil, err
	}
	return s.checkDoc(ct, o, header, present)
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

// prepare makes the core item of d in ct: a new _etag and _ts, and the
// item's _rid (rid, or a new one).
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
	body := query.AppendJSON(nil, d.obj)
	if len(body) > maxItemSize {
		return core.Item{}, "", errTooLarge()
	}
	canon := d.pk.canon()
	return core.Item{Key: itemKey(canon, d.id), Group: canon, Body: body, Meta: itemMeta(etag, rid), TTL: d.ttl, Persistent: true}, etag, nil
}

// write stores d in ct (see prepare); the caller waits for the commit.
// create fails with 409 when the key exists.
func (s *Server) write(ct *container, d *doc, rid string, create bool) (core.Item, string, *core.Commit, error) {
	now := s.now()
	it, etag, err := s.prepare(ct, d, rid, now)
	if err != nil {
		return core.Item{}, "", nil, err
	}
	var (
		out    core.Item
		commit *core.Commit
	)
	if create {
		out, commit, err = s.cfg.Engine.Enqueue(now, ct.key, it)
	} else {
		out, commit, err = s.cfg.Engine.Put(now, ct.key, it)
	}
	return out, etag, commit, err
}

// locked runs fn, a read-check-write of item key of ct, holding the key's
// stripe lock, then waits outside the lock for the commit fn returns.
func (s *Server) locked(ctx context.Context, ct *container, key string, fn func() (*core.Commit, error)) error {
	mu := &s.writes[s.stripe(ct.key, key)]
	mu.Lock()
	commit, err := fn()
	mu.Unlock()
	if err != nil {
		return err
	}
	return commit.Wait(ctx)
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
	case strings.EqualFold(c.GetHeader("x-ms-cosmos-is-batch-request"), "true"):
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
	d, err := s.readDoc(ct, b, header, present)
	if err != nil {
		s.writeError(c, err)
		return
	}
	upsert := strings.EqualFold(c.GetHeader("x-ms-documentdb-is-upsert"), "true")
	var (
		it     core.Item
		etag   string
		exists bool
	)
	key := itemKey(d.pk.canon(), d.id)
	err = s.locked(c.Request.Context(), ct, key, func() (commit *core.Commit, err error) {
		var rid string
		if upsert {
			var old core.Item
			if old, exists, err = s.cfg.Engine.Get(s.now(), ct.key, key); err != nil {
				return nil, err
			}
			if exists {
				var oldETag string
				oldETag, rid = splitMeta(old.Meta)
				if !ifMatch(c.GetHeader("If-Match"), oldETag) {
					return nil, errPrecondition()
				}
			}
		}
		it, etag, commit, err = s.write(ct, d, rid, !upsert)
		return commit, err
	})
	if err != nil {
		s.writeError(c, err)
		return
	}
	status := http.StatusCreated
	if exists {
		status = http.StatusOK
	}
	sessionToken(c, it.Seq)
	writeResource(c, status, etag, it.Body, true)
}

// ifMatch reports whether an If-Match header lets a write of an item with
// etag go ahead.
func ifMatch(h, etag string) bool { return h == "" || h == "*" || h == etag }

// itemHeaders sets the headers of a response about a container's items
// as a whole (a feed, a query, a batch, a delete): the session token, with
// the container's last sequence number as its LSN.
func (s *Server) itemHeaders(c *gin.Context, ct *container) {
	sessionToken(c, lastSeq(s, ct.key))
}

// sessionToken sets the session token of a response with lsn, for one
// item the sequence number of its version.
func sessionToken(c *gin.Context, lsn uint64) {
	c.Writer.Header().Set(hdrSessionToken, "0:-1#"+itoa(lsn))
}

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
	sessionToken(c, it.Seq)
	if inm := c.GetHeader("If-None-Match"); inm != "" && (inm == etag || inm == "*") {
		c.Writer.Header().Set("etag", etag)
		c.Status(http.StatusNotModified)
		c.Writer.WriteHeaderNow()
		return
	}
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
	d, err := s.readDoc(ct, b, pk, true)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if d.id != param(c, "id") {
		s.writeError(c, errorf(http.StatusBadRequest, "The id in the document, '%s', is not the id in the URL, '%s'.", d.id, param(c, "id")))
		return
	}
	it, etag, err := s.replace(c, ct, d, c.GetHeader("If-Match"))
	if err != nil {
		s.writeError(c, err)
		return
	}
	sessionToken(c, it.Seq)
	writeResource(c, http.StatusOK, etag, it.Body, true)
}

// stored returns the stored item of key and its _rid, for a write over
// it: a 404 when there is none, a 412 when its etag does not match
// ifMatchETag.
func (s *Server) stored(ct *container, key, ifMatchETag string) (core.Item, string, error) {
	old, ok, err := s.cfg.Engine.Get(s.now(), ct.key, key)
	if err != nil {
		return core.Item{}, "", err
	}
	if !ok {
		return core.Item{}, "", errItemNotFound()
	}
	oldETag, rid := splitMeta(old.Meta)
	if !ifMatch(ifMatchETag, oldETag) {
		return core.Item{}, "", errPrecondition()
	}
	return old, rid, nil
}

// replace writes d over the stored item of its key, which must exist and
// match ifMatchETag.
func (s *Server) replace(c *gin.Context, ct *container, d *doc, ifMatchETag string) (it core.Item, etag string, err error) {
	key := itemKey(d.pk.canon(), d.id)
	err = s.locked(c.Request.Context(), ct, key, func() (*core.Commit, error) {
		_, rid, err := s.stored(ct, key, ifMatchETag)
		if err != nil {
			return nil, err
		}
		var commit *core.Commit
		it, etag, commit, err = s.write(ct, d, rid, false)
		return commit, err
	})
	return it, etag, err
}

// deleteItem answers DELETE .../docs/{id}.
func (s *Server) deleteItem(c *gin.Context) {
	ct, pk, err := s.pointRequest(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	key := itemKey(pk.canon(), param(c, "id"))
	err = s.locked(c.Request.Context(), ct, key, func() (*core.Commit, error) {
		if h := c.GetHeader("If-Match"); h != "" && h != "*" {
			old, ok, err := s.cfg.Engine.Get(s.now(), ct.key, key)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, errItemNotFound()
			}
			if etag, _ := splitMeta(old.Meta); etag != h {
				return nil, errPrecondition()
			}
		}
		commit, err := s.cfg.Engine.RemoveKey(s.now(), ct.key, key)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return nil, errItemNotFound()
		}
		return commit, err
	})
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.itemHeaders(c, ct)
	c.Status(http.StatusNoContent)
	c.Writer.WriteHeaderNow()
}
