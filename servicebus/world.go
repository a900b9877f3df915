package servicebus

import "net/http"

// Sandboxes (docs/architecture.md, "Sandboxes"): every AMQP connection and
// administration request reaches the default world's server, which hands
// those whose key names another world to that world's server.

// world returns the server of another world whose key is named keyName,
// through Config.Resolve; nil when keyName is one of s's keys, or no other
// world has it.
func (s *Server) world(keyName string) *Server {
	if s.cfg.Resolve == nil || keyName == "" {
		return nil
	}
	for _, k := range s.cfg.Keys {
		if k.Name == keyName {
			return nil
		}
	}
	if to := s.cfg.Resolve(keyName); to != s {
		return to
	}
	return nil
}

// serve serves r with the API of the world whose key signed it: the key
// name (skn) of its SharedAccessSignature names it, and that world's API
// checks the signature with its keys. A request without one, or with a
// key name no other world has, is this world's.
func (a *Admin) serve(w http.ResponseWriter, r *http.Request) {
	if a.s.cfg.Resolve != nil {
		if to := a.s.world(tokenField(r.Header.Get("Authorization"), "skn")); to != nil {
			a.worldAPI(to).ServeHTTP(w, r)
			return
		}
	}
	a.own.ServeHTTP(w, r)
}

// worldAPI returns the API of the world of server to, made at its first
// request and kept until Forget; a closed server's is made for the request
// and not kept, so that a request that found a world just before its
// deletion leaves nothing behind once Forget has run.
func (a *Admin) worldAPI(to *Server) http.Handler {
	a.mu.Lock()
	defer a.mu.Unlock()
	if h := a.worlds[to]; h != nil {
		return h
	}
	h := adminHandler(to, a.log)
	if !to.isClosed() {
		a.worlds[to] = h
	}
	return h
}

// Forget drops the API Admin keeps for the world of server s, when that
// world is deleted; call it once s is closed. It is safe to call for a
// server Admin never served.
func (a *Admin) Forget(s *Server) {
	a.mu.Lock()
	delete(a.worlds, s)
	a.mu.Unlock()
}
