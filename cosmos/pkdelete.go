package cosmos

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// deletePartitionKey answers POST .../operations/partitionkeydelete, the
// JS SDK's deleteAllItemsForPartitionKey: every item of the partition key
// of x-ms-documentdb-partitionkey goes, or, for a prefix of a hierarchical
// key, every item under it, as deletes do (gone from reads, queries and
// the latest-version change feed). The service deletes them in the
// background and answers at once; lapse deletes them before it answers,
// in one change, and what is written to the partition afterwards stays.
func (s *Server) deletePartitionKey(c *gin.Context) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	pk, present, err := parseKeyHeader(c.Request)
	if err != nil {
		s.writeError(c, err)
		return
	}
	def := ct.meta.PartitionKey
	switch {
	case !present || len(pk) == 0:
		s.writeError(c, errorf(http.StatusBadRequest, "The partition key to delete must be given in the x-ms-documentdb-partitionkey header."))
		return
	case def == nil && len(pk) == 1:
		pk = partitionKey{} // the SDKs send a key even to a container without one
	case def == nil || len(pk) > def.paths():
		s.writeError(c, errKeyComponents())
		return
	}
	var (
		keys []string
		size int
	)
	take := func(it *core.Item) bool {
		keys = append(keys, it.Key)
		size += len(it.Body)
		return true
	}
	now := s.now()
	if def != nil && len(pk) < def.paths() {
		prefix := pk.prefix()
		err = s.cfg.Engine.Scan(now, ct.key, 0, func(it *core.Item) bool {
			if inPrefix(it.Group, prefix) {
				return take(it)
			}
			return true
		})
	} else {
		err = s.cfg.Engine.ScanGroup(now, ct.key, pk.canon(), take)
	}
	if err == nil && len(keys) > 0 {
		var commit *core.Commit
		if _, commit, err = s.cfg.Engine.Write(now, ct.key, keys, nil); err == nil {
			err = commit.Wait(c.Request.Context())
		}
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
	c.Status(http.StatusOK)
	c.Writer.WriteHeaderNow()
}
