package rabbitmq

import (
	"slices"
	"strings"
)

// This file reads the topology for the management API and definitions,
// under the lock rules of server.go: Server.mu is held only to copy what
// a reply needs, never while calling the engine.

// vhostNames returns the names of the vhosts, sorted.
func (s *Server) vhostNames() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.vhosts))
	for name := range s.vhosts {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// queuesIn returns the queues of vhost vh ("" for every vhost), sorted by
// vhost and name. A queue's declaration is immutable, so the pointers may
// be read without the lock.
func (s *Server) queuesIn(vh string) []*queue {
	s.mu.RLock()
	var out []*queue
	for name, v := range s.vhosts {
		if vh != "" && name != vh {
			continue
		}
		for _, q := range v.queues {
			if q.h.Live() {
				out = append(out, q)
			}
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b *queue) int {
		if c := strings.Compare(a.vhost, b.vhost); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

// exchangeView is a copy of an exchange's declaration.
type exchangeView struct {
	vhost, name, kind           string
	durable, autoDelete, intern bool
	args                        map[string]any
}

// exchangesIn returns the exchanges of vhost vh ("" for every vhost),
// with each vhost's default exchange (named ""), sorted by vhost and name.
func (s *Server) exchangesIn(vh string) []exchangeView {
	s.mu.RLock()
	var out []exchangeView
	for name, v := range s.vhosts {
		if vh != "" && name != vh {
			continue
		}
		out = append(out, exchangeView{vhost: name, kind: "direct", durable: true})
		for _, x := range v.exchanges {
			out = append(out, exchangeView{vhost: x.vhost, name: x.name, kind: x.kind, durable: x.durable,
				autoDelete: x.autoDelete, intern: x.internal, args: x.args})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b exchangeView) int {
		if c := strings.Compare(a.vhost, b.vhost); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

// lookupExchangeView returns exchange name of vh ("" is the default
// exchange); ok is false when there is none.
func (s *Server) lookupExchangeView(vh, name string) (exchangeView, bool) {
	if name == "" {
		if s.lookupVhost(vh) == nil {
			return exchangeView{}, false
		}
		return exchangeView{vhost: vh, kind: "direct", durable: true}, true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := s.vhosts[vh]
	if v == nil || v.exchanges[name] == nil {
		return exchangeView{}, false
	}
	x := v.exchanges[name]
	return exchangeView{vhost: x.vhost, name: x.name, kind: x.kind, durable: x.durable,
		autoDelete: x.autoDelete, intern: x.internal, args: x.args}, true
}

// bindingView is a copy of a binding.
type bindingView struct {
	vhost, source, dest, destType, key string
	args                               map[string]any
	argsID                             string
}

// bindingsIn returns the bindings of vhost vh ("" for every vhost): first
// the default exchange's implicit binding of each queue (its name as the
// routing key), as RabbitMQ lists them, then every other one.
func (s *Server) bindingsIn(vh string) []bindingView {
	s.mu.RLock()
	var out []bindingView
	for name, v := range s.vhosts {
		if vh != "" && name != vh {
			continue
		}
		for _, q := range v.queues {
			if !q.h.Live() {
				continue
			}
			out = append(out, bindingView{vhost: name, dest: q.name, destType: "queue", key: q.name})
		}
		for _, x := range v.exchanges {
			for _, b := range x.bindings {
				if b.queue != nil && !b.queue.h.Live() {
					continue
				}
				out = append(out, bindingView{vhost: name, source: x.name, dest: b.destName(),
					destType: b.destType(), key: b.key, args: b.args, argsID: b.argsID})
			}
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b bindingView) int {
		return cmpStrings(a.vhost, b.vhost, a.source, b.source, a.destType, b.destType, a.dest, b.dest,
			a.key, b.key, a.argsID, b.argsID)
	})
	return out
}

// cmpStrings compares pairs of strings in turn: a0 with b0, then a1 with
// b1, and so on.
func cmpStrings(pairs ...string) int {
	for i := 0; i+1 < len(pairs); i += 2 {
		if c := strings.Compare(pairs[i], pairs[i+1]); c != 0 {
			return c
		}
	}
	return 0
}

// consumersCopy returns a copy of a queue's consumers.
func (q *queue) consumersCopy() []*consumer {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.consumers)
}

// usersCopy returns a copy of every user, sorted by name.
func (s *Server) usersCopy() []User {
	s.mu.RLock()
	out := make([]User, 0, len(s.users))
	for _, u := range s.users {
		out = append(out, copyUser(u))
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b User) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// userCopy returns a copy of user name; ok is false when there is none.
func (s *Server) userCopy(name string) (User, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u := s.users[name]
	if u == nil {
		return User{}, false
	}
	return copyUser(u), true
}

// copyUser copies a user with its own tags and permissions.
func copyUser(u *User) User {
	cp := *u
	cp.Tags = slices.Clone(u.Tags)
	cp.Permissions = make(map[string]Permission, len(u.Permissions))
	for k, v := range u.Permissions {
		cp.Permissions[k] = v
	}
	return cp
}

// updateUser applies fn to user name under the lock; it reports whether
// the user exists.
func (s *Server) updateUser(name string, fn func(*User)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.users[name]
	if u == nil {
		return false
	}
	cp := copyUser(u)
	fn(&cp)
	s.users[name] = &cp
	return true
}

// deleteUser removes user name; it reports whether it existed. The user's
// open connections stay open, as in RabbitMQ 3.10.
func (s *Server) deleteUser(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users[name] == nil {
		return false
	}
	delete(s.users, name)
	return true
}

// setPermission gives user name permissions on vhost vh; it reports
// whether it created them (false: replaced them).
func (s *Server) setPermission(name, vh string, p Permission) (created bool) {
	s.updateUser(name, func(u *User) {
		_, had := u.Permissions[vh]
		created = !had
		u.Permissions[vh] = p
	})
	return created
}

// clearPermission removes user name's permissions on vh; it reports
// whether there were any.
func (s *Server) clearPermission(name, vh string) (had bool) {
	s.updateUser(name, func(u *User) {
		_, had = u.Permissions[vh]
		delete(u.Permissions, vh)
	})
	return had
}

// clearVhostPermissions removes every user's permissions on vh, when the
// vhost is deleted.
func (s *Server) clearVhostPermissions(vh string) {
	for _, u := range s.usersCopy() {
		s.clearPermission(u.Name, vh)
	}
}

// openConns returns the connections past their handshake (conn.open),
// those RabbitMQ lists, whether or not they opened a channel.
func (s *Server) openConns() []*conn {
	var out []*conn
	s.conns.Range(func(k, _ any) bool {
		c := k.(*conn)
		if c.open.Load() {
			out = append(out, c)
		}
		return true
	})
	slices.SortFunc(out, func(a, b *conn) int { return strings.Compare(a.name(), b.name()) })
	return out
}

// Connections returns the number of client connections past their
// handshake, those the management API lists.
func (s *Server) Connections() int {
	n := 0
	s.conns.Range(func(k, _ any) bool {
		if k.(*conn).open.Load() {
			n++
		}
		return true
	})
	return n
}

// name is how RabbitMQ names a connection: "peer -> local".
func (c *conn) name() string {
	return c.nc.RemoteAddr().String() + " -> " + c.nc.LocalAddr().String()
}

// channelsCopy returns the connection's open channels, by number.
func (c *conn) channelsCopy() []*channel {
	c.mu.Lock()
	out := make([]*channel, 0, len(c.channels))
	for _, ch := range c.channels {
		out = append(out, ch)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b *channel) int { return int(a.id) - int(b.id) })
	return out
}
