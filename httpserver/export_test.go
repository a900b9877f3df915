package httpserver

import "time"

// SetHeaderTimeout sets how long a request's line and headers may take
// (10 s unless set), for tests that wait it out; call it before Open.
func SetHeaderTimeout(s *Server, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.headerTimeout = d
}
