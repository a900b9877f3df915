package dashboard

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// SessionView is one session of an entity with sessions (a Service Bus
// queue or subscription that requires sessions) as GET
// /api/entities/{protocol}/{name}/sessions shows it: its id, who holds its
// lock until when (Holder "" and no LockedUntil when it is free), its
// state's size, and its messages by state.
type SessionView struct {
	ID          string      `json:"id"`
	Holder      string      `json:"holder,omitempty"`
	LockedUntil *time.Time  `json:"lockedUntil,omitempty"`
	HasState    bool        `json:"hasState"`
	StateSize   int         `json:"stateSize"`
	Counts      core.Counts `json:"counts"`
}

// pageSessions is how many sessions an entity page lists.
const pageSessions = 200

func sessionViews(in []core.SessionInfo) []SessionView {
	out := make([]SessionView, len(in))
	for i, x := range in {
		out[i] = SessionView{ID: x.ID, Holder: x.Holder, LockedUntil: optTime(x.LockedUntil),
			HasState: x.HasState, StateSize: x.StateSize, Counts: x.Counts}
	}
	return out
}

// getSessions answers GET /api/entities/{protocol}/{name...}/sessions: the
// entity's sessions in id order (core.Engine.Sessions), a 400 for an
// entity without sessions.
func (s *Server) getSessions(c *gin.Context, k core.EntityKey) {
	in, err := s.cfg.Engine.Sessions(s.cfg.Clock.Now(), k)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, sessionViews(in))
}

// entitySessions fills an entity page's sessions when its entity has any.
func (s *Server) entitySessions(p *entityPage, now time.Time, k core.EntityKey) error {
	if !p.Entity.Policy.Sessions {
		return nil
	}
	in, err := s.cfg.Engine.Sessions(now, k)
	if err != nil {
		return err
	}
	p.HasSessions, p.SessionTotal = true, len(in)
	if len(in) > pageSessions {
		in = in[:pageSessions]
	}
	p.Sessions = sessionViews(in)
	return nil
}
