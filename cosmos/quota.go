package cosmos

import (
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// A container's read answers, as the service's does, how far the index
// has been rebuilt for its indexing policy (lapse's is always complete:
// it keeps no index, indexpolicy.go), and, when the client asks
// (x-ms-documentdb-populatequotainfo: true), the container's quotas and
// usage: its scripts (none in lapse), its documents' count and size, in
// kilobytes, against the emulator's 10 GB per container.

// Headers of a container's read.
const (
	hdrPopulateQuotaInfo        = "x-ms-documentdb-populatequotainfo"
	hdrResourceQuota            = "x-ms-resource-quota"
	hdrResourceUsage            = "x-ms-resource-usage"
	hdrIndexTransformProgress   = "x-ms-documentdb-collection-index-transformation-progress"
	containerSizeQuotaKB        = 10 << 20 // 10 GB
	indexTransformationComplete = "100"
)

// containerReadHeaders sets the headers of a read or replace of container
// r: the index transformation's progress, and the quota and usage when the
// request asks for them.
func (s *Server) containerReadHeaders(c *gin.Context, r *resource) {
	h := c.Writer.Header()
	h.Set(hdrIndexTransformProgress, indexTransformationComplete)
	// The container's parent by name: the Java SDK's container cache makes
	// the container's link of it (and its change feed needs that link).
	h.Set("x-ms-alt-content-path", "dbs/"+r.en.Parent)
	if !strings.EqualFold(rqPopulateQuotaInfo.of(c), "true") {
		return
	}
	counts, _, err := s.cfg.Engine.Counts(s.now(), r.en.EntityKey)
	if err != nil {
		return
	}
	kb := strconv.Itoa(startedKB(int(counts.ActiveBytes)))
	quota := strconv.Itoa(containerSizeQuotaKB)
	h.Set(hdrResourceQuota, "functions=25;storedProcedures=100;triggers=25;documentSize="+quota+
		";documentsSize="+quota+";documentsCount=-1;collectionSize="+quota+";")
	h.Set(hdrResourceUsage, "functions=0;storedProcedures=0;triggers=0;documentSize="+kb+
		";documentsSize="+kb+";documentsCount="+strconv.Itoa(counts.Active)+";collectionSize="+kb+";")
}
