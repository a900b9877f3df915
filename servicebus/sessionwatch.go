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

// watchSessionLocks makes sure session lock losses reach the receivers
// that held the sessions: the engine records an event when a session's
// lock runs out (SS-3), and the entity's receivers, woken, find out whether
// theirs is gone and detach with com.microsoft:session-lock-lost, as the
// service detaches them. It starts watching on the first session accepted,
// so that servers without sessions pay nothing; Close stops it.
func (s *Server) watchSessionLocks() {
	s.watchOnce.Do(func() {
		sub := s.e.Subscribe(4096)
		s.wg.Add(2)
		go func() {
			defer s.wg.Done()
			<-s.closing
			s.e.Unsubscribe(sub)
		}()
		go func() {
			defer s.wg.Done()
			for ev := range sub.C {
				if ev.Action != core.ActionLockLost || ev.Session == "" || ev.Protocol != core.ServiceBus {
					continue
				}
				s.available(core.EntityKey{Protocol: ev.Protocol, Name: ev.Entity})
			}
		}()
	})
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
