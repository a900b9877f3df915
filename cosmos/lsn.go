package cosmos

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// A container's log sequence number (LSN) is the service's count of the
// writes to its partition; lapse's is the container's core sequence
// number, core.Entity.LastSeq, which every item written takes the next of
// and which the store keeps across restarts. A write that stores no item
// (a delete) takes a number of its own (bumpLSN), so that every write
// moves the LSN. An item's LSN is its core.Item.Seq. Responses about items
// carry it in lsn and x-ms-global-committed-lsn (one region: what is
// written is committed everywhere); other responses carry the engine's
// last event id, which moves with every change of the account.

// Response headers of the LSN.
const (
	hdrLSN                = "lsn"
	hdrGlobalCommittedLSN = "x-ms-global-committed-lsn"
	hdrLocalLSN           = "x-ms-cosmos-llsn"
)

// containerLSN returns container k's LSN.
func (s *Server) containerLSN(k core.EntityKey) uint64 { return lastSeq(s, k) }

// bumpLSN moves container k's LSN on by one for a write that stores no
// item, and returns the new LSN once it is stored.
func (s *Server) bumpLSN(ctx context.Context, k core.EntityKey) (uint64, error) {
	lsn, commit, err := s.cfg.Engine.ReserveSeq(s.now(), k)
	if err == nil {
		err = commit.Wait(ctx)
	}
	return lsn, err
}

// setLSN sets the response's LSN headers to lsn. The three share one
// value slice, which nothing appends to (serviceHeaderWriter only renames
// headers), to save two allocations a response.
func setLSN(c *gin.Context, lsn uint64) {
	h := c.Writer.Header()
	v := []string{itoa(lsn)}
	h[lsnKey] = v
	h[globalCommittedLSNKey] = v
	h[localLSNKey] = v
}

// The keys of the LSN headers in an http.Header, as the service writes
// them.
const (
	lsnKey                = hdrLSN
	globalCommittedLSNKey = hdrGlobalCommittedLSN
	localLSNKey           = hdrLocalLSN
)
