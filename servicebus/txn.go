package servicebus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// Service Bus transactions (AMQP 1.0 local transactions, §4 of the spec;
// docs/servicebus.md, "Transactions"). A client attaches a link whose
// target is a coordinator, declares a transaction there and gets its
// txn-id; transfers and dispositions that carry the txn-id in a
// transactional-state are kept aside, not applied; a discharge with fail
// false applies all of them in one engine operation (core's Transact: all
// or nothing, one Commit), with fail true forgets them. Nothing a
// transaction holds is in the engine before its commit, so a rollback
// leaves every message it settled locked as it was and sends nothing.

// txnTimeout is how long a transaction may last from its first operation:
// the service rolls back one that is still open after 2 minutes.
const txnTimeout = 2 * time.Minute

// Transaction conditions (§4.5.8) and the service's descriptions.
const (
	condTxnUnknown  = amqp.Symbol("amqp:transaction:unknown-id")
	condTxnRollback = amqp.Symbol("amqp:transaction:rollback")
	condTxnTimeout  = amqp.Symbol("amqp:transaction:timeout")

	descTxnUnknown = "Transaction hasn't been declared yet, or has already been discharged"
	descTxnSpan    = "Local transactions cannot span multiple top-level entities such as queue or topic."
)

// txn is an open transaction of a connection.
type txn struct {
	id    string
	coord *link // the coordinator link it was declared on
	// via is the top-level entity (a queue or topic name) of its first
	// operation: every later one must be on it too, a send through it
	// (send-via) included, unless the operation comes on the session of
	// its coordinator link and that link came before any link to an
	// entity on the session (link.crossEntity: the Java SDK's
	// enableCrossEntityTransactions puts every link on one session, the
	// coordinator first, and adds no send-via property; without it, each
	// entity has a session of its own). Empty until the first operation.
	via     string
	first   time.Time // when its first operation came
	sends   []txnSend
	settles []txnSettle
	// doomed is the refusal of one of its operations: it cannot commit
	// (its discharge is refused with amqp:transaction:rollback). The
	// Java SDK takes any transactional-state answering a send for a
	// success, so a refused send must fail the commit to be seen.
	doomed *amqp.Error
}

// txnSend is a transfer kept for the commit: the messages and where the
// link sends them.
type txnSend struct {
	path string
	ins  []*inMsg
}

// txnSettle is a settlement kept for the commit.
type txnSettle struct {
	tok          amqp.UUID
	holder       string
	op           string // as settleToken's
	props        amqp.Map
	reason, desc string
}

// topLevel returns the queue or topic an entity path belongs to: a
// subscription's topic, a dead-letter queue's owner.
func topLevel(path string) string {
	if ad, ok := parseAddress(path); ok {
		return strings.ToLower(ad.entity)
	}
	return strings.ToLower(path)
}

// errTxnUnknown is the service's refusal of an unknown or discharged
// txn-id.
func errTxnUnknown() *amqp.Error {
	return &amqp.Error{Condition: condTxnUnknown, Description: descTxnUnknown}
}

// coordinate serves a declare or a discharge sent on a coordinator link.
func (c *conn) coordinate(l *link, id uint32, settled bool, body []byte) {
	m, err := amqp.UnmarshalMessage(body)
	if err != nil {
		c.answerTxn(l, id, settled, &amqp.Rejected{Error: &amqp.Error{Condition: condDecode, Description: "The request could not be decoded: " + err.Error()}})
		return
	}
	switch v := m.Value.(type) {
	case *amqp.Declare:
		if v.GlobalID != nil {
			c.answerTxn(l, id, settled, &amqp.Rejected{Error: &amqp.Error{Condition: condNotImplemented, Description: "Distributed transactions are not supported."}})
			return
		}
		t := &txn{id: fmt.Sprintf("txn:%d:%d", c.id, c.srv().ntxn.Add(1)), coord: l}
		c.txmu.Lock()
		if c.txns == nil {
			c.txns = map[string]*txn{}
		}
		c.txns[t.id] = t
		c.txmu.Unlock()
		c.log.Debug("transaction declared", "txn", t.id)
		c.answerTxn(l, id, settled, &amqp.Declared{TxnID: []byte(t.id)})
	case *amqp.Discharge:
		t := c.takeTxn(string(v.TxnID))
		if t == nil {
			c.answerTxn(l, id, settled, &amqp.Rejected{Error: errTxnUnknown()})
			return
		}
		if v.Fail {
			c.log.Debug("transaction rolled back", "txn", t.id)
			c.answerTxn(l, id, settled, &amqp.Accepted{})
			return
		}
		if t.doomed != nil {
			c.log.Debug("transaction rolled back: an operation in it was refused", "txn", t.id, "refusal", t.doomed.Description)
			c.answerTxn(l, id, settled, &amqp.Rejected{Error: &amqp.Error{Condition: condTxnRollback,
				Description: "The transaction was rolled back: an operation in it was refused: " + t.doomed.Description}})
			return
		}
		// The commit waits for the store: on its own goroutine, as a
		// management request does.
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			var state amqp.DeliveryState = &amqp.Accepted{}
			if err := c.srv().commitTxn(c.ctx, t); err != nil {
				c.log.Debug("transaction commit failed", "txn", t.id, "err", err)
				e := amqpError(err)
				if e.Condition == condInternal {
					e = &amqp.Error{Condition: condTxnRollback, Description: e.Description}
				}
				state = &amqp.Rejected{Error: e}
			} else {
				c.log.Debug("transaction committed", "txn", t.id, "sends", len(t.sends), "settlements", len(t.settles))
			}
			c.answerTxn(l, id, settled, state)
		}()
	default:
		c.answerTxn(l, id, settled, &amqp.Rejected{Error: &amqp.Error{Condition: condNotAllowed,
			Description: "A coordinator takes declare and discharge messages only."}})
	}
}

// answerTxn settles a delivery of the coordinator link with state.
func (c *conn) answerTxn(l *link, id uint32, settled bool, state amqp.DeliveryState) {
	if settled {
		return
	}
	l.ss.writeFor(l, &amqp.Disposition{Role: amqp.RoleReceiver, First: id, Settled: true, State: state})
}

// takeTxn removes transaction id from the connection and returns it, nil
// when there is none.
func (c *conn) takeTxn(id string) *txn {
	c.txmu.Lock()
	defer c.txmu.Unlock()
	t := c.txns[id]
	delete(c.txns, id)
	return t
}

// dropTxns rolls back the open transactions declared on coordinator link
// l, or every one of the connection when l is nil: a transaction ends
// with its coordinator link and with its connection.
func (c *conn) dropTxns(l *link) {
	c.txmu.Lock()
	defer c.txmu.Unlock()
	for id, t := range c.txns {
		if l == nil || t.coord == l {
			delete(c.txns, id)
			c.log.Debug("transaction rolled back: its link or connection ended", "txn", id)
		}
	}
}

// enlist adds an operation on entity path to transaction id with add, if
// the transaction is open, not past its timeout, and path is its entity
// (the first operation's, which a send-via link also sends through). A
// transaction past its timeout is rolled back.
func (c *conn) enlist(ss *session, id []byte, path string, add func(*txn)) *amqp.Error {
	now := c.srv().now()
	c.txmu.Lock()
	defer c.txmu.Unlock()
	t := c.txns[string(id)]
	if t == nil {
		return errTxnUnknown()
	}
	if !t.first.IsZero() && now.Sub(t.first) > txnTimeout {
		delete(c.txns, t.id)
		return &amqp.Error{Condition: condTxnTimeout, Description: fmt.Sprintf("The transaction %s timed out after %s and was rolled back.", t.id, txnTimeout)}
	}
	top := topLevel(path)
	switch {
	case t.via == "":
		t.via, t.first = top, now
	case t.via != top && !(t.coord.crossEntity && ss == t.coord.ss):
		t.doomed = &amqp.Error{Condition: condNotAllowed, Description: descTxnSpan}
		return t.doomed
	}
	add(t)
	return nil
}

// doom marks transaction id as unable to commit: e refused one of its
// operations.
func (c *conn) doom(id []byte, e *amqp.Error) {
	c.txmu.Lock()
	defer c.txmu.Unlock()
	if t := c.txns[string(id)]; t != nil && t.doomed == nil {
		t.doomed = e
	}
}

// txnState answers a transactional transfer: its outcome inside a
// transactional-state.
func txnState(id []byte, e *amqp.Error) amqp.DeliveryState {
	var out amqp.DeliveryState = &amqp.Accepted{}
	if e != nil {
		out = &amqp.Rejected{Error: e}
	}
	return &amqp.TransactionalState{TxnID: id, Outcome: out}
}

// sendInTxn keeps what a client sent in transaction ts.TxnID for its
// commit, once the messages decode and their entity would take them.
func (s *Server) sendInTxn(l *link, id uint32, settled bool, ts *amqp.TransactionalState, ins []*inMsg) {
	now := s.now()
	// Routed now as they will be at the commit, so that a message the
	// entity refuses (no session id for a session queue) is refused
	// here; the message ids the plan claimed are given back.
	p := plan{}
	var err error
	for i, in := range ins {
		if err = s.route(now, l.sendPath(), in, 0, &p, i, false); err != nil {
			break
		}
	}
	for _, x := range p.ids {
		x.d.release(x.id)
	}
	var e *amqp.Error
	if err != nil {
		e = amqpError(err)
		l.ss.c.doom(ts.TxnID, e)
	} else {
		e = l.ss.c.enlist(l.ss, ts.TxnID, l.path, func(t *txn) {
			t.sends = append(t.sends, txnSend{path: l.sendPath(), ins: ins})
		})
	}
	if !settled {
		l.ss.writeFor(l, &amqp.Disposition{Role: amqp.RoleReceiver, First: id, Settled: true, State: txnState(ts.TxnID, e)})
	}
}

// settleInTxn keeps the client's outcome for a locked delivery for the
// commit of transaction ts.TxnID and returns the state to echo.
func (l *link) settleInTxn(od *outDelivery, ts *amqp.TransactionalState) amqp.DeliveryState {
	_, holder, _ := l.heldSession()
	op, props, reason, desc := "", amqp.Map(nil), "", ""
	switch st := ts.Outcome.(type) {
	case *amqp.Accepted:
		op = "completed"
	case *amqp.Released:
		op = "abandoned"
	case *amqp.Modified:
		op, props = "abandoned", st.MessageAnnotations
		if st.UndeliverableHere {
			op = "defered"
		}
	case *amqp.Rejected:
		op = "suspended"
		reason, desc, props = deadLetterInfo(st.Error)
	default:
		return txnState(ts.TxnID, &amqp.Error{Condition: condInvalidField, Description: "A transactional disposition needs an outcome."})
	}
	return txnState(ts.TxnID, l.ss.c.srv().settleTokenInTxn(l.ss, ts.TxnID, od.token, holder, op, props, reason, desc))
}

// settleTokenInTxn checks that the lock token's message is still locked
// and keeps its settlement for the commit of transaction id.
func (s *Server) settleTokenInTxn(ss *session, id []byte, tok amqp.UUID, holder, op string, props amqp.Map, reason, desc string) *amqp.Error {
	switch op {
	case "completed", "abandoned", "defered", "suspended":
	default:
		return amqpError(core.Errorf(core.EINVALID, "The disposition status '%s' is not valid.", op))
	}
	n, _, err := s.lockedItem(s.now(), tok)
	if err != nil {
		return amqpError(err)
	}
	var dup bool
	e := ss.c.enlist(ss, id, n.path(), func(t *txn) {
		for _, x := range t.settles {
			if x.tok == tok {
				dup = true
				return
			}
		}
		t.settles = append(t.settles, txnSettle{tok: tok, holder: holder, op: op, props: props, reason: reason, desc: desc})
	})
	if e == nil && dup {
		e = amqpError(errLockLost())
	}
	return e
}

// commitTxn applies transaction t: its settlements and its sends, in one
// engine operation, and waits for the commit.
func (s *Server) commitTxn(ctx context.Context, t *txn) (err error) {
	now := s.now()
	if !t.first.IsZero() && now.Sub(t.first) > txnTimeout {
		return &amqp.Error{Condition: condTxnTimeout, Description: fmt.Sprintf("The transaction %s timed out after %s and was rolled back.", t.id, txnTimeout)}
	}
	var ss []core.Settlement
	for _, x := range t.settles {
		st, err := s.settlement(now, x)
		if err != nil {
			return err
		}
		ss = append(ss, st)
	}
	p := plan{touch: true}
	defer func() { p.settleIDs(now, err) }()
	msg := 0
	for _, sd := range t.sends {
		for _, in := range sd.ins {
			if err := s.route(now, sd.path, in, 0, &p, msg, false); err != nil {
				return err
			}
			msg++
		}
	}
	if len(ss) == 0 && len(p.targets) == 0 {
		return nil
	}
	_, c, err := s.e.Transact(now, ss, p.targets)
	if err != nil {
		return err
	}
	return c.Wait(ctx)
}

// settlement turns a kept settlement into the engine's, with the lock
// token's message as it is now.
func (s *Server) settlement(now time.Time, x txnSettle) (core.Settlement, error) {
	n, it, err := s.lockedItem(now, x.tok)
	if err != nil {
		return core.Settlement{}, err
	}
	st := core.Settlement{Key: n.key, Seq: it.Seq, DeliveryCount: it.DeliveryCount}
	if n.requiresSession() {
		st.Group, st.Holder = it.Group, x.holder
	}
	if len(x.props) > 0 && x.op != "completed" {
		m := readItemMeta(it.Meta)
		if err := m.modify(x.props); err != nil {
			return core.Settlement{}, err
		}
		st.Meta = m.marshal()
	}
	switch x.op {
	case "completed":
		st.Action = core.SettleComplete
	case "abandoned":
		st.Action = core.SettleRelease
		if max := n.maxDeliveryCount(); max > 0 && it.DeliveryCount >= uint32(max) {
			st.Action, st.Why = core.SettleDeadLetter, maxDeliveryReason(max)
		}
	case "defered":
		st.Action = core.SettleDefer
	case "suspended":
		st.Action, st.Why = core.SettleDeadLetter, core.DeadLetterReason{Code: x.reason, Description: x.desc}
	}
	return st, nil
}

// mgmtDispositionInTxn serves an update-disposition that is part of
// transaction id: each lock token's settlement is kept for the commit.
func (c *conn) mgmtDispositionInTxn(l *link, id []byte, req amqp.Map, rs reqSession) mgmtResult {
	if c.srv().mgmtNode(l) == nil {
		return failed(notFound(l.path))
	}
	status, _ := stringProp(req, "disposition-status")
	reason, _ := stringProp(req, "deadletter-reason")
	desc, _ := stringProp(req, "deadletter-description")
	props, _ := get[amqp.Map](req, "properties-to-modify")
	for _, tok := range uuids(req, "lock-tokens") {
		if e := c.srv().settleTokenInTxn(l.ss, id, tok, rs.holder, status, props, reason, desc); e != nil {
			return txnFailed(e)
		}
	}
	return ok(nil)
}

// txnFailed is a management result for an AMQP error of a transaction.
func txnFailed(e *amqp.Error) mgmtResult {
	switch e.Condition {
	case condLockLost:
		return mgmtResult{status: 410, desc: e.Description, cond: e.Condition}
	case condNotFound:
		return mgmtResult{status: 404, desc: e.Description, cond: e.Condition}
	case condSessionLockLost:
		return mgmtResult{status: 410, desc: e.Description, cond: e.Condition}
	}
	return mgmtResult{status: 400, desc: e.Description, cond: e.Condition}
}
