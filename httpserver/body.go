package httpserver

import (
	"net/http"
	"time"
)

// DefaultBodyTimeout bounds the reading of a request's body, counted from
// the end of its headers (which ReadHeaderTimeout bounds), so that a body
// sent a byte at a time cannot hold a connection for ever (issue 16.9), as
// the AMQP listeners bound a silent client. The largest body an API of
// lapse accepts is 10 MB (RabbitMQ's definitions; a Cosmos DB item or
// batch is at most 2 MB), which a client on the same machine or a
// container network sends in well under a second even on a loaded CI
// runner: a minute is far beyond what a real SDK needs.
const DefaultBodyTimeout = time.Minute

// SetBodyTimeout sets how long a request's body may take to arrive once
// its headers have (DefaultBodyTimeout when d is not positive); call it
// before Open. A body that is not all there in time fails to read: the
// API answers as it does to a body cut short, and the connection is
// closed after the answer. On the own HTTP/1.1 loop the cut comes up to
// a tick of its watchdog late (a tenth of the shorter of this and the
// header timeout, at most a second).
func (s *Server) SetBodyTimeout(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodyTimeout = d
}

// limitBody serves next with a read deadline of d on the connection of each
// request that has a body. net/http lifts the deadline once the body is
// read to its end (to watch the connection for the client going away), so
// a handler that works longer after reading its body is not cut, and
// closes a connection whose body failed to read rather than read another
// request from it. A request without a body gets no deadline: a stream of
// server-sent events lasts as long as its client wants.
func limitBody(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			// An error means a connection without deadlines: nothing to do.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		next.ServeHTTP(w, r)
	})
}
