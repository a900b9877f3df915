package httpserver

import "time"

// AcceptRetry paces a listener's accept loop after an Accept fails for a
// reason other than the listener's closing: out of files (EMFILE), or a
// connection aborted before it was accepted. The loop accepts again after
// a while, as net/http does, rather than leave its port unserved for good.
// The zero value is ready.
type AcceptRetry struct{ wait time.Duration }

// Failed returns how long to wait before the next Accept: 5 ms after an
// Accept that succeeded, then twice the last wait, up to 1 s.
func (r *AcceptRetry) Failed() time.Duration {
	r.wait = min(max(2*r.wait, 5*time.Millisecond), time.Second)
	return r.wait
}

// Succeeded starts the waits over.
func (r *AcceptRetry) Succeeded() { r.wait = 0 }
