package cosmos

import "github.com/gin-gonic/gin"

// A container's conflicts feed lists the writes that multi-region writes
// made conflict and that its conflict resolution policy left to the
// application. An account of one write region, as lapse's is, has none:
// the feed and its queries are empty and a conflict is not found.

// listConflicts answers GET .../conflicts.
func (s *Server) listConflicts(c *gin.Context) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeFeed(c, ct.rid(), "Conflicts", nil, "")
}

// queryConflicts answers POST .../conflicts, a query of the conflicts.
func (s *Server) queryConflicts(c *gin.Context) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	// The gateway asks of a conflicts query what it asks of an items
	// query: a partition key, or leave to read them all.
	if _, present, err := parseKeyHeader(c.Request); err != nil || !present {
		if err == nil {
			err = crossPartitionAllowed(c)
		}
		if err != nil {
			s.writeError(c, err)
			return
		}
	}
	s.queryResources(c, ct.rid(), "Conflicts", nil)
}

// getConflict answers GET and DELETE .../conflicts/{id}: there is none.
func (s *Server) getConflict(c *gin.Context) {
	if _, err := s.lookupContainer(c); err != nil {
		s.writeError(c, err)
		return
	}
	s.writeError(c, errNotFound())
}
