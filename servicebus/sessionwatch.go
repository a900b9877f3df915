package servicebus

import "github.com/lapse-emulator/lapse/core"

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
// of entity k ran out (SS-3). Its holder, woken, finds its session gone and
// detaches with com.microsoft:session-lock-lost, as the service detaches
// it; receivers waiting for a next session may now take it.
func (s *Server) sessionLost(k core.EntityKey, group, _ string) { s.sessionAvailable(k, group) }

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
