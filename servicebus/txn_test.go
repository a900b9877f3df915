package servicebus_test

import (
	"fmt"
	"testing"
	"time"

	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

// Service Bus transactions (AMQP 1.0 local transactions), driven frame by
// frame as the Java SDK drives them (azure-core-amqp's TransactionCoordinator
// and ReactorSender, azure-messaging-servicebus's transactional settlements):
// a sending link named "coordinator" whose target is a coordinator, an
// amqp-value declare answered with declared{txn-id}, transfers and
// dispositions carrying transactional-state{txn-id}, and a discharge
// answered accepted. Rule notes:
//   TX-1 what a transaction sends is stored at its commit, all of it at
//        once, and not at all when it is rolled back;
//   TX-2 what a transaction settles is settled at its commit; rolled back,
//        each message stays locked by its receiver, with the same lock;
//   TX-3 a transaction spans one top-level entity (a queue, or a topic and
//        its subscriptions), the one of its first operation, which a
//        send-via link sends through: another is refused with the
//        service's "Local transactions cannot span multiple top-level
//        entities such as queue or topic.";
//   TX-4 a transaction ends with its coordinator link and its connection,
//        rolled back, and 2 minutes after its first operation;
//   TX-5 a discharge of a txn-id the connection has not declared, or has
//        discharged, is refused with amqp:transaction:unknown-id.

// txnRaw is a raw connection with a coordinator on handle 0.
type txnRaw struct {
	*rawConn
	f *fixture
}

// MustTxnRaw dials and attaches a coordinator link on handle 0.
func (f *fixture) MustTxnRaw(tb testing.TB) *txnRaw {
	tb.Helper()
	r := f.MustTxnRawDial(tb)
	r.attachCoordinator()
	return r
}

// MustTxnRawDial is MustTxnRaw without the coordinator link, for a test
// that attaches links to entities first (attachCoordinator).
func (f *fixture) MustTxnRawDial(tb testing.TB) *txnRaw {
	tb.Helper()
	return &txnRaw{rawConn: f.MustDialRaw(tb), f: f}
}

// attachCoordinator attaches the coordinator link, handle 0.
func (r *txnRaw) attachCoordinator() {
	r.tb.Helper()
	zero := uint32(0)
	r.send(&codec.Attach{Name: "coordinator", Handle: 0, Role: codec.RoleSender,
		Source: &codec.Source{Address: "coordinator"}, Coordinator: &codec.Coordinator{},
		InitialDeliveryCount: &zero}, nil)
	a := skipFlows[*codec.Attach](r.rawConn)
	if a.Coordinator == nil || a.Target != nil {
		r.tb.Fatalf("coordinator attach answered with target %+v, coordinator %+v; want the coordinator", a.Target, a.Coordinator)
	}
	rawNext[*codec.Flow](r.rawConn)
}

// skipFlows reads the next frame that is not a flow and fails unless its
// performative is a T.
func skipFlows[T codec.Performative](r *rawConn) T {
	r.tb.Helper()
	for {
		f := r.next()
		if _, ok := f.Body.(*codec.Flow); ok {
			continue
		}
		p, ok := f.Body.(T)
		if !ok {
			var want T
			r.tb.Fatalf("got %T %+v, want %T", f.Body, f.Body, want)
		}
		return p
	}
}

// transferOn sends msg as one delivery on handle h with state and returns
// its delivery-id.
func (r *txnRaw) transferOn(h uint32, msg *codec.Message, state codec.DeliveryState) uint32 {
	r.tb.Helper()
	b, err := msg.MarshalBinary()
	if err != nil {
		r.tb.Fatal(err)
	}
	id := r.out
	f := false
	r.send(&codec.Transfer{Handle: h, DeliveryID: &id, DeliveryTag: []byte(fmt.Sprint(id)), Settled: &f, State: state}, b)
	return id
}

// dispositionFor reads frames up to the disposition of delivery id and
// returns its state; flows on the way are skipped.
func (r *txnRaw) dispositionFor(id uint32) codec.DeliveryState {
	r.tb.Helper()
	for {
		switch b := r.next().Body.(type) {
		case *codec.Disposition:
			if b.First <= id && (b.Last == nil && b.First == id || b.Last != nil && *b.Last >= id) {
				return b.State
			}
		case *codec.Flow, *codec.Detach:
			// a flow; a receiver detached on the way (its session lock lost)
		default:
			r.tb.Fatalf("waiting for the disposition of delivery %d: got %T %+v", id, b, b)
		}
	}
}

// declare declares a transaction and returns its txn-id.
func (r *txnRaw) declare() []byte {
	r.tb.Helper()
	id := r.transferOn(0, &codec.Message{Value: &codec.Declare{}, HasValue: true}, nil)
	d, ok := r.dispositionFor(id).(*codec.Declared)
	if !ok || len(d.TxnID) == 0 {
		r.tb.Fatalf("declare answered with %#v, want declared with a txn-id", d)
	}
	return d.TxnID
}

// discharge ends transaction txn and returns the outcome.
func (r *txnRaw) discharge(txn []byte, fail bool) codec.DeliveryState {
	r.tb.Helper()
	id := r.transferOn(0, &codec.Message{Value: &codec.Discharge{TxnID: txn, Fail: fail}, HasValue: true}, nil)
	return r.dispositionFor(id)
}

// attachSender attaches a sending link to addr on handle h, with props.
func (r *txnRaw) attachSender(h uint32, addr string, props codec.Map) *codec.Attach {
	r.tb.Helper()
	zero := uint32(0)
	r.send(&codec.Attach{Name: fmt.Sprintf("sender-%d", h), Handle: h, Role: codec.RoleSender,
		Source: &codec.Source{Address: "client"}, Target: &codec.Target{Address: addr},
		InitialDeliveryCount: &zero, Properties: props}, nil)
	a := skipFlows[*codec.Attach](r.rawConn)
	if a.Target == nil {
		d := skipFlows[*codec.Detach](r.rawConn)
		r.tb.Fatalf("sender to %s refused: %+v", addr, d.Error)
	}
	return a
}

// sendInTxn sends a message with body to handle h in transaction txn and
// returns the outcome.
func (r *txnRaw) sendInTxn(h uint32, txn []byte, body string) codec.DeliveryState {
	r.tb.Helper()
	id := r.transferOn(h, &codec.Message{Data: [][]byte{[]byte(body)}}, &codec.TransactionalState{TxnID: txn})
	return r.dispositionFor(id)
}

// receiveLocked attaches a peek-lock receiver from addr on handle h and
// takes n messages: their delivery-ids and lock tokens.
func (r *txnRaw) receiveLocked(h uint32, addr string, n int) (ids []uint32, toks []codec.UUID) {
	r.tb.Helper()
	zero, first := uint8(0), uint8(0)
	r.send(&codec.Attach{Name: fmt.Sprintf("receiver-%d", h), Handle: h, Role: codec.RoleReceiver,
		SndSettleMode: &zero, RcvSettleMode: &first,
		Source: &codec.Source{Address: addr}, Target: &codec.Target{Address: "client"}}, nil)
	if a := skipFlows[*codec.Attach](r.rawConn); a.Source == nil {
		r.tb.Fatalf("receiver from %s refused", addr)
	}
	r.flow(h, 0, uint32(n), false)
	for len(ids) < n {
		f := r.next()
		t, ok := f.Body.(*codec.Transfer)
		if !ok {
			continue
		}
		m, err := codec.UnmarshalMessage(f.Payload)
		if err != nil {
			r.tb.Fatal(err)
		}
		v, _ := m.DeliveryAnnotations.Get("x-opt-lock-token")
		tok, ok := v.(codec.UUID)
		if !ok {
			r.tb.Fatalf("a delivery without a lock token: %#v", m.DeliveryAnnotations)
		}
		ids, toks = append(ids, *t.DeliveryID), append(toks, tok)
	}
	return ids, toks
}

// settle sends the receiver's disposition of delivery id with state and
// returns the state the server answers with.
func (r *txnRaw) settle(id uint32, state codec.DeliveryState) codec.DeliveryState {
	r.tb.Helper()
	r.send(&codec.Disposition{Role: codec.RoleReceiver, First: id, State: state}, nil)
	for {
		if d, ok := r.next().Body.(*codec.Disposition); ok && d.Role == codec.RoleSender && d.First == id {
			return d.State
		}
	}
}

// mgmt sends a request to entity's $management node on handles h (the
// request link) and h+1 (the response link), attaching them the first
// time, and returns the response's statusCode.
func (r *txnRaw) mgmt(h uint32, entity, op string, body codec.Map, state codec.DeliveryState, attach bool) int32 {
	r.tb.Helper()
	addr := entity + "/$management"
	if attach {
		r.attachSender(h, addr, nil)
		zero := uint8(0)
		r.send(&codec.Attach{Name: fmt.Sprintf("mgmt-reply-%d", h), Handle: h + 1, Role: codec.RoleReceiver,
			SndSettleMode: &zero, Source: &codec.Source{Address: addr}, Target: &codec.Target{Address: "reply-to"}}, nil)
		skipFlows[*codec.Attach](r.rawConn)
		r.flow(h+1, 0, 10, false)
	}
	id := r.transferOn(h, &codec.Message{
		Properties:            &codec.Properties{MessageID: fmt.Sprint("req-", r.out), ReplyTo: "reply-to"},
		ApplicationProperties: codec.Map{{Key: "operation", Value: op}},
		Value:                 body, HasValue: true,
	}, state)
	_ = id
	for {
		f := r.next()
		if t, ok := f.Body.(*codec.Transfer); ok && t.Handle == h+1 {
			m, err := codec.UnmarshalMessage(f.Payload)
			if err != nil {
				r.tb.Fatal(err)
			}
			v, _ := m.ApplicationProperties.Get("statusCode")
			st, _ := v.(int32)
			return st
		}
	}
}

// wantTxnAccepted fails unless state is transactional-state{txn, accepted}.
func wantTxnAccepted(tb testing.TB, what string, txn []byte, state codec.DeliveryState) {
	tb.Helper()
	ts, ok := state.(*codec.TransactionalState)
	if !ok || string(ts.TxnID) != string(txn) {
		tb.Fatalf("%s: state %#v, want transactional-state of %q", what, state, txn)
	}
	if _, ok := ts.Outcome.(*codec.Accepted); !ok {
		tb.Fatalf("%s: outcome %#v, want accepted", what, ts.Outcome)
	}
}

// wantRejected fails unless state is rejected with condition cond, inside
// a transactional-state or not, and returns the error.
func wantRejected(tb testing.TB, what string, state codec.DeliveryState, cond codec.Symbol) *codec.Error {
	tb.Helper()
	if ts, ok := state.(*codec.TransactionalState); ok {
		state = ts.Outcome
	}
	rj, ok := state.(*codec.Rejected)
	if !ok || rj.Error == nil || rj.Error.Condition != cond {
		tb.Fatalf("%s: state %#v, want rejected with %s", what, state, cond)
	}
	return rj.Error
}

// TX-1: sends in a transaction are stored at its commit, not before.
func TestTX1_SendsAreStoredAtCommit(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "q", nil)
	txn := r.declare()
	for i := range 3 {
		wantTxnAccepted(t, "a send in the transaction", txn, r.sendInTxn(1, txn, fmt.Sprint("m", i)))
	}
	if c := f.counts("q"); c.Active != 0 {
		t.Fatalf("before the commit the queue has %d active messages, want 0", c.Active)
	}
	if _, ok := r.discharge(txn, false).(*codec.Accepted); !ok {
		t.Fatal("the commit was not accepted")
	}
	if c := f.counts("q"); c.Active != 3 {
		t.Fatalf("after the commit the queue has %d active messages, want 3", c.Active)
	}
}

// TX-1: a rolled-back transaction sends nothing.
func TestTX1_RollbackSendsNothing(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "q", nil)
	txn := r.declare()
	wantTxnAccepted(t, "a send in the transaction", txn, r.sendInTxn(1, txn, "m"))
	if _, ok := r.discharge(txn, true).(*codec.Accepted); !ok {
		t.Fatal("the rollback was not accepted")
	}
	if c := f.counts("q"); c.Active != 0 {
		t.Fatalf("after the rollback the queue has %d active messages, want 0", c.Active)
	}
}

// TX-2: a complete in a rolled-back transaction leaves the message locked
// by its receiver, and its lock token still completes it.
func TestTX2_RolledBackCompleteLeavesTheMessageLocked(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "q", nil)
	if _, ok := r.dispositionFor(r.transferOn(1, &codec.Message{Data: [][]byte{[]byte("x")}}, nil)).(*codec.Accepted); !ok {
		t.Fatal("the plain send was not accepted")
	}
	ids, toks := r.receiveLocked(2, "q", 1)
	txn := r.declare()
	wantTxnAccepted(t, "a complete in the transaction", txn, r.settle(ids[0], &codec.TransactionalState{TxnID: txn, Outcome: &codec.Accepted{}}))
	if c := f.counts("q"); c.Locked != 1 {
		t.Fatalf("before the rollback: %+v, want the message locked", c)
	}
	if _, ok := r.discharge(txn, true).(*codec.Accepted); !ok {
		t.Fatal("the rollback was not accepted")
	}
	if c := f.counts("q"); c.Locked != 1 || c.Active != 0 {
		t.Fatalf("after the rollback: %+v, want the message still locked", c)
	}
	if st := r.mgmt(3, "q", "com.microsoft:update-disposition", codec.Map{
		{Key: "lock-tokens", Value: []codec.UUID{toks[0]}}, {Key: "disposition-status", Value: "completed"},
	}, nil, true); st != 200 {
		t.Fatalf("a complete by the lock token after the rollback: status %d, want 200", st)
	}
	if c := f.counts("q"); c.Locked != 0 || c.Active != 0 {
		t.Fatalf("after the complete: %+v, want the queue empty", c)
	}
}

// TX-1, TX-2: a receive-complete-send transaction commits whole: the
// message completed and the new one sent, with one commit.
func TestTX2_CommitCompletesAndSends(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "q", nil)
	r.dispositionFor(r.transferOn(1, &codec.Message{Data: [][]byte{[]byte("in")}}, nil))
	ids, _ := r.receiveLocked(2, "q", 1)
	txn := r.declare()
	wantTxnAccepted(t, "a complete", txn, r.settle(ids[0], &codec.TransactionalState{TxnID: txn, Outcome: &codec.Accepted{}}))
	wantTxnAccepted(t, "a send", txn, r.sendInTxn(1, txn, "out"))
	if c := f.counts("q"); c.Locked != 1 || c.Active != 0 {
		t.Fatalf("before the commit: %+v, want one locked, none active", c)
	}
	if _, ok := r.discharge(txn, false).(*codec.Accepted); !ok {
		t.Fatal("the commit was not accepted")
	}
	if c := f.counts("q"); c.Locked != 0 || c.Active != 1 {
		t.Fatalf("after the commit: %+v, want the received one gone and the sent one active", c)
	}
}

// TX-2: an update-disposition over $management that carries the txn-id
// (the Java SDK's way for a message received by sequence number) is
// applied at the commit.
func TestTX2_ManagementDispositionInTransaction(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "q", nil)
	r.dispositionFor(r.transferOn(1, &codec.Message{Data: [][]byte{[]byte("in")}}, nil))
	_, toks := r.receiveLocked(2, "q", 1)
	txn := r.declare()
	req := codec.Map{{Key: "lock-tokens", Value: []codec.UUID{toks[0]}}, {Key: "disposition-status", Value: "suspended"}}
	if st := r.mgmt(3, "q", "com.microsoft:update-disposition", req, &codec.TransactionalState{TxnID: txn}, true); st != 200 {
		t.Fatalf("a dead-letter in the transaction: status %d, want 200", st)
	}
	if c := f.counts("q"); c.Locked != 1 || c.InDeadLetterQueue != 0 {
		t.Fatalf("before the commit: %+v, want the message locked", c)
	}
	if _, ok := r.discharge(txn, false).(*codec.Accepted); !ok {
		t.Fatal("the commit was not accepted")
	}
	if c := f.counts("q/$DeadLetterQueue"); c.Active != 1 {
		t.Fatalf("after the commit the dead-letter queue has %+v, want the message", c)
	}
}

// TX-3: a transaction whose first operation is on one queue refuses a send
// to another, and then cannot commit: its discharge is refused with
// amqp:transaction:rollback and nothing of it is applied (the Java SDK
// reports no refusal of a transactional send, only the commit's). A
// send-via link through the first queue is taken, and the message goes to
// its destination at the commit. The links here come before the
// coordinator, as each entity's session does in the SDKs without
// cross-entity transactions.
func TestTX3_OneEntityButVia(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("a", nil)
	f.MustQueue("b", nil)
	r := f.MustTxnRawDial(t)
	r.attachSender(1, "a", nil)
	r.attachSender(2, "b", nil)
	a := r.attachSender(3, "a", codec.Map{{Key: codec.Symbol("com.microsoft:transfer-destination-address"), Value: "b"}})
	if v, _ := a.Properties.Get("com.microsoft:transfer-destination-address"); v != "b" {
		t.Errorf("the send-via attach is answered with properties %v, want the destination", a.Properties)
	}
	r.attachCoordinator()
	txn := r.declare()
	wantTxnAccepted(t, "the first send, to a", txn, r.sendInTxn(1, txn, "to a"))
	e := wantRejected(t, "a send to b", r.sendInTxn(2, txn, "to b"), "amqp:not-allowed")
	if e.Description != "Local transactions cannot span multiple top-level entities such as queue or topic." {
		t.Errorf("refused with %q, want the service's description", e.Description)
	}
	if rej, ok := r.discharge(txn, false).(*codec.Rejected); !ok || rej.Error == nil || rej.Error.Condition != "amqp:transaction:rollback" {
		t.Fatalf("the commit of a transaction with a refused send: %+v, want rejected with amqp:transaction:rollback", rej)
	}
	if ca, cb := f.counts("a"), f.counts("b"); ca.Active != 0 || cb.Active != 0 {
		t.Fatalf("after the refused commit a has %d and b %d active, want none", ca.Active, cb.Active)
	}
	txn = r.declare()
	wantTxnAccepted(t, "a send to a", txn, r.sendInTxn(1, txn, "to a"))
	wantTxnAccepted(t, "a send to b via a", txn, r.sendInTxn(3, txn, "to b via a"))
	if _, ok := r.discharge(txn, false).(*codec.Accepted); !ok {
		t.Fatal("the commit was not accepted")
	}
	if ca, cb := f.counts("a"), f.counts("b"); ca.Active != 1 || cb.Active != 1 {
		t.Fatalf("after the commit a has %d and b %d active, want 1 each", ca.Active, cb.Active)
	}
}

// TX-3: a coordinator attached on a session before any link to an entity
// (the Java SDK's enableCrossEntityTransactions: one session, the
// coordinator first, no send-via property) takes operations on the
// entities of that session's links in one transaction.
func TestTX3_CoordinatorFirstSpansTheSessionsEntities(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("a", nil)
	f.MustQueue("b", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "a", nil)
	r.attachSender(2, "b", nil)
	txn := r.declare()
	wantTxnAccepted(t, "a send to a", txn, r.sendInTxn(1, txn, "to a"))
	wantTxnAccepted(t, "a send to b", txn, r.sendInTxn(2, txn, "to b"))
	if ca, cb := f.counts("a"), f.counts("b"); ca.Active != 0 || cb.Active != 0 {
		t.Fatalf("before the commit a has %d and b %d active, want none", ca.Active, cb.Active)
	}
	if _, ok := r.discharge(txn, false).(*codec.Accepted); !ok {
		t.Fatal("the commit was not accepted")
	}
	if ca, cb := f.counts("a"), f.counts("b"); ca.Active != 1 || cb.Active != 1 {
		t.Fatalf("after the commit a has %d and b %d active, want 1 each", ca.Active, cb.Active)
	}
}

// TX-3: a subscription belongs to its topic: settling a message of the
// subscription and sending to the topic is one entity.
func TestTX3_SubscriptionAndItsTopicAreOneEntity(t *testing.T) {
	f := MustServer(t)
	f.MustTopic("t", nil, "s")
	f.MustQueue("other", nil)
	r := f.MustTxnRawDial(t)
	r.attachSender(1, "t", nil)
	r.dispositionFor(r.transferOn(1, &codec.Message{Data: [][]byte{[]byte("in")}}, nil))
	ids, _ := r.receiveLocked(2, "t/Subscriptions/s", 1)
	r.attachSender(3, "other", nil)
	r.attachCoordinator()
	txn := r.declare()
	wantTxnAccepted(t, "a complete on the subscription", txn, r.settle(ids[0], &codec.TransactionalState{TxnID: txn, Outcome: &codec.Accepted{}}))
	wantTxnAccepted(t, "a send to its topic", txn, r.sendInTxn(1, txn, "out"))
	if _, ok := r.discharge(txn, false).(*codec.Accepted); !ok {
		t.Fatal("the commit was not accepted")
	}
	other := r.declare()
	wantTxnAccepted(t, "a send to the topic", other, r.sendInTxn(1, other, "first"))
	wantRejected(t, "a send to another queue", r.sendInTxn(3, other, "elsewhere"), "amqp:not-allowed")
	r.discharge(other, true)
	if c := f.counts("t/Subscriptions/s"); c.Active != 1 || c.Locked != 0 {
		t.Fatalf("after the commit the subscription has %+v, want the sent copy only", c)
	}
}

// TX-4: a connection closed with a transaction open rolls it back: its
// sends are never stored and its settlements never applied.
func TestTX4_ConnectionClosedRollsBack(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "q", nil)
	r.dispositionFor(r.transferOn(1, &codec.Message{Data: [][]byte{[]byte("in")}}, nil))
	ids, toks := r.receiveLocked(2, "q", 1)
	txn := r.declare()
	wantTxnAccepted(t, "a complete", txn, r.settle(ids[0], &codec.TransactionalState{TxnID: txn, Outcome: &codec.Accepted{}}))
	wantTxnAccepted(t, "a send", txn, r.sendInTxn(1, txn, "out"))
	r.send(&codec.Close{}, nil)
	rawNext[*codec.Close](r.rawConn)
	r.nc.Close()
	// Once lapse has ended the connection (waiting for its goroutine,
	// not for an expiry): whatever it did with the transaction is done.
	for deadline := time.Now().Add(10 * time.Second); f.s.Connections() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the closed connection is still served")
		}
	}
	// The message is still locked by its (gone) receiver's lock, which
	// another connection completes by token; nothing was sent.
	r2 := f.MustTxnRaw(t)
	if st := r2.mgmt(1, "q", "com.microsoft:update-disposition", codec.Map{
		{Key: "lock-tokens", Value: []codec.UUID{toks[0]}}, {Key: "disposition-status", Value: "completed"},
	}, nil, true); st != 200 {
		t.Fatalf("a complete by the lock token after the close: status %d, want 200", st)
	}
	if c := f.counts("q"); c.Active != 0 || c.Locked != 0 {
		t.Fatalf("the queue holds %+v, want nothing: the transaction's send must not be stored", c)
	}
	// Its txn-id is unknown on the new connection as well (TX-5).
	wantRejected(t, "a discharge of the closed connection's transaction", r2.discharge(txn, false), "amqp:transaction:unknown-id")
}

// TX-4: a transaction is rolled back when its coordinator link detaches.
func TestTX4_CoordinatorDetachRollsBack(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "q", nil)
	txn := r.declare()
	wantTxnAccepted(t, "a send", txn, r.sendInTxn(1, txn, "out"))
	r.send(&codec.Detach{Handle: 0, Closed: true}, nil)
	skipFlows[*codec.Detach](r.rawConn)
	zero := uint32(0)
	r.send(&codec.Attach{Name: "coordinator", Handle: 0, Role: codec.RoleSender,
		Source: &codec.Source{Address: "coordinator"}, Coordinator: &codec.Coordinator{}, InitialDeliveryCount: &zero}, nil)
	skipFlows[*codec.Attach](r.rawConn)
	wantRejected(t, "a commit after the coordinator detached", r.discharge(txn, false), "amqp:transaction:unknown-id")
	if c := f.counts("q"); c.Active != 0 {
		t.Fatalf("the queue has %d active messages, want 0", c.Active)
	}
}

// TX-4: a transaction still open 2 minutes after its first operation is
// rolled back; its commit is refused.
func TestTX4_TimeoutRollsBack(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "q", nil)
	txn := r.declare()
	wantTxnAccepted(t, "a send", txn, r.sendInTxn(1, txn, "out"))
	f.advance(2*time.Minute + time.Second)
	wantRejected(t, "a commit past the timeout", r.discharge(txn, false), "amqp:transaction:timeout")
	if c := f.counts("q"); c.Active != 0 {
		t.Fatalf("the queue has %d active messages, want 0", c.Active)
	}
}

// TX-5: a discharge of a txn-id never declared, or discharged already, is
// refused with amqp:transaction:unknown-id and the service's description.
func TestTX5_UnknownTxnID(t *testing.T) {
	f := MustServer(t)
	r := f.MustTxnRaw(t)
	e := wantRejected(t, "a discharge of a txn-id never declared", r.discharge([]byte("txn:never"), false), "amqp:transaction:unknown-id")
	if e.Description != "Transaction hasn't been declared yet, or has already been discharged" {
		t.Errorf("refused with %q, want the service's description", e.Description)
	}
	txn := r.declare()
	if _, ok := r.discharge(txn, false).(*codec.Accepted); !ok {
		t.Fatal("the commit of an empty transaction was not accepted")
	}
	wantRejected(t, "a second discharge", r.discharge(txn, true), "amqp:transaction:unknown-id")
}

// receiveSession is receiveLocked for session id of a queue that requires
// sessions.
func (r *txnRaw) receiveSession(h uint32, addr, id string) (uint32, codec.UUID) {
	r.tb.Helper()
	zero, first := uint8(0), uint8(0)
	r.send(&codec.Attach{Name: fmt.Sprintf("receiver-%d", h), Handle: h, Role: codec.RoleReceiver,
		SndSettleMode: &zero, RcvSettleMode: &first,
		Source: &codec.Source{Address: addr, Filter: codec.Map{{Key: codec.Symbol("com.microsoft:session-filter"),
			Value: &codec.Described{Descriptor: codec.Symbol("com.microsoft:session-filter"), Value: id}}}},
		Target: &codec.Target{Address: "client"}}, nil)
	if a := skipFlows[*codec.Attach](r.rawConn); a.Source == nil {
		r.tb.Fatalf("session receiver from %s refused", addr)
	}
	r.flow(h, 0, 1, false)
	for {
		f := r.next()
		t, ok := f.Body.(*codec.Transfer)
		if !ok {
			continue
		}
		m, err := codec.UnmarshalMessage(f.Payload)
		if err != nil {
			r.tb.Fatal(err)
		}
		v, _ := m.DeliveryAnnotations.Get("x-opt-lock-token")
		tok, _ := v.(codec.UUID)
		return *t.DeliveryID, tok
	}
}

// TX-2 with sessions: a session's holder completes in a transaction and
// sends to the same queue; the commit applies both. A second transaction
// whose session lock ran out before its commit is refused whole: the
// send it held is not stored.
func TestTX2_SessionReceiverCommits(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "sq", nil)
	for _, g := range []string{"a", "b"} {
		r.dispositionFor(r.transferOn(1, &codec.Message{Properties: &codec.Properties{GroupID: g}, Data: [][]byte{[]byte(g)}}, nil))
	}
	id, _ := r.receiveSession(2, "sq", "a")
	txn := r.declare()
	wantTxnAccepted(t, "a complete by the session's holder", txn, r.settle(id, &codec.TransactionalState{TxnID: txn, Outcome: &codec.Accepted{}}))
	wantTxnAccepted(t, "a send in the session's transaction", txn, r.transferOnState(1, "c", txn))
	if _, ok := r.discharge(txn, false).(*codec.Accepted); !ok {
		t.Fatal("the commit was not accepted")
	}
	if c := f.counts("sq"); c.Active != 2 || c.Locked != 0 {
		t.Fatalf("after the commit: %+v, want b and c active, a gone", c)
	}

	id, _ = r.receiveSession(3, "sq", "b")
	txn = r.declare()
	wantTxnAccepted(t, "a complete", txn, r.settle(id, &codec.TransactionalState{TxnID: txn, Outcome: &codec.Accepted{}}))
	wantTxnAccepted(t, "a send", txn, r.transferOnState(1, "d", txn))
	f.advance(90 * time.Second) // past the session lock (1 minute), within the transaction's 2
	wantRejected(t, "a commit after the session lock ran out", r.discharge(txn, false), "com.microsoft:session-lock-lost")
	if c := f.counts("sq"); c.Active != 2 {
		t.Fatalf("after the refused commit: %+v, want b (its lock lost) and c active, d never stored", c)
	}
}

// transferOnState sends a message of session id body, with body as its
// body, in transaction txn on handle h and returns the outcome.
func (r *txnRaw) transferOnState(h uint32, body string, txn []byte) codec.DeliveryState {
	r.tb.Helper()
	return r.dispositionFor(r.transferOn(h, &codec.Message{Properties: &codec.Properties{GroupID: body}, Data: [][]byte{[]byte(body)}}, &codec.TransactionalState{TxnID: txn}))
}
