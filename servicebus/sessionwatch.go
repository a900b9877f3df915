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
// hook waits (a second at most) for the client to answer the detach: the
// control API's clock calls return after the hooks, so a client that moved
// the clock and then settles a message of the session has seen its link
// gone, and does not send a disposition the detach overtakes (CI flakes of
// the Java SDK's session-lock test: a closed link reported instead of the
// lost session when the hook returned before writing the detach; a
// complete that waited a minute when it returned before the client read
// it). Receivers waiting for a next session may now take it.
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

// detachWait bounds the wait of detach for its clients: a client that
// reads nothing, or does not answer, must not hold up the hooks of the
// others.
var detachWait = time.Second

// detach detaches links from the server's side with error e, and waits
// (detachWait at most) until each client has answered its detach, so has
// read it: a client whose detach is written but not read yet (the Java
// SDK's reactor thread, behind on a loaded machine) can still settle a
// message of the link, a disposition that crosses the detach and that no
// answer can follow (go-amqp ends the session on a disposition for a link
// it saw detached; the Java SDK waited a minute for one, then retried).
func detach(links []*link, e *amqp.Error) {
	conns := map[*conn]bool{}
	var answers []chan struct{}
	for _, l := range links {
		l.forceDetach(e)
		conns[l.ss.c] = true
		if ch := l.ss.answerOf(l.peerHandle); ch != nil {
			answers = append(answers, ch)
		}
	}
	// Written first, whatever the clients do; then answered.
	deadline := time.Now().Add(detachWait)
	for c := range conns {
		c.waitWritten(deadline)
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for _, ch := range answers {
		select {
		case <-ch:
		case <-timer.C:
			return
		}
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
