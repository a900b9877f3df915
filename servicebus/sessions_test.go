package servicebus_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Sessions through azservicebus (issue 14), on the frozen clock: each test
// names the session rule it proves (SS-1..SS-5, dashboard/web/semantics.md).

// waitForSessionReceiver returns once a receiver of path waits for a next
// session (the accept is under way on the server), or fails the test
// after 10 s.
func (f *fixture) waitForSessionReceiver(path string) {
	f.tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); f.s.WaitingForSession(path) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			f.tb.Errorf("no receiver of %s waits for a session", path)
			return
		}
	}
}

// sessionQueue makes a queue that requires sessions, lock duration 1 min.
func (f *fixture) sessionQueue(name string, set func(*atom.QueueProperties)) {
	f.tb.Helper()
	f.MustQueue(name, func(p *atom.QueueProperties) {
		p.RequiresSession = true
		p.LockDuration = time.Minute
		if set != nil {
			set(p)
		}
	})
}

// accept accepts a named session of a queue.
func (c *sbClient) accept(queue, id string, opts *azservicebus.SessionReceiverOptions) *azservicebus.SessionReceiver {
	c.f.tb.Helper()
	r, err := c.c.AcceptSessionForQueue(ctx(c.f.tb), queue, id, opts)
	if err != nil {
		c.f.tb.Fatalf("accepting session %q of %s: %v", id, queue, err)
	}
	c.f.tb.Cleanup(func() { r.Close(context.Background()) })
	return r
}

// acceptNext accepts the next available session of a queue, waiting at
// most wait.
func (c *sbClient) acceptNext(queue string, wait time.Duration) (*azservicebus.SessionReceiver, error) {
	cx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	r, err := c.c.AcceptNextSessionForQueue(cx, queue, nil)
	if err == nil {
		c.f.tb.Cleanup(func() { r.Close(context.Background()) })
	}
	return r, err
}

// receiveSession receives up to n messages; none within a short while
// gives none.
func receiveSession(tb testing.TB, r *azservicebus.SessionReceiver, n int) []*azservicebus.ReceivedMessage {
	tb.Helper()
	c, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	msgs, err := r.ReceiveMessages(c, n, nil)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		tb.Fatal(err)
	}
	return msgs
}

// noRetries are client options without retries.
func noRetries() *azservicebus.ClientOptions {
	return &azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}}
}

// sbCode returns the azservicebus error code of err, "" for none.
func sbCode(err error) azservicebus.Code {
	var e *azservicebus.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// rule: SS-1 (messages of one session go, in send order, only to the
// receiver holding it; the attach reply names the session and its lock)
func TestSessionReceiverGetsItsSessionInSendOrder_SS1(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	c := f.sb()
	c.send("sq", sessionMsg("a1", "a"), sessionMsg("b1", "b"), sessionMsg("a2", "a"), sessionMsg("b2", "b"), sessionMsg("a3", "a"))
	a := c.accept("sq", "a", nil)
	if a.SessionID() != "a" || !a.LockedUntil().Equal(t0.Add(time.Minute)) {
		t.Fatalf("session %q locked until %v, want a until %v", a.SessionID(), a.LockedUntil(), t0.Add(time.Minute))
	}
	got := receiveSession(t, a, 10)
	if !slices.Equal(names(got), []string{"a1", "a2", "a3"}) {
		t.Fatalf("session a received %v, want a1 a2 a3", names(got))
	}
	for _, m := range got {
		if m.SessionID == nil || *m.SessionID != "a" || m.LockedUntil == nil || !m.LockedUntil.Equal(t0.Add(time.Minute)) {
			t.Fatalf("message %s: session %v, locked until %v", m.Body, m.SessionID, m.LockedUntil)
		}
		if err := a.CompleteMessage(ctx(t), m, nil); err != nil {
			t.Fatal(err)
		}
	}
	b := c.accept("sq", "b", &azservicebus.SessionReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if got := names(receiveSession(t, b, 10)); !slices.Equal(got, []string{"b1", "b2"}) {
		t.Fatalf("session b received %v, want b1 b2", got)
	}
}

// rule: SS-1 (a second accept of a held session fails with
// com.microsoft:session-cannot-be-locked; closing the receiver releases
// the session)
func TestSecondAcceptOfHeldSessionCannotBeLocked_SS1(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	c := f.sb()
	c.send("sq", sessionMsg("a1", "a"))
	first := c.accept("sq", "a", nil)
	other := f.sb()
	r, err := other.c.AcceptSessionForQueue(ctx(t), "sq", "a", nil)
	if err == nil {
		r.Close(ctx(t))
		t.Fatal("a held session was accepted a second time")
	}
	if cond, desc := amqpCond(err); cond != "com.microsoft:session-cannot-be-locked" || desc != "The requested session 'a' cannot be accepted. It may be locked by another receiver." {
		t.Fatalf("second accept: %v (%q, %q)", err, cond, desc)
	}
	if err := first.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	again := other.accept("sq", "a", nil)
	if got := names(receiveSession(t, again, 1)); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("after the first receiver closed, the session gave %v", got)
	}
}

// rule: SS-1 (accept next skips held sessions and sessions without
// available messages; with none left it times out, as the service does)
func TestAcceptNextSkipsHeldAndEmptySessions_SS1(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	c := f.sb()
	c.send("sq", sessionMsg("a1", "a"), sessionMsg("b1", "b"))
	c.accept("sq", "a", nil)
	// a named session needs no messages: c is held and empty
	c.accept("sq", "c", nil)
	next, err := c.acceptNext("sq", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if next.SessionID() != "b" {
		t.Fatalf("accept next gave session %q, want b", next.SessionID())
	}
	// With none free, the server detaches with com.microsoft:timeout once
	// the client's com.microsoft:timeout has passed.
	raw := MustSession(t, f.MustDialAMQP(t, "sq"))
	start := time.Now()
	_, err = raw.NewReceiver(ctx(t), "sq", &amqp.ReceiverOptions{
		Filters:    []amqp.LinkFilter{amqp.NewLinkFilter("com.microsoft:session-filter", 0x137000000C, nil)},
		Properties: map[string]any{"com.microsoft:timeout": uint32(300)},
	})
	if remoteErr(err) != "com.microsoft:timeout" {
		t.Fatalf("accept next with no session free: %v, want a detach with com.microsoft:timeout", err)
	}
	if el := time.Since(start); el < 300*time.Millisecond || el > 5*time.Second {
		t.Fatalf("the server answered after %v, not at the client's timeout of 300ms", el)
	}
	// azservicebus sends its context's remaining time, less up to 1%, as
	// com.microsoft:timeout: it reports the server's answer as CodeTimeout,
	// or its own deadline when that answer comes in just after it.
	r, err := c.acceptNext("sq", 2*time.Second)
	if err == nil {
		t.Fatalf("accept next with no session free gave %q", r.SessionID())
	}
	if sbCode(err) != azservicebus.CodeTimeout && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("azservicebus's accept next with no session free: %v, want CodeTimeout", err)
	}
	// a session that gets a message while a receiver waits goes to it
	got := make(chan string, 1)
	go func() {
		r, err := c.acceptNext("sq", 10*time.Second)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- r.SessionID()
	}()
	f.waitForSessionReceiver("sq")
	c.send("sq", sessionMsg("d1", "d"))
	if id := <-got; id != "d" {
		t.Fatalf("the waiting accept got %q, want d", id)
	}
}

// rule: SS-2 (the session lock lasts LockDuration from the accept and from
// each renewal; renew-session-lock returns the new expiry)
func TestSessionLockLastsLockDurationFromAcceptAndRenewal_SS2(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	c := f.sb()
	c.send("sq", sessionMsg("a1", "a"))
	r := c.accept("sq", "a", nil)
	if !r.LockedUntil().Equal(t0.Add(time.Minute)) {
		t.Fatalf("locked until %v, want accept + 1 min", r.LockedUntil())
	}
	m := receiveSession(t, r, 1)[0]
	f.advance(40 * time.Second)
	if err := r.RenewSessionLock(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(100 * time.Second); !r.LockedUntil().Equal(want) {
		t.Fatalf("renewed until %v, want %v (renewal + 1 min)", r.LockedUntil(), want)
	}
	f.advance(50 * time.Second) // past the first lock's end, within the renewed one
	if err := r.CompleteMessage(ctx(t), m, nil); err != nil {
		t.Fatalf("completing under the renewed lock: %v", err)
	}
}

// rule: SS-3 (when the session lock runs out, the session is released, its
// messages' locks go with it, the next receiver gets them with the
// delivery count raised, the event log records the loss, and the first
// receiver's settlement fails)
func TestSessionLockLossReleasesSessionAndRaisesDeliveryCount_SS3(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	c := f.sb()
	c.send("sq", sessionMsg("a1", "a"))
	r := c.accept("sq", "a", nil)
	got := receiveSession(t, r, 1)
	if len(got) != 1 || got[0].DeliveryCount != 1 {
		t.Fatalf("first delivery: %v", got)
	}
	f.advance(61 * time.Second)
	var lost []core.Event
	for _, ev := range f.e.Events(core.EventQuery{Protocol: core.ServiceBus, Entity: "sq"}) {
		if ev.Action == core.ActionLockLost && ev.Session == "a" {
			lost = append(lost, ev)
		}
	}
	if len(lost) == 0 || lost[0].Rule != "SS-3" || !lost[0].Due.Equal(t0.Add(time.Minute)) {
		t.Fatalf("lock-lost events of session a: %+v, want one with rule SS-3 due at the lock's end", lost)
	}
	other := f.sb()
	again := other.accept("sq", "a", nil)
	m := receiveSession(t, again, 1)
	if len(m) != 1 || string(m[0].Body) != "a1" || m[0].DeliveryCount != 2 {
		t.Fatalf("the next receiver got %v, want a1 delivered a second time", m)
	}
	cx, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	if err := r.CompleteMessage(cx, got[0], nil); err == nil {
		t.Fatal("the first receiver completed a message of a session it lost")
	}
	if err := again.CompleteMessage(ctx(t), m[0], nil); err != nil {
		t.Fatal(err)
	}
}

// mgmtRequest sends one request to an entity's $management node on s and
// returns the response.
func mgmtRequest(tb testing.TB, s *amqp.Session, path, op string, body map[string]any) *amqp.Message {
	tb.Helper()
	node := path + "/$management"
	snd, err := s.NewSender(ctx(tb), node, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer snd.Close(ctx(tb))
	replyTo := "reply-" + op
	rcv, err := s.NewReceiver(ctx(tb), node, &amqp.ReceiverOptions{TargetAddress: replyTo, Credit: 10,
		SettlementMode: amqp.ReceiverSettleModeFirst.Ptr(), RequestedSenderSettleMode: amqp.SenderSettleModeSettled.Ptr()})
	if err != nil {
		tb.Fatal(err)
	}
	defer rcv.Close(ctx(tb))
	req := &amqp.Message{Value: body, Properties: &amqp.MessageProperties{MessageID: op, ReplyTo: &replyTo},
		ApplicationProperties: map[string]any{"operation": op}}
	if err := snd.Send(ctx(tb), req, nil); err != nil {
		tb.Fatal(err)
	}
	resp, err := rcv.Receive(ctx(tb), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}

// rule: SS-3 (the holder's link is detached with
// com.microsoft:session-lock-lost when the lock runs out, as the service
// detaches it; settling one of the session's messages by its lock token
// fails with 410 and com.microsoft:session-lock-lost)
func TestSessionLockLossDetachesHolderAndFailsSettlement_SS3(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	f.sb().send("sq", sessionMsg("a1", "a"))
	s := MustSession(t, f.MustDialAMQP(t, "sq"))
	r, err := s.NewReceiver(ctx(t), "sq", &amqp.ReceiverOptions{
		SettlementMode: amqp.ReceiverSettleModeSecond.Ptr(), Credit: -1,
		Filters: []amqp.LinkFilter{amqp.NewLinkFilter("com.microsoft:session-filter", 0x137000000C, "a")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.LinkSourceFilterValue("com.microsoft:session-filter"); v != "a" {
		t.Fatalf("the attach reply's filter: %#v", v)
	}
	if ticks, ok := r.Properties()["com.microsoft:locked-until-utc"].(int64); !ok || ticks != 621355968000000000+t0.Add(time.Minute).UnixNano()/100 {
		t.Fatalf("com.microsoft:locked-until-utc = %#v, want the lock's end in .NET ticks", r.Properties()["com.microsoft:locked-until-utc"])
	}
	m := MustReceive(t, r)
	tok, ok := m.DeliveryAnnotations["x-opt-lock-token"].(amqp.UUID)
	if !ok {
		t.Fatalf("no lock token: %v", m.DeliveryAnnotations)
	}
	f.advance(2 * time.Minute)
	err = r.AcceptMessage(ctx(t), m)
	if remoteErr(err) != "com.microsoft:session-lock-lost" {
		t.Fatalf("settling on the link after the session lock ran out: %v, want com.microsoft:session-lock-lost", err)
	}
	cx, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	_, err = r.Receive(cx, nil)
	if remoteErr(err) != "com.microsoft:session-lock-lost" {
		t.Fatalf("receiving after the session lock ran out: %v, want a detach with com.microsoft:session-lock-lost", err)
	}
	resp := mgmtRequest(t, s, "sq", "com.microsoft:update-disposition", map[string]any{
		"disposition-status": "completed", "lock-tokens": []amqp.UUID{tok}, "session-id": "a"})
	if resp.ApplicationProperties["statusCode"] != int32(410) || resp.ApplicationProperties["errorCondition"] != "com.microsoft:session-lock-lost" {
		t.Fatalf("update-disposition after the session lock ran out: %v", resp.ApplicationProperties)
	}
}

// rule: SS-4 (session state: bytes, null clears it, kept across lock loss
// and restarts, per session)
func TestSessionStateKeptAcrossLockLossAndRestart_SS4(t *testing.T) {
	store := core.NewMemStore()
	f := MustServerOn(t, store, t0)
	f.sessionQueue("sq", nil)
	c := f.sb()
	r := c.accept("sq", "a", nil)
	if st, err := r.GetSessionState(ctx(t), nil); err != nil || st != nil {
		t.Fatalf("a new session's state: %q, %v; want none", st, err)
	}
	if err := r.SetSessionState(ctx(t), []byte("step 1"), nil); err != nil {
		t.Fatal(err)
	}
	b := c.accept("sq", "b", nil)
	if err := b.SetSessionState(ctx(t), []byte("other"), nil); err != nil {
		t.Fatal(err)
	}
	f.advance(2 * time.Minute) // both locks run out
	r2 := f.sb().accept("sq", "a", nil)
	if st, err := r2.GetSessionState(ctx(t), nil); err != nil || string(st) != "step 1" {
		t.Fatalf("after the lock ran out: %q, %v; want step 1", st, err)
	}
	f.close()

	g := MustServerOn(t, store, t0.Add(2*time.Minute))
	r3 := g.sb().accept("sq", "a", nil)
	if st, err := r3.GetSessionState(ctx(t), nil); err != nil || string(st) != "step 1" {
		t.Fatalf("after a restart: %q, %v; want step 1", st, err)
	}
	if err := r3.SetSessionState(ctx(t), nil, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := r3.GetSessionState(ctx(t), nil); err != nil || st != nil {
		t.Fatalf("after setting null: %q, %v; want none", st, err)
	}
	rb := g.sb().accept("sq", "b", nil)
	if st, err := rb.GetSessionState(ctx(t), nil); err != nil || string(st) != "other" {
		t.Fatalf("session b after a restart: %q, %v; want other", st, err)
	}
}

// rule: SS-2 (renewing the lock of a session's message renews the
// session's lock: a message of a session has no lock of its own), through
// renew-lock on $management as the SDKs send it
func TestRenewMessageLockOfSessionMessageRenewsSession_SS2(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	f.sb().send("sq", sessionMsg("a1", "a"))
	s := MustSession(t, f.MustDialAMQP(t, "sq"))
	r, err := s.NewReceiver(ctx(t), "sq", &amqp.ReceiverOptions{
		SettlementMode: amqp.ReceiverSettleModeSecond.Ptr(), Credit: -1,
		Filters: []amqp.LinkFilter{amqp.NewLinkFilter("com.microsoft:session-filter", 0x137000000C, "a")},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := MustReceive(t, r)
	tok := m.DeliveryAnnotations["x-opt-lock-token"].(amqp.UUID)
	f.advance(45 * time.Second)
	resp := mgmtRequest(t, s, "sq", "com.microsoft:renew-lock", map[string]any{"lock-tokens": []amqp.UUID{tok}, "session-id": "a"})
	exp, _ := resp.Value.(map[string]any)["expirations"].([]time.Time)
	if resp.ApplicationProperties["statusCode"] != int32(200) || len(exp) != 1 || !exp[0].Equal(t0.Add(105*time.Second)) {
		t.Fatalf("renew-lock: %v %v, want the renewal + 1 min", resp.ApplicationProperties, resp.Value)
	}
	f.advance(30 * time.Second) // past the first lock's end
	if err := r.AcceptMessage(ctx(t), m); err != nil {
		t.Fatalf("completing under the renewed session lock: %v", err)
	}
}

// rule: SS-3 (the holder is told at once, even of a session with nothing
// in it: the engine's SessionLost hook wakes it, since no message becomes
// available to do so)
func TestEmptySessionLockLossDetachesHolder_SS3(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	s := MustSession(t, f.MustDialAMQP(t, "sq"))
	r, err := s.NewReceiver(ctx(t), "sq", &amqp.ReceiverOptions{
		SettlementMode: amqp.ReceiverSettleModeSecond.Ptr(), Credit: -1,
		Filters: []amqp.LinkFilter{amqp.NewLinkFilter("com.microsoft:session-filter", 0x137000000C, "empty")},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The credit goes out before the clock moves, so that no frame of the
	// client's wakes the link afterwards.
	if err := r.IssueCredit(1); err != nil {
		t.Fatal(err)
	}
	// A request answered on the same connection: the flow was read before.
	mgmtRequest(t, s, "sq", "com.microsoft:peek-message", map[string]any{"from-sequence-number": int64(1), "message-count": int32(1)})
	f.advance(2 * time.Minute)
	cx, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	if _, err := r.Receive(cx, nil); remoteErr(err) != "com.microsoft:session-lock-lost" {
		t.Fatalf("after the empty session's lock ran out: %v, want a detach with com.microsoft:session-lock-lost", err)
	}
}

// A session receiver still waiting for a session when its queue is
// deleted gets its attach answered, with a null source, and the detach
// with amqp:not-found, as any receiver of a deleted queue is detached; a
// detach alone would name a link the client does not have yet.
func TestPendingSessionReceiverOfDeletedQueueIsRefused(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	raw := MustSession(t, f.MustDialAMQP(t, "sq"))
	deleted := make(chan struct{})
	go func() {
		defer close(deleted)
		f.waitForSessionReceiver("sq")
		f.MustDeleteQueue(t, "sq")
	}()
	start := time.Now()
	_, err := raw.NewReceiver(ctx(t), "sq", &amqp.ReceiverOptions{
		Filters:    []amqp.LinkFilter{amqp.NewLinkFilter("com.microsoft:session-filter", 0x137000000C, nil)},
		Properties: map[string]any{"com.microsoft:timeout": uint32(30000)},
	})
	// The refusal may reach the client before the DELETE's answer: the
	// test must not end (which cancels the DELETE's context) before it.
	<-deleted
	if remoteErr(err) != "amqp:not-found" {
		t.Fatalf("accept next on a queue deleted meanwhile: %v, want a detach with amqp:not-found", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the server answered after %v, not when the queue went", el)
	}
	// The session is still up for other links: one of the queue made
	// anew.
	f.sessionQueue("sq", nil)
	if _, err := raw.NewReceiver(ctx(t), "sq", &amqp.ReceiverOptions{
		Filters: []amqp.LinkFilter{amqp.NewLinkFilter("com.microsoft:session-filter", 0x137000000C, "a")},
	}); err != nil {
		t.Fatalf("a receiver on the same session afterwards: %v", err)
	}
}
