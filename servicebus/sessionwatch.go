package servicebus

import (
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// sessionAvailable is the engine's SessionAvailable hook: messages became
// available in a session of entity k, or a session with messages became
// free. The entity's receivers look: the holder of the session, and the
// session receivers waiting for a next session.
func (s *Server) sessionAvailable(k core.EntityKey, group string) {
	s.mu.RLock()
	n := s.byKey[k]
	s.mu.RUnlock()
	if n == nil {
		return
	}
	n.mu.Lock()
	for l := range n.waiters {
		if l.wants(group) {
			l.wake()
		}
	}
	n.mu.Unlock()
}

// wants reports whether a receiver looks for messages of session group:
// a receiver without sessions, the holder of the session, or a session
// receiver that waits for a next session.
func (l *link) wants(group string) bool {
	if l.sess == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.sess.accepted || l.sess.id == group
}

// sessionLost is the engine's SessionLost hook: the lock of session group
// of entity k, held by holder, ran out (SS-3). The holding link is
// detached with com.microsoft:session-lock-lost, as the service detaches
// it, here rather than by the link's own goroutine once woken, and the
// hook waits (a little at most) for the detach to be written: the control
// API's clock calls return after the hooks, so a client that moved the
// clock and then settles a message of the session finds its link gone, and
// does not send a disposition the detach overtakes (the Java SDK then
// reported a closed link instead of the lost session, a CI flake).
// Receivers waiting for a next session may now take it.
func (s *Server) sessionLost(k core.EntityKey, group, holder string) {
	s.mu.RLock()
	n := s.byKey[k]
	s.mu.RUnlock()
	if n == nil {
		return
	}
	var held []*link
	n.mu.Lock()
	for l := range n.waiters {
		if id, h, ok := l.heldSession(); ok && id == group && h == holder {
			held = append(held, l)
		}
	}
	n.mu.Unlock()
	if len(held) > 0 {
		if _, err := s.e.GetSessionState(s.now(), k, group, holder); core.ErrorCode(err) == core.ESESSIONLOCKLOST {
			detach(held, amqpError(errSessionLockLost()))
		}
	}
	s.sessionAvailable(k, group)
}

// detachWait bounds the wait of detach for its frames to be written: a
// client that reads nothing must not hold up the hooks of the others.
const detachWait = time.Second

// detach detaches links from the server's side with error e, and waits
// (detachWait at most) until the detaches are written to their clients.
func detach(links []*link, e *amqp.Error) {
	conns := map[*conn]bool{}
	for _, l := range links {
		l.forceDetach(e)
		conns[l.ss.c] = true
	}
	deadline := time.Now().Add(detachWait)
	for c := range conns {
		c.waitWritten(deadline)
	}
}

// pathRequiresSession reports whether the queue or subscription at path
// requires sessions.
func (s *Server) pathRequiresSession(path string) bool {
	ad, ok := parseAddress(path)
	if !ok {
		return false
	}
	n := s.resolve(ad)
	return n != nil && n.requiresSession()
}
