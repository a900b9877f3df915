package servicebus_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Everything that exists without sessions, inside a session (SS-5), and
// session entities where entities come from (issue 14.5, 14.7).

// rule: SS-5 (TTL and dead-lettering on expiry inside a session; the
// dead-letter queue is not session-enabled and keeps the message's session
// id), SB-8
func TestSessionMessageExpiresToPlainDeadLetterQueue_SS5(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", func(p *atom.QueueProperties) { p.DeadLetteringOnMessageExpiration = true })
	c := f.sb()
	short := sessionMsg("short", "a")
	ttl := time.Minute
	short.TimeToLive = &ttl
	c.send("sq", short, sessionMsg("long", "a"))
	f.advance(2 * time.Minute)
	r := c.accept("sq", "a", nil)
	if got := names(receiveSession(t, r, 10)); !slices.Equal(got, []string{"long"}) {
		t.Fatalf("session a after two minutes: %v, want only long", got)
	}
	d := receive(t, c.receiver("sq", "", dlq()), 10)
	if len(d) != 1 || string(d[0].Body) != "short" || d[0].SessionID == nil || *d[0].SessionID != "a" ||
		d[0].DeadLetterReason == nil || *d[0].DeadLetterReason != "TTLExpiredException" {
		t.Fatalf("dead-letter queue (read by a plain receiver): %v", d)
	}
}

// rule: SS-5 (a scheduled message of a session arrives at its time, to the
// session's holder), SB-4
func TestScheduledSessionMessageArrivesAtItsTime_SS5(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	c := f.sb()
	s, err := c.c.NewSender("sq", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx(t))
	if _, err := s.ScheduleMessages(ctx(t), []*azservicebus.Message{sessionMsg("later", "a")}, t0.Add(5*time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	r := c.accept("sq", "a", nil)
	if got := receiveSession(t, r, 1); len(got) != 0 {
		t.Fatalf("before its time the session gave %v", names(got))
	}
	if _, err := c.acceptNext("sq", time.Second); err == nil {
		t.Fatal("accept next found a session with only a scheduled message")
	}
	if err := r.RenewSessionLock(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	f.advance(5 * time.Minute)
	r2 := f.sb().accept("sq", "a", nil)
	got := receiveSession(t, r2, 1)
	if len(got) != 1 || string(got[0].Body) != "later" || got[0].EnqueuedTime == nil || !got[0].EnqueuedTime.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("at its time: %v", got)
	}
}

// rule: SS-5 (deferral and receive-deferred by sequence number on the
// session receiver; peek shows one session; abandon counts deliveries up
// to MaxDeliveryCount, then the message is dead-lettered), SB-9
func TestDeferPeekAbandonInsideSession_SS5(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", func(p *atom.QueueProperties) { p.MaxDeliveryCount = 2 })
	c := f.sb()
	c.send("sq", sessionMsg("a1", "a"), sessionMsg("b1", "b"), sessionMsg("a2", "a"))
	r := c.accept("sq", "a", nil)
	peeked, err := r.PeekMessages(ctx(t), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(peeked); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("peek of session a: %v", got)
	}
	got := receiveSession(t, r, 1)
	if err := r.DeferMessage(ctx(t), got[0], nil); err != nil {
		t.Fatal(err)
	}
	next := receiveSession(t, r, 1)
	if len(next) != 1 || string(next[0].Body) != "a2" {
		t.Fatalf("after deferring a1: %v", names(next))
	}
	def, err := r.ReceiveDeferredMessages(ctx(t), []int64{*got[0].SequenceNumber}, nil)
	if err != nil || len(def) != 1 || string(def[0].Body) != "a1" {
		t.Fatalf("receive deferred: %v, %v", names(def), err)
	}
	if err := r.CompleteMessage(ctx(t), def[0], nil); err != nil {
		t.Fatal(err)
	}
	// a2: abandoned twice, then dead-lettered (MaxDeliveryCount 2)
	if err := r.AbandonMessage(ctx(t), next[0], nil); err != nil {
		t.Fatal(err)
	}
	again := receiveSession(t, r, 1)
	if len(again) != 1 || string(again[0].Body) != "a2" || again[0].DeliveryCount != 2 {
		t.Fatalf("after abandon: %v", again)
	}
	if err := r.AbandonMessage(ctx(t), again[0], nil); err != nil {
		t.Fatal(err)
	}
	if left := receiveSession(t, r, 1); len(left) != 0 {
		t.Fatalf("after MaxDeliveryCount: %v", names(left))
	}
	d := receive(t, c.receiver("sq", "", dlq()), 10)
	if len(d) != 1 || string(d[0].Body) != "a2" || d[0].DeadLetterReason == nil || *d[0].DeadLetterReason != "MaxDeliveryCountExceeded" {
		t.Fatalf("dead-letter queue: %v", d)
	}
}

// rule: SS-5 (a session receive counts as a use for AutoDeleteOnIdle),
// SB-10
func TestSessionReceiveKeepsQueueAlive_SS5(t *testing.T) {
	f := MustServer(t)
	f.sessionQueue("sq", func(p *atom.QueueProperties) { p.AutoDeleteOnIdle = 10 * time.Minute })
	c := f.sb()
	c.send("sq", sessionMsg("a1", "a"))
	f.advance(8 * time.Minute)
	r, err := c.acceptNext("sq", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	receiveSession(t, r, 1)
	f.advance(8 * time.Minute) // 16 minutes after the send, 8 after the receive
	if got := f.s.Entities(); !slices.Contains(got, "sq") {
		t.Fatalf("the queue was deleted though a session receive used it: %v", got)
	}
	f.advance(3 * time.Minute)
	if got := f.s.Entities(); slices.Contains(got, "sq") {
		t.Fatalf("the queue stayed %v past its idle time", got)
	}
}

// issue 14.4: sessions of a subscription that requires sessions, accepted
// next through the SDK; get-message-sessions lists the sessions with
// messages or a state.
func TestSubscriptionSessionsAndListing(t *testing.T) {
	f := MustServer(t)
	f.MustTopic("t", nil)
	f.MustSubscription("t", "s", func(p *atom.SubscriptionProperties) { p.RequiresSession = true })
	c := f.sb()
	c.send("t", sessionMsg("x1", "x"), sessionMsg("y1", "y"))
	cx, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	r, err := c.c.AcceptNextSessionForSubscription(cx, "t", "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx(t))
	if r.SessionID() != "x" {
		t.Fatalf("first session %q, want x (it got a message first)", r.SessionID())
	}
	m := receiveSession(t, r, 10)
	if got := names(m); !slices.Equal(got, []string{"x1"}) {
		t.Fatalf("session x: %v", got)
	}
	if err := r.CompleteMessage(ctx(t), m[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := r.SetSessionState(ctx(t), []byte("done"), nil); err != nil {
		t.Fatal(err)
	}
	var ids []string
	pager := c.c.NewListSessionsForSubscriptionPager("t", "s", nil)
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, page.Sessions...)
	}
	if !slices.Equal(ids, []string{"x", "y"}) {
		t.Fatalf("listed sessions %v, want x (state) and y (a message)", ids)
	}
}

// issue 14.7: a queue and a subscription declared with RequiresSession in
// the official emulator's Config.json serve sessions.
func TestConfigJSONRequiresSessionServesSessions(t *testing.T) {
	f := MustServer(t)
	err := f.s.LoadConfig([]byte(`{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
		"Queues": [{"Name": "sq", "Properties": {"RequiresSession": true, "LockDuration": "PT1M"}}],
		"Topics": [{"Name": "t", "Properties": {}, "Subscriptions": [{"Name": "ss", "Properties": {"RequiresSession": true}}]}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := f.sb()
	c.send("sq", sessionMsg("q1", "a"))
	c.send("t", sessionMsg("t1", "b"))
	r, err := c.acceptNext("sq", 5*time.Second)
	if err != nil || r.SessionID() != "a" {
		t.Fatalf("accept next on the queue: %v", err)
	}
	cx, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	s, err := c.c.AcceptNextSessionForSubscription(cx, "t", "ss", nil)
	if err != nil {
		t.Fatalf("accept next on the subscription: %v", err)
	}
	defer s.Close(ctx(t))
	if got := names(receiveSession(t, s, 1)); s.SessionID() != "b" || !slices.Equal(got, []string{"t1"}) {
		t.Fatalf("subscription session %q gave %v", s.SessionID(), got)
	}
}
