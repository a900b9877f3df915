package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// ClockState is the body of the clock calls: the clock's time and mode, and
// for advance and set, how many events applying the new time recorded.
type ClockState struct {
	Now     string         `json:"now"` // RFC 3339 with nanoseconds, UTC
	Mode    core.ClockMode `json:"mode"`
	Applied *int           `json:"applied,omitempty"`
}

func (s *Server) clockState(now time.Time) ClockState {
	return ClockState{Now: now.UTC().Format(time.RFC3339Nano), Mode: s.cfg.Clock.Mode()}
}

func (s *Server) getClock(c *gin.Context) {
	c.JSON(http.StatusOK, s.clockState(s.cfg.Clock.Now()))
}

// applyNow applies everything due up to the clock's time, so that when a
// clock call returns, every expiry due by then has happened (EM-1). The
// clock's move also wakes the expiry runner, which may apply some of it
// first: applied counts the events recorded since before (the event ID the
// caller read before moving the clock), whoever applied them.
func (s *Server) applyNow(c *gin.Context, before uint64) {
	now := s.cfg.Clock.Now()
	// What the move expired is on disk before the caller hears of it, so a
	// crash right after cannot bring expired items back, and the
	// front-ends have heard of it: a queue deleted for being idle is gone
	// from their tables, a lost session's receiver is told.
	if _, err := s.cfg.Engine.ApplyDue(c.Request.Context(), now); err != nil {
		s.writeError(c, err)
		return
	}
	n := int(s.cfg.Engine.LastEventID() - before)
	st := s.clockState(now)
	st.Applied = &n
	c.JSON(http.StatusOK, st)
}

func (s *Server) advanceClock(c *gin.Context) {
	var req struct {
		By string `json:"by"`
	}
	if err := decodeBody(c, &req); err != nil {
		s.writeError(c, err)
		return
	}
	if strings.TrimSpace(req.By) == "" {
		s.writeError(c, core.Errorf(core.EINVALID, `advance needs {"by": "15m"} (a Go duration or an ISO 8601 one like P14D)`))
		return
	}
	d, err := core.ParseDuration(req.By)
	if err != nil {
		s.writeError(c, err)
		return
	}
	before := s.cfg.Engine.LastEventID()
	if _, err := s.cfg.Clock.Advance(d); err != nil {
		s.writeError(c, err)
		return
	}
	s.applyNow(c, before)
}

func (s *Server) setClock(c *gin.Context) {
	var req struct {
		Now string `json:"now"`
	}
	if err := decodeBody(c, &req); err != nil {
		s.writeError(c, err)
		return
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(req.Now))
	if err != nil {
		s.writeError(c, core.Errorf(core.EINVALID, `set needs {"now": "2006-01-02T15:04:05Z"} (RFC 3339), got %q`, req.Now))
		return
	}
	before := s.cfg.Engine.LastEventID()
	if _, err := s.cfg.Clock.Set(t); err != nil {
		s.writeError(c, err)
		return
	}
	s.applyNow(c, before)
}

func (s *Server) freezeClock(c *gin.Context) {
	c.JSON(http.StatusOK, s.clockState(s.cfg.Clock.Freeze()))
}

func (s *Server) resumeClock(c *gin.Context) {
	c.JSON(http.StatusOK, s.clockState(s.cfg.Clock.Resume()))
}
