package dashboard

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// getEvents answers GET /api/events?since=ID&protocol=&entity=&limit= with
// the event log (EM-2), oldest first: the events with an ID above since (0
// for all kept), at most limit of them (0 or absent for all).
func (s *Server) getEvents(c *gin.Context) {
	since, err := queryUint(c, "since")
	if err != nil {
		s.writeError(c, err)
		return
	}
	limit, err := queryUint(c, "limit")
	if err != nil {
		s.writeError(c, err)
		return
	}
	evs := s.cfg.Engine.Events(core.EventQuery{
		Since:    since,
		Protocol: c.Query("protocol"),
		Entity:   c.Query("entity"),
		Limit:    int(min(limit, uint64(maxLimit))),
	})
	if evs == nil {
		evs = []core.Event{}
	}
	c.JSON(http.StatusOK, evs)
}

// maxLimit caps the limit parameters (larger values mean "all").
const maxLimit = 1 << 30

// itemLimit reads ?limit= of the calls that list items: 100 when absent, 0
// for all.
func itemLimit(c *gin.Context) (int, error) {
	limit := uint64(defaultItemLimit)
	if _, given := c.GetQuery("limit"); given {
		var err error
		if limit, err = queryUint(c, "limit"); err != nil {
			return 0, err
		}
	}
	return int(min(limit, maxLimit)), nil
}

// queryUint reads an optional non-negative integer query parameter.
func queryUint(c *gin.Context, name string) (uint64, error) {
	v, ok := c.GetQuery(name)
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, core.Errorf(core.EINVALID, "%s must be a non-negative integer, got %q", name, v)
	}
	return n, nil
}
