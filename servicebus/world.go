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

// moveTo hands the connection to server to, the world of key keyName,
// for the rest of its life: to's tables serve its links, to's Close ends
// it and waits for it, and the server that had it no longer counts it. It
// reports false, nothing changed, when to is closed.
//
// Only the reader calls it, while the connection is not bound (c.bound):
// during SASL, or on the first valid CBS token. Until then every link but
// those of $cbs and a transaction coordinator is refused for want of a
// key, so no goroutine that serves an entity has read the server yet; the
// goroutines started from then on (receivers, management requests,
// commits of transactions) see to. A coordinator's transactions hold
// nothing yet, for the same reason. The writer and the acker never read
// the server; other goroutines reach the connection only through the
// servers' tables of connections (CloseConnections), which do not either.
// The pointer is atomic all the same, so that no read of it races.
//
// The connection keeps its number (the default world numbers every
// connection of the shared listener, which keeps them unique in its log)
// and its logger, which other goroutines read.
func (c *conn) moveTo(to *Server, keyName string) bool {
	if !to.admit(c) {
		return false
	}
	from := c.srv()
	c.sp.Store(to)
	// The reader's buffers come from to's pool from now on; the one it
	// may hold goes back there, which is as good a home for it.
	c.br.pool = &to.readBufs
	from.conns.Delete(c)
	from.wg.Done()
	c.log.Debug("connection moved to the world of its key", "keyName", keyName)
	return true
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
