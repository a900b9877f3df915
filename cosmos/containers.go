package cosmos

import (
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// Defaults the service fills in a container it creates.
const (
	defaultIndexingPolicy   = `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`
	defaultConflictPolicy   = `{"mode":"LastWriterWins","conflictResolutionPath":"/_ts","conflictResolutionProcedure":""}`
	defaultGeospatialConfig = `{"type":"Geography"}`
)

// postContainers creates a container (POST /dbs/{db}/colls), or queries
// them.
func (s *Server) postContainers(c *gin.Context) {
	db, err := s.lookup(dbKey(param(c, "db")), kindDatabase)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if isQuery(c) {
		s.queryResources(c, db.rid(), "DocumentCollections", s.resourceDocs(kindContainer, db.en.Name))
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
	if offer == nil && db.meta.Offer == nil {
		// A container of a database without shared throughput gets its
		// own, 400 RU/s, as the service gives it.
		offer = newOffer(400, 0)
	}
	m, en, err := s.containerEntity(db, o, offer)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if _, err := s.cfg.Engine.CreateDurable(c.Request.Context(), s.now(), en); err != nil {
		s.writeError(c, err)
		return
	}
	c.Header("x-ms-alt-content-path", "dbs/"+param(c, "db"))
	writeResource(c, http.StatusCreated, etagOf(m.Resource), m.Resource, true)
}

// containerEntity checks a container's properties and makes its entity,
// under database db (containerProps).
func (s *Server) containerEntity(db *resource, o *query.Object, offer *offerState) (meta, core.Entity, error) {
	id, err := checkName(o)
	if err != nil {
		return meta{}, core.Entity{}, err
	}
	m, policy, settings, err := s.containerProps(o, newRID(db.meta.RID, 4), offer)
	if err != nil {
		return meta{}, core.Entity{}, err
	}
	m.Ranges = rangeCount(offer, s.partitionCount())
	mb, err := json.Marshal(m)
	if err != nil {
		return meta{}, core.Entity{}, err
	}
	return m, core.Entity{
		EntityKey: collKey(db.en.Name, id), Kind: kindContainer, Parent: db.en.Name, Durable: true,
		Policy: policy, Settings: settings, Meta: mb,
	}, nil
}

// containerProps checks a container's properties o and makes what its
// entity holds: the policy from its defaultTtl (CO-2..CO-5), its settings,
// and its resource with the service's defaults and system properties, with
// _rid rid (its database's 4 bytes and 4 of its own) and offer.
func (s *Server) containerProps(o *query.Object, rid []byte, offer *offerState) (meta, core.Policy, []core.Setting, error) {
	pk, err := readPartitionKeyDef(o)
	if err != nil {
		return meta{}, core.Policy{}, nil, err
	}
	policy, settings, err := containerPolicy(o)
	if err != nil {
		return meta{}, core.Policy{}, nil, err
	}
	unique, err := readUniqueKeys(o)
	if err != nil {
		return meta{}, core.Policy{}, nil, err
	}
	if pk != nil {
		settings = append(settings, core.Setting{Key: "partitionKey", Value: strings.Join(pk.Paths, ", ")})
	}
	settings = append(settings, offerSettings(offer)...)
	if err := fillIndexingPolicy(o); err != nil {
		return meta{}, core.Policy{}, nil, err
	}
	fillDefault(o, "conflictResolutionPolicy", defaultConflictPolicy)
	fillDefault(o, "geospatialConfig", defaultGeospatialConfig)
	self := "dbs/" + ridText(rid[:4]) + "/colls/" + ridText(rid) + "/"
	stamp(o, ridText(rid), self, s.etags.next(), "", []string{
		"_docs", "docs/", "_sprocs", "sprocs/", "_triggers", "triggers/", "_udfs", "udfs/", "_conflicts", "conflicts/",
	}, s.now())
	return meta{RID: rid, Resource: query.AppendJSON(nil, o), PartitionKey: pk, Offer: offer,
		UniqueKeys: unique, uniqueSplit: splitUniqueKeys(unique)}, policy, settings, nil
}

// containerPolicy reads defaultTtl into the container's core policy, with
// the service's 400 for a bad value (CO-5).
func containerPolicy(o *query.Object) (core.Policy, []core.Setting, error) {
	v, ok := o.Get("defaultTtl")
	var ttl any
	if ok {
		ttl = v
	}
	p, err := adapters.CosmosContainerPolicy(ttl)
	if err != nil {
		return core.Policy{}, nil, err
	}
	setting := "off"
	if ok && v != nil {
		setting = valueText(v)
	}
	return p, []core.Setting{{Key: "defaultTtl", Value: setting}}, nil
}

// readPartitionKeyDef reads a container's partitionKey: paths that start
// with '/', one for kind Hash and up to three for MultiHash. A container
// without one has no partition key.
func readPartitionKeyDef(o *query.Object) (*pkDef, error) {
	v, ok := o.Get("partitionKey")
	if !ok || v == nil {
		return nil, nil
	}
	po, ok := v.(*query.Object)
	if !ok {
		return nil, errorf(http.StatusBadRequest, "The partition key definition is invalid.")
	}
	d := &pkDef{Kind: "Hash", Version: 1}
	if v, ok := po.Get("version"); ok {
		if n, ok := v.(float64); ok && n == 2 {
			d.Version = 2
		}
	}
	if k, ok := getString(po, "kind"); ok {
		d.Kind = k
	} else {
		po.Set("kind", "Hash")
	}
	paths, _ := po.Get("paths")
	arr, _ := paths.([]any)
	for _, p := range arr {
		str, ok := p.(string)
		if !ok || !strings.HasPrefix(str, "/") || len(str) < 2 {
			return nil, errorf(http.StatusBadRequest, "The partition key component definition path '%s' could not be accepted, failed near position '0'. Partition key paths must contain only valid characters and not contain a trailing slash or wildcard character.", valueText(p))
		}
		d.Paths = append(d.Paths, str)
	}
	switch {
	case len(d.Paths) == 0:
		return nil, nil
	case d.Kind == "Hash" && len(d.Paths) > 1:
		return nil, errorf(http.StatusBadRequest, "The partition key definition has more than one path; use kind MultiHash for a hierarchical partition key.")
	case d.Kind == "MultiHash" && len(d.Paths) > 3:
		return nil, errorf(http.StatusBadRequest, "The number of paths in a hierarchical partition key definition cannot be more than 3.")
	case d.Kind != "Hash" && d.Kind != "MultiHash" && d.Kind != "Range":
		return nil, errorf(http.StatusBadRequest, "The partition key kind '%s' is invalid.", d.Kind)
	}
	for _, p := range d.Paths {
		d.split = append(d.split, splitPath(p))
	}
	return d, nil
}

// fillDefault sets property k of o to the JSON def when o lacks it.
func fillDefault(o *query.Object, k, def string) {
	if v, ok := o.Get(k); ok && v != nil {
		return
	}
	v, _ := query.Decode([]byte(def))
	o.Set(k, v)
}

// listContainers answers GET /dbs/{db}/colls.
func (s *Server) listContainers(c *gin.Context) {
	db, err := s.lookup(dbKey(param(c, "db")), kindDatabase)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeFeed(c, db.rid(), "DocumentCollections", s.resourceDocs(kindContainer, db.en.Name), "")
}

// getContainer answers GET /dbs/{db}/colls/{coll}.
func (s *Server) getContainer(c *gin.Context) {
	r, err := s.lookup(collKey(param(c, "db"), param(c, "coll")), kindContainer)
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.containerReadHeaders(c, r)
	writeResource(c, http.StatusOK, etagOf(r.meta.Resource), r.meta.Resource, false)
}

// replaceContainer answers PUT /dbs/{db}/colls/{coll}: new settings, with
// a new defaultTtl applying at once to every stored item (CO-7). The
// partition key and the uniqueKeyPolicy cannot change.
func (s *Server) replaceContainer(c *gin.Context) {
	k := collKey(param(c, "db"), param(c, "coll"))
	old, err := s.lookup(k, kindContainer)
	if err != nil {
		s.writeError(c, err)
		return
	}
	o, err := readObject(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if id, ok := getString(o, "id"); !ok || id != param(c, "coll") {
		s.writeError(c, errorf(http.StatusBadRequest, "The id of the container in the body must be the id in the URL."))
		return
	}
	if !ifMatch(rqIfMatch.of(c), etagOf(old.meta.Resource)) {
		s.writeError(c, errPrecondition())
		return
	}
	m, policy, settings, err := s.containerProps(o, old.meta.RID, old.meta.Offer)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if !samePaths(m.PartitionKey, old.meta.PartitionKey) {
		s.writeError(c, errorf(http.StatusBadRequest, "Partition key paths cannot be changed."))
		return
	}
	if !sameUniqueKeys(m.UniqueKeys, old.meta.UniqueKeys) {
		// Fixed at creation: the service refuses a replace that leaves
		// it out, too.
		s.writeError(c, errUniqueChanged())
		return
	}
	m.Ranges = old.meta.Ranges
	mb, err := json.Marshal(m)
	if err != nil {
		s.writeError(c, err)
		return
	}
	_, commit, err := s.cfg.Engine.Update(s.now(), k, func(en *core.Entity) error {
		kept, err := keepScripts(en.Meta, mb)
		en.Policy, en.Settings, en.Meta = policy, settings, kept
		return err
	})
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.containerReadHeaders(c, old)
	writeResource(c, http.StatusOK, etagOf(m.Resource), m.Resource, true)
}

// samePaths reports whether two partition key definitions have the same
// paths.
func samePaths(a, b *pkDef) bool {
	if a.paths() != b.paths() {
		return false
	}
	for i := 0; i < a.paths(); i++ {
		if a.Paths[i] != b.Paths[i] {
			return false
		}
	}
	return true
}

// deleteContainer answers DELETE /dbs/{db}/colls/{coll}: it goes with its
// items.
func (s *Server) deleteContainer(c *gin.Context) {
	k := collKey(param(c, "db"), param(c, "coll"))
	if _, err := s.lookup(k, kindContainer); err != nil {
		s.writeError(c, err)
		return
	}
	commit, err := s.cfg.Engine.Delete(s.now(), k)
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.forgetVersions(k)
	c.Status(http.StatusNoContent)
	c.Writer.WriteHeaderNow()
}

// getPartitionKeyRanges answers GET .../pkranges: one range covers every
// key, as on a single-partition emulator.
func (s *Server) getPartitionKeyRanges(c *gin.Context) {
	r, err := s.lookup(collKey(param(c, "db"), param(c, "coll")), kindContainer)
	if err != nil {
		s.writeError(c, err)
		return
	}
	ct := &container{resource: r}
	bounds := ct.bounds()
	rows := make([][]byte, 0, len(bounds)-1)
	dbSelf := "dbs/" + ridText(r.meta.RID[:4]) + "/colls/" + r.rid() + "/pkranges/"
	for i := 0; i+1 < len(bounds); i++ {
		rid := rangeRID(r.meta.RID, i)
		rows = append(rows, []byte(`{"_rid":`+jsonString(rid)+`,"id":`+jsonString(strconv.Itoa(i))+
			`,"_etag":"\"00000000-0000-0000-0000-000000000000\"","minInclusive":`+jsonString(bounds[i])+
			`,"maxExclusive":`+jsonString(bounds[i+1])+`,"ridPrefix":`+strconv.Itoa(i)+`,"_self":`+jsonString(dbSelf+rid+"/")+
			`,"throughputFraction":`+strconv.FormatFloat(1/float64(len(bounds)-1), 'g', -1, 64)+
			`,"status":"online","parents":[],"_ts":0}`))
	}
	// The ranges feed is a change feed (A-IM: Incremental Feed): a client
	// reads it until it answers 304 Not Modified for the etag it has
	// (the Python SDK's routing map cache loops until then). A
	// container's ranges never change in lapse: no split, no merge.
	c.Header("etag", pkRangesEtag)
	if strings.EqualFold(rqAIM.of(c), "Incremental Feed") && rqIfNoneMatch.of(c) == pkRangesEtag {
		c.Status(http.StatusNotModified)
		return
	}
	writeFeed(c, r.rid(), "PartitionKeyRanges", rows, "")
}

// rangeRID is the _rid of partition key range i of the container whose
// _rid is rid: the container's 8 bytes, then the range's number.
func rangeRID(rid []byte, i int) string {
	b := make([]byte, 0, 16)
	b = append(b, rid...)
	b = append(b, 2, 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(i))
	return ridText(b)
}

// pkRangesEtag is the change feed position of every container's ranges.
const pkRangesEtag = `"1"`
