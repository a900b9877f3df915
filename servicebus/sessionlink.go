package servicebus

import (
	"fmt"
	"math"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// Session receivers: a receiving link whose source carries the filter
// com.microsoft:session-filter holds one session of a queue or
// subscription that requires sessions, named by the filter or, when its
// value is null, the next session with an available message (SS-1). The
// attach reply echoes the filter with the session's id and carries the
// session lock's expiry in the link property
// com.microsoft:locked-until-utc. With no session available the reply
// waits up to com.microsoft:timeout; a session held by another receiver
// is refused with com.microsoft:session-cannot-be-locked. Closing the link
// releases the session; when its lock runs out (SS-3) the link is
// detached with com.microsoft:session-lock-lost.

// Link properties of session receivers.
const (
	propTimeout     = "com.microsoft:timeout"
	propLockedUntil = "com.microsoft:locked-until-utc"
)

// defaultAcceptTimeout bounds the wait for a next session when the client
// gives no com.microsoft:timeout (the service's one minute).
const defaultAcceptTimeout = time.Minute

// sessionHold is the session a receiver link holds, or asks for.
type sessionHold struct {
	// holder is the holder id the link holds its session under.
	holder string
	// next is true when the link asked for the next available session;
	// id is then "" until one is accepted.
	next bool
	id   string
	// timeout bounds the wait for a next session.
	timeout time.Duration
	// filterKey and described say how the client wrote the filter, to
	// echo it in the same form (go-amqp reads a described value, rhea a
	// plain one).
	filterKey  any
	descriptor any
	described  bool
	// The link's state, guarded by link.mu: accepted once the session is
	// held, attached once the attach reply went out, cancelled when the
	// client detached before it, released once the session is given back.
	accepted, attached, cancelled, released bool
	// refused is the error the server detached the link with before its
	// attach was answered (its queue was deleted): the link's goroutine
	// answers the attach with it.
	refused *amqp.Error
}

// readSessionFilter reads a session receiver's source filter and link
// properties; ok is false when the source has no session filter.
func readSessionFilter(a *amqp.Attach) (h *sessionHold, ok bool, err *amqp.Error) {
	if a.Source == nil {
		return nil, false, nil
	}
	for _, kv := range a.Source.Filter {
		if !isKey(kv.Key, sessionFilter) {
			continue
		}
		h = &sessionHold{filterKey: kv.Key, timeout: defaultAcceptTimeout}
		v := kv.Value
		if d, isD := v.(*amqp.Described); isD {
			h.described, h.descriptor, v = true, d.Descriptor, d.Value
		}
		switch x := v.(type) {
		case nil:
			h.next = true
		case string:
			h.id = x
		case amqp.Symbol:
			h.id = string(x)
		case []byte:
			h.id = string(x)
		default:
			return nil, true, &amqp.Error{Condition: condInvalidField, Description: fmt.Sprintf("The session filter's value must be a string or null, not %T.", v)}
		}
		if h.id == "" {
			h.next = true
		}
		if t, found := a.Properties.Get(propTimeout); found {
			if ms, isInt := anyInt(t); isInt && ms > 0 {
				h.timeout = time.Duration(ms) * time.Millisecond
			}
		}
		return h, true, nil
	}
	return nil, false, nil
}

func isKey(k any, s string) bool {
	switch k := k.(type) {
	case string:
		return k == s
	case amqp.Symbol:
		return string(k) == s
	}
	return false
}

// anyInt reads an AMQP integer of any width (and a whole double, as a JS
// client may send a number).
func anyInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return math.MaxInt64, true
		}
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint8:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && x >= 0 && x < math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// dotNetTicks is t in .NET ticks (100 ns since 0001-01-01), the form of
// com.microsoft:locked-until-utc.
func dotNetTicks(t time.Time) int64 {
	const unixEpochTicks = 621355968000000000
	return unixEpochTicks + t.UnixNano()/100
}

// sessionReply fills the attach reply of a link that holds its session:
// the source with the filter naming the session, and the lock's expiry.
func (l *link) sessionReply(reply *amqp.Attach, a *amqp.Attach, lockedUntil time.Time) {
	h := l.sess
	src := *a.Source
	src.Filter = make(amqp.Map, 0, len(a.Source.Filter))
	for _, kv := range a.Source.Filter {
		if isKey(kv.Key, sessionFilter) {
			var v any = h.id
			if h.described {
				v = &amqp.Described{Descriptor: h.descriptor, Value: h.id}
			}
			kv = amqp.KV{Key: h.filterKey, Value: v}
		}
		src.Filter = append(src.Filter, kv)
	}
	reply.Source = &src
	reply.Properties = amqp.Map{{Key: amqp.Symbol(propLockedUntil), Value: dotNetTicks(lockedUntil)}}
}

// acceptSession tries to accept the link's session: the named one, or the
// next available. It returns the lock's expiry.
func (l *link) acceptSession() (time.Time, error) {
	s := l.ss.c.srv()
	n := l.node
	now := s.now()
	info, err := s.e.AcceptSession(now, n.key, l.sess.id, l.sess.holder, now.Add(n.lockDuration()))
	if err != nil {
		return time.Time{}, err
	}
	if n.sub != nil {
		s.e.Touch(now, n.sub.topic.key, core.UseChild)
	}
	l.mu.Lock()
	l.sess.id, l.sess.accepted = info.ID, true
	l.mu.Unlock()
	l.ss.c.holdLink(l)
	return info.LockedUntil, nil
}

// errSessionCannotBeLocked is the service's refusal of a session another
// receiver holds.
func errSessionCannotBeLocked(id string) error {
	return core.Errorf(core.ERESOURCELOCKED, "The requested session '%s' cannot be accepted. It may be locked by another receiver.", id)
}

// errSessionLockLost is the service's error for a session whose lock ran
// out or was released.
func errSessionLockLost() error {
	return core.Errorf(core.ESESSIONLOCKLOST, "The session lock has expired on the MessageSession. Accept a new MessageSession.")
}

// sessionError gives core's session errors the service's words.
func sessionError(err error, id string) error {
	switch core.ErrorCode(err) {
	case core.ESESSIONLOCKLOST:
		return errSessionLockLost()
	case core.ERESOURCELOCKED:
		return errSessionCannotBeLocked(id)
	}
	return err
}

// awaitSession waits for a next session to accept, up to the link's
// timeout, and sends the attach reply: the session's, or, when none came,
// a null source and a detach with com.microsoft:timeout. It returns false
// when the link ends without a session.
func (l *link) awaitSession(a *amqp.Attach, reply *amqp.Attach) bool {
	timer := time.NewTimer(l.sess.timeout)
	defer timer.Stop()
	for {
		until, err := l.acceptSession()
		if err == nil {
			l.mu.Lock()
			if l.sess.cancelled || l.sess.refused != nil {
				refused := l.sess.refused
				l.mu.Unlock()
				l.releaseSession()
				if refused != nil {
					l.ss.removeLink(l)
				}
				l.refusePending(reply, refused)
				return false
			}
			l.sessionReply(reply, a, until)
			l.sess.attached = true
			l.ss.write(reply)
			l.mu.Unlock()
			return true
		}
		if core.ErrorCode(err) != core.ENOSESSION {
			l.ss.removeLink(l)
			l.refusePending(reply, amqpError(sessionError(err, "")))
			return false
		}
		select {
		case <-l.wakeCh:
		case <-timer.C:
			l.ss.removeLink(l)
			l.refusePending(reply, &amqp.Error{Condition: condTimeout,
				Description: l.ss.c.srv().tracked(fmt.Sprintf("The operation did not complete within the allotted timeout of %s. The time allotted to this operation may have been a portion of a longer timeout.", formatTimeSpan(l.sess.timeout)), l.node)})
			return false
		case <-l.done:
			l.mu.Lock()
			cancelled, refused := l.sess.cancelled, l.sess.refused
			l.mu.Unlock()
			switch {
			case refused != nil:
				l.ss.removeLink(l)
				l.refusePending(reply, refused)
			case cancelled:
				l.refusePending(reply, nil)
			}
			return false
		}
	}
}

// refusePending answers a pending session receiver's attach as a refusal
// and a detach, with the error or, for a client that detached first, as
// the answer to its detach.
func (l *link) refusePending(reply *amqp.Attach, e *amqp.Error) {
	refusal(reply)
	l.ss.write(reply, &amqp.Detach{Handle: l.handle, Closed: true, Error: e})
	if e != nil {
		l.ss.c.log.Debug("session receiver refused", "name", l.name, "condition", e.Condition, "description", e.Description)
	}
}

// formatTimeSpan writes a duration as .NET's TimeSpan prints it,
// hh:mm:ss.fffffff.
func formatTimeSpan(d time.Duration) string {
	h := d / time.Hour
	d -= h * time.Hour
	m := d / time.Minute
	d -= m * time.Minute
	sec := d / time.Second
	d -= sec * time.Second
	return fmt.Sprintf("%02d:%02d:%02d.%07d", h, m, sec, d/100)
}

// refuseIfPending has a session receiver whose attach is not answered yet
// refused with e by its goroutine, and stops it; false when the link is
// not such a receiver, for the usual detach. A detach before the answer
// to the client's attach would name a link the client does not have yet.
func (l *link) refuseIfPending(e *amqp.Error) bool {
	if l.sess == nil {
		return false
	}
	l.mu.Lock()
	// Refused twice, it keeps the first error and still gets no detach
	// of its own.
	pending := !l.sess.attached && !l.sess.cancelled
	if pending && l.sess.refused == nil {
		l.sess.refused = e
	}
	l.mu.Unlock()
	if pending {
		l.stop()
	}
	return pending
}

// cancelPending is the client's detach of a session receiver whose attach
// the server has not answered yet: the link's goroutine answers with a
// null source and the detach. It returns false when the link is attached
// already, for the usual detach.
func (l *link) cancelPending() bool {
	if l.sess == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess.attached {
		return false
	}
	l.sess.cancelled = true
	return true
}

// releaseSession gives the link's session back, once: the client closed
// the receiver, the connection ended, or the server detached the link.
func (l *link) releaseSession() {
	if l.sess == nil {
		return
	}
	l.mu.Lock()
	h := l.sess
	if !h.accepted || h.released {
		l.mu.Unlock()
		return
	}
	h.released = true
	id, holder := h.id, h.holder
	l.mu.Unlock()
	l.ss.c.unholdLink(l)
	s := l.ss.c.srv()
	if err := s.e.ReleaseSession(s.now(), l.node.key, id, holder); err != nil && core.ErrorCode(err) != core.ENOTFOUND {
		s.log().Warn("releasing a session", "entity", l.path, "session", id, "err", err)
	}
}

// heldSession returns the session the link holds and its holder id; ok is
// false when it holds none.
func (l *link) heldSession() (id, holder string, ok bool) {
	if l.sess == nil {
		return "", "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sess.id, l.sess.holder, l.sess.accepted && !l.sess.released
}

// holdLink and unholdLink keep the connection's index of the session
// receivers that hold a session, by link name, for management requests
// (associated-link-name, session-id).
func (c *conn) holdLink(l *link) {
	c.hmu.Lock()
	if c.held == nil {
		c.held = map[string]*link{}
	}
	c.held[l.name] = l
	c.hmu.Unlock()
}

func (c *conn) unholdLink(l *link) {
	c.hmu.Lock()
	if c.held[l.name] == l {
		delete(c.held, l.name)
	}
	c.hmu.Unlock()
}

// sessionHolder finds the session a management request on node n is
// about, and the holder the connection holds it under: the request's
// session-id, else the session of the receiver named by its
// associated-link-name. holder is "" when no receiver of the connection
// holds the session.
func (c *conn) sessionHolder(n *node, sessionID, linkName string) (group, holder string) {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if sessionID == "" {
		if l := c.held[linkName]; l != nil && l.node == n {
			id, h, _ := l.heldSession()
			return id, h
		}
		return "", ""
	}
	if l := c.held[linkName]; l != nil && l.node == n {
		if id, h, _ := l.heldSession(); id == sessionID {
			return id, h
		}
	}
	for _, l := range c.held {
		if l.node != n {
			continue
		}
		if id, h, _ := l.heldSession(); id == sessionID {
			return id, h
		}
	}
	return sessionID, ""
}
