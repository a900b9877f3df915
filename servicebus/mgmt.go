package servicebus

import (
	"context"
	"slices"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// Management operations (servicebus.md §2.4).
const (
	opPeek           = "com.microsoft:peek-message"
	opReceiveBySeq   = "com.microsoft:receive-by-sequence-number"
	opRenewLock      = "com.microsoft:renew-lock"
	opDisposition    = "com.microsoft:update-disposition"
	opSchedule       = "com.microsoft:schedule-message"
	opCancelSchedule = "com.microsoft:cancel-scheduled-message"
	opAddRule        = "com.microsoft:add-rule"
	opRemoveRule     = "com.microsoft:remove-rule"
	opEnumerateRules = "com.microsoft:enumerate-rules"
	opRenewSession   = "com.microsoft:renew-session-lock"
	opGetState       = "com.microsoft:get-session-state"
	opSetState       = "com.microsoft:set-session-state"
	opListSessions   = "com.microsoft:get-message-sessions"
)

// mgmtResult is an operation's outcome: a status code and a body map.
type mgmtResult struct {
	status int32
	desc   string
	body   amqp.Map
	cond   amqp.Symbol
}

// mgmtRequest serves a request on an entity's $management node. It is
// settled at once; the operation runs on its own goroutine, since some
// wait for commits, and its reply follows.
//
// A request whose transfer carries a transactional-state is part of that
// transaction: update-disposition is kept for its commit (txn.go); the
// other operations run at once, as outside one.
func (c *conn) mgmtRequest(l *link, id uint32, settled bool, body []byte, state amqp.DeliveryState) {
	r := c.acceptRequest(l, id, settled, body)
	if r == nil {
		return
	}
	m := r.msg
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		op, _ := stringProp(m.ApplicationProperties, "operation")
		req, _ := m.Value.(amqp.Map)
		var res mgmtResult
		if ts, ok := state.(*amqp.TransactionalState); ok && op == opDisposition {
			res = c.mgmtDispositionInTxn(l, ts.TxnID, req, c.requestSession(l, m, req))
		} else {
			res = c.srv().mgmt(l, op, req, c.requestSession(l, m, req))
		}
		props := amqp.Map{
			{Key: "statusCode", Value: res.status},
			{Key: "statusDescription", Value: res.desc},
		}
		if res.cond != "" {
			props = props.Set("errorCondition", string(res.cond))
		}
		resp := &amqp.Message{
			Properties:            &amqp.Properties{CorrelationID: messageID(m)},
			ApplicationProperties: props,
		}
		if res.body != nil {
			resp.Value, resp.HasValue = res.body, true
		}
		c.log.Debug("management", "op", op, "entity", l.path, "status", res.status)
		c.sendResponse(r, resp)
	}()
}

// mgmtNode is the node a management request on link l is about: the
// entity its address names when the request comes. A management link
// outlives its entity, and the SDKs keep theirs open across a delete: the
// service serves a request on it about the entity of that name made
// since (the Java SDK's rule manager listed a deleted subscription's
// rules). A queue's node is the one l attached to while that queue lives.
func (s *Server) mgmtNode(l *link) *node {
	n := l.node
	if n == nil || n.live() {
		return n
	}
	if ad, ok := parseAddress(l.addr); ok {
		if now := s.resolve(ad); now != nil {
			return now
		}
	}
	return nil
}

func ok(body amqp.Map) mgmtResult { return mgmtResult{status: 200, desc: "OK", body: body} }

func failed(err error) mgmtResult {
	st, desc := statusOf(err)
	r := mgmtResult{status: st, desc: desc}
	if core.ErrorCode(err) == core.ELOCKLOST {
		r.cond = condLockLost
	} else if st < 500 {
		r.cond = amqpError(err).Condition
	}
	return r
}

// mgmt runs one management operation; rs is the session it is about, if
// any.
func (s *Server) mgmt(l *link, op string, req amqp.Map, rs reqSession) mgmtResult {
	n := s.mgmtNode(l)
	if n == nil && op != opSchedule && op != opCancelSchedule {
		return failed(notFound(l.path))
	}
	switch op {
	case opPeek:
		return s.mgmtPeek(n, req, rs)
	case opReceiveBySeq:
		return s.mgmtReceiveBySeq(n, req, rs)
	case opRenewLock:
		var exp []time.Time
		for _, tok := range uuids(req, "lock-tokens") {
			t, err := s.renewToken(tok, rs.holder)
			if err != nil {
				return failed(err)
			}
			exp = append(exp, t.UTC())
		}
		return ok(amqp.Map{{Key: "expirations", Value: exp}})
	case opDisposition:
		status, _ := stringProp(req, "disposition-status")
		reason, _ := stringProp(req, "deadletter-reason")
		desc, _ := stringProp(req, "deadletter-description")
		props, _ := get[amqp.Map](req, "properties-to-modify")
		for _, tok := range uuids(req, "lock-tokens") {
			if err := s.settleToken(tok, rs.holder, status, props, reason, desc, true); err != nil {
				return failed(err)
			}
		}
		return ok(nil)
	case opRenewSession, opGetState, opSetState, opListSessions:
		return s.mgmtSession(n, op, req, rs)
	case opSchedule:
		return s.mgmtSchedule(l, req)
	case opCancelSchedule:
		return s.mgmtCancel(l, req)
	case opAddRule, opRemoveRule, opEnumerateRules:
		return s.mgmtRules(n, op, req)
	}
	return failed(core.Errorf(core.EINVALID, "The operation '%s' is not supported.", op))
}

// mgmtPeek browses from a sequence number (SB-6: browsing never locks;
// SB-11: the header shows the TTL the message carried). Subscriptions do
// not show scheduled messages; queues do.
func (s *Server) mgmtPeek(n *node, req amqp.Map, rs reqSession) mgmtResult {
	from, _ := intProp(req, "from-sequence-number")
	count, _ := intProp(req, "message-count")
	if count <= 0 {
		count = 1
	}
	count = min(count, 1000)
	var its []core.Item
	var err error
	if rs.id != "" && n.requiresSession() {
		// a session receiver peeks its session only
		its, err = s.e.PeekSession(s.now(), n.key, rs.id, uint64(max(from, 0)), int(count)*2)
	} else {
		its, err = s.e.Peek(s.now(), n.key, uint64(max(from, 0)), int(count)*2)
	}
	if err != nil {
		return failed(err)
	}
	if n.sub != nil {
		s.e.Touch(s.now(), n.sub.topic.key, core.UseChild)
	}
	var msgs []any
	for i := range its {
		if len(msgs) >= int(count) {
			break
		}
		if n.sub != nil && its[i].State == core.Scheduled {
			continue
		}
		b, err := encodeDelivery(nil, n, &its[i], delivery{peek: true})
		if err != nil {
			return failed(err)
		}
		msgs = append(msgs, amqp.Map{{Key: "message", Value: b}})
	}
	if len(msgs) == 0 {
		return mgmtResult{status: 204, desc: "No messages to peek."}
	}
	return ok(amqp.Map{{Key: "messages", Value: msgs}})
}

// mgmtReceiveBySeq receives deferred messages (SB-9: an expired one is
// dead-lettered or dropped and not returned). When it finds none it fails
// with com.microsoft:message-not-found.
func (s *Server) mgmtReceiveBySeq(n *node, req amqp.Map, rs reqSession) mgmtResult {
	mode, _ := intProp(req, "receiver-settle-mode")
	session := n.requiresSession()
	var msgs []any
	for _, seq := range longs(req, "sequence-numbers") {
		now := s.now()
		var it core.Item
		var found bool
		var err error
		if session {
			// a session's deferred messages go to the holder of the
			// session only (SS-5)
			it, found, _, err = s.e.TakeDeferredSession(now, n.key, rs.id, rs.holder, uint64(seq))
		} else {
			it, found, _, err = s.e.TakeDeferred(now, n.key, uint64(seq), now.Add(n.lockDuration()))
		}
		if err != nil {
			return failed(sessionError(err, rs.id))
		}
		if !found {
			continue
		}
		d := delivery{}
		if mode == 0 { // receive-and-delete
			if _, err := s.held(n, &it, rs.holder).complete(now); err != nil {
				return failed(sessionError(err, rs.id))
			}
			it.State = core.Active
		} else {
			d.locked = true
			d.lockToken = lockToken(n, &it)
			// The service shows a message received by sequence number as
			// deferred (x-opt-message-state 1), as its clients' live tests
			// assert; the lock is what changed.
			it.State = core.Deferred
		}
		b, err := encodeDelivery(nil, n, &it, d)
		if err != nil {
			return failed(err)
		}
		entry := amqp.Map{{Key: "message", Value: b}}
		if d.locked {
			entry = entry.Set("lock-token", d.lockToken)
		}
		msgs = append(msgs, entry)
	}
	if len(msgs) == 0 {
		// The service answers an error, not 204: @azure/service-bus reads
		// the body's messages unconditionally and fails on an empty reply,
		// where this gives it MessageNotFound (azservicebus an error either
		// way).
		return mgmtResult{status: 404, cond: condMessageNotFound,
			desc: "Failed to lock one or more specified messages. Either the message is already locked or does not exist."}
	}
	return ok(amqp.Map{{Key: "messages", Value: msgs}})
}

// condMessageNotFound is the condition of a receive-by-sequence-number that
// finds none of the messages.
const condMessageNotFound = amqp.Symbol("com.microsoft:message-not-found")

// mgmtSchedule schedules messages (SB-4); they get their sequence numbers
// now.
func (s *Server) mgmtSchedule(l *link, req amqp.Map) mgmtResult {
	list, _ := get[[]any](req, "messages")
	var ins []*inMsg
	for _, x := range list {
		entry, _ := x.(amqp.Map)
		raw, _ := get[[]byte](entry, "message")
		in, err := s.readMessage(raw)
		if err != nil {
			return failed(err)
		}
		if in.scheduled.IsZero() {
			return failed(core.Errorf(core.EINVALID, "The message to schedule has no x-opt-scheduled-enqueue-time."))
		}
		ins = append(ins, in)
	}
	// The messages are stored whole or not at all, as a batch is.
	ps, c, err := s.send(s.now(), l.path, ins...)
	if err != nil {
		return failed(err)
	}
	if err := c.Wait(context.Background()); err != nil {
		return failed(err)
	}
	seqs := make([]int64, len(ins))
	for i := range ins {
		var mine []placed
		for _, p := range ps {
			if p.msg == i {
				mine = append(mine, p)
			}
		}
		seq, err := s.scheduleID(l.path, mine)
		if err != nil {
			return failed(err)
		}
		seqs[i] = seq
	}
	return ok(amqp.Map{{Key: "sequence-numbers", Value: seqs}})
}

// schedKey names a message scheduled on a topic: the topic's path and
// the number the topic gave it.
type schedKey struct {
	path string
	seq  int64
}

// scheduleID returns the sequence number a scheduled message is known by:
// its own in a queue; for a topic, the topic's, which its copies in the
// subscriptions carry (issue 25.3), or one the topic reserves when none
// took it. The copies that do not carry it are kept by it in memory.
func (s *Server) scheduleID(path string, ps []placed) (int64, error) {
	if s.queue(path) != nil {
		if len(ps) == 0 {
			return 0, nil // a duplicate, dropped
		}
		return int64(ps[0].seq), nil
	}
	te := s.topic(path)
	if te == nil {
		return 0, notFound(path)
	}
	var seq uint64
	for _, p := range ps {
		if p.from == te.key {
			seq = p.seq // the first copy of a share carries its number
			break
		}
	}
	if seq == 0 {
		n, c, err := s.e.ReserveSeq(s.now(), te.key)
		if err != nil {
			return 0, err
		}
		if err := c.Wait(context.Background()); err != nil {
			return 0, err
		}
		seq = n
	}
	var extra []placed
	for _, p := range ps {
		if p.from != te.key || p.seq != seq {
			extra = append(extra, p)
		}
	}
	if len(extra) == 0 {
		return int64(seq), nil
	}
	s.schedMu.Lock()
	defer s.schedMu.Unlock()
	if s.scheduled == nil {
		s.scheduled = map[schedKey][]placed{}
	}
	if len(s.scheduled) >= max(s.schedPrune, minSchedPrune) {
		// Messages enqueued at their time are past cancelling: their
		// entries go, each time the map has doubled since, so that it
		// keeps only what can still be cancelled.
		now := s.now()
		for id, ps := range s.scheduled {
			if !slices.ContainsFunc(ps, func(p placed) bool { return s.stillScheduled(now, p) }) {
				delete(s.scheduled, id)
			}
		}
		s.schedPrune = 2 * len(s.scheduled)
	}
	s.scheduled[schedKey{path, int64(seq)}] = extra
	return int64(seq), nil
}

// minSchedPrune is the least size of Server.scheduled that is pruned.
const minSchedPrune = 1024

// stillScheduled reports whether the copy p is stored and scheduled.
func (s *Server) stillScheduled(now time.Time, p placed) bool {
	its, err := s.e.Peek(now, p.key, p.seq, 1)
	return err == nil && len(its) > 0 && its[0].Seq == p.seq && its[0].State == core.Scheduled
}

// mgmtCancel cancels scheduled messages.
func (s *Server) mgmtCancel(l *link, req amqp.Map) mgmtResult {
	for _, seq := range longs(req, "sequence-numbers") {
		now := s.now()
		var targets []placed
		if qe := s.queue(l.path); qe != nil {
			targets = []placed{{key: qe.main.key, seq: uint64(seq)}}
		} else {
			// the copies that carry the topic's number, and those kept
			// by it
			if te := s.topic(l.path); te != nil {
				s.mu.RLock()
				for _, se := range te.subs {
					if !se.live() {
						continue
					}
					targets = append(targets, placed{key: se.main.key, seq: uint64(seq)})
				}
				s.mu.RUnlock()
			}
			s.schedMu.Lock()
			targets = append(targets, s.scheduled[schedKey{l.path, seq}]...)
			delete(s.scheduled, schedKey{l.path, seq})
			s.schedMu.Unlock()
		}
		for _, p := range targets {
			if !s.stillScheduled(now, p) {
				continue
			}
			c, err := s.e.Remove(now, p.key, p.seq)
			if err == nil {
				c.Wait(context.Background())
			}
		}
	}
	return ok(nil)
}

// Reading request maps.

func get[T any](m amqp.Map, k string) (T, bool) {
	v, found := m.Get(k)
	t, ok := v.(T)
	return t, found && ok
}

// intProp reads the integer k of m, as anyInt reads it.
func intProp(m amqp.Map, k string) (int64, bool) {
	v, found := m.Get(k)
	if !found {
		return 0, false
	}
	return anyInt(v)
}

func longs(m amqp.Map, k string) []int64 {
	v, _ := m.Get(k)
	switch x := v.(type) {
	case []int64:
		return x
	case []any:
		var out []int64
		for _, e := range x {
			if n, ok := e.(int64); ok {
				out = append(out, n)
			}
		}
		return out
	case int64:
		return []int64{x}
	}
	return nil
}

func uuids(m amqp.Map, k string) []amqp.UUID {
	v, _ := m.Get(k)
	switch x := v.(type) {
	case []amqp.UUID:
		return x
	case []any:
		var out []amqp.UUID
		for _, e := range x {
			if u, ok := e.(amqp.UUID); ok {
				out = append(out, u)
			}
		}
		return out
	case amqp.UUID:
		return []amqp.UUID{x}
	}
	return nil
}
