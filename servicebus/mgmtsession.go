package servicebus

import (
	"context"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// reqSession is the session a management request is about (SS-1..SS-5):
// its id, and the holder id under which a session receiver of the same
// connection holds it ("" when none does).
type reqSession struct {
	id, holder string
}

// requestSession reads the session of a request on l: the body's
// session-id (@azure/service-bus and azure-servicebus send it), else the
// session held by the receiver its associated-link-name names
// (azservicebus sends only that).
func (c *conn) requestSession(l *link, m *amqp.Message, req amqp.Map) reqSession {
	if l.node == nil || !l.node.requiresSession() {
		return reqSession{}
	}
	id, _ := stringProp(req, "session-id")
	name, _ := stringProp(m.ApplicationProperties, "associated-link-name")
	var rs reqSession
	rs.id, rs.holder = c.sessionHolder(l.node, id, name)
	return rs
}

// mgmtSession serves the session operations: renew-session-lock,
// get-session-state, set-session-state and get-message-sessions.
func (s *Server) mgmtSession(n *node, op string, req amqp.Map, rs reqSession) mgmtResult {
	if !n.requiresSession() {
		return failed(core.Errorf(core.EPRECONDITION, "%s", s.errSessionReceiverOnPlainEntity(n).Description))
	}
	now := s.now()
	if op == opListSessions {
		return s.mgmtListSessions(n, req)
	}
	if rs.id == "" {
		return failed(core.Errorf(core.EINVALID, "The request has no session-id."))
	}
	switch op {
	case opRenewSession:
		// SS-2: the lock lasts LockDuration from each renewal
		info, err := s.e.RenewSession(now, n.key, rs.id, rs.holder, now.Add(n.lockDuration()))
		if err != nil {
			return failed(sessionError(err, rs.id))
		}
		return ok(amqp.Map{{Key: "expiration", Value: info.LockedUntil.UTC()}})
	case opGetState:
		st, err := s.e.GetSessionState(now, n.key, rs.id, rs.holder)
		if err != nil {
			return failed(sessionError(err, rs.id))
		}
		var v any // null: no state
		if st != nil {
			v = append([]byte{}, st...)
		}
		return ok(amqp.Map{{Key: "session-state", Value: v}})
	case opSetState:
		// SS-4: null clears the state
		v, _ := req.Get("session-state")
		var st []byte
		switch x := v.(type) {
		case []byte:
			// an empty state is none: azservicebus sends nil, to clear
			// it, as an empty binary
			if len(x) > 0 {
				st = append([]byte{}, x...)
			}
		case string:
			if x != "" {
				st = []byte(x)
			}
		case nil:
		default:
			return failed(core.Errorf(core.EINVALID, "The session-state must be binary or null, not %T.", v))
		}
		c, err := s.e.SetSessionState(now, n.key, rs.id, rs.holder, st)
		if err != nil {
			return failed(sessionError(err, rs.id))
		}
		if err := c.Wait(context.Background()); err != nil {
			return failed(core.Errorf(core.EINTERNAL, "commit: %v", err))
		}
		return ok(nil)
	}
	return failed(core.Errorf(core.EINVALID, "The operation '%s' is not supported.", op))
}

// listAll is the last-updated-time by which a client asks for every
// session with messages or a state (azservicebus sends year 10000, which
// the service reads as DateTime.MaxValue).
var listAll = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// mgmtListSessions lists an entity's sessions: with a last-updated-time of
// DateTime.MaxValue, those with messages or a state; with an earlier one,
// those with a state.
func (s *Server) mgmtListSessions(n *node, req amqp.Map) mgmtResult {
	skip, _ := intProp(req, "skip")
	top, found := intProp(req, "top")
	if !found || top <= 0 {
		top = 100
	}
	since, _ := get[time.Time](req, "last-updated-time")
	infos, err := s.e.Sessions(s.now(), n.key)
	if err != nil {
		return failed(err)
	}
	all := !since.Before(listAll)
	var ids []string
	for _, in := range infos {
		c := in.Counts
		withMessages := c.Active+c.Scheduled+c.Locked+c.Deferred > 0
		if !in.HasState && !(all && withMessages) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if int64(len(ids)) == top {
			break
		}
		ids = append(ids, in.ID)
	}
	if len(ids) == 0 {
		return mgmtResult{status: 204, desc: "No sessions."}
	}
	return ok(amqp.Map{{Key: "skip", Value: int32(0)}, {Key: "sessions-ids", Value: ids}})
}
