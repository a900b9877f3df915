package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// sessionPolicy is ttlPolicy(ttl) for an entity with sessions.
func sessionPolicy(ttl time.Duration) core.Policy {
	p := ttlPolicy(ttl)
	p.Sessions = true
	p.Rules.SessionLock = "SS-3"
	return p
}

func inSession(group, b string) core.Item { return core.Item{Group: group, Body: []byte(b)} }

// MustAccept accepts session group ("" for the next) of k for holder, its
// lock running out after lock.
func (f *fixture) MustAccept(k core.EntityKey, group, holder string, lock time.Duration) core.SessionInfo {
	f.tb.Helper()
	s, err := f.e.AcceptSession(f.now(), k, group, holder, f.now().Add(lock))
	if err != nil {
		f.tb.Fatalf("accept session %q for %s: %v", group, holder, err)
	}
	return s
}

// receiveAll receives every available item of a held session and returns
// their bodies.
func (f *fixture) receiveAll(k core.EntityKey, group, holder string) []string {
	f.tb.Helper()
	var out []string
	for {
		it, ok, err := f.e.ReceiveSession(f.now(), k, group, holder)
		if err != nil {
			f.tb.Fatal(err)
		}
		if !ok {
			return out
		}
		if it.Group != group {
			f.tb.Fatalf("session %q handed out item %d of session %q", group, it.Seq, it.Group)
		}
		out = append(out, string(it.Body))
	}
}

func wantCode(tb testing.TB, what string, err error, code string) {
	tb.Helper()
	if got := core.ErrorCode(err); got != code {
		tb.Errorf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

// rule: SS-1
func TestSessionOrderingAndExclusivity_SS1(t *testing.T) {
	f := MustFixture(t)
	var woken []string
	f.e.Register("test", core.ProtocolHooks{SessionAvailable: func(k core.EntityKey, group string) {
		woken = append(woken, group)
	}})
	q := f.MustCreate("q", sessionPolicy(time.Hour))
	for _, it := range []core.Item{inSession("A", "a1"), inSession("B", "b1"), inSession("A", "a2"), inSession("B", "b2"), inSession("A", "a3")} {
		f.MustEnqueue(q, it)
	}
	f.hooks()
	if d := cmp.Diff([]string{"A", "B", "A", "B", "A"}, woken); d != "" {
		t.Errorf("SessionAvailable calls (-want +got):\n%s", d)
	}
	// A session with nothing available is skipped by accept-next.
	f.MustEnqueue(q, core.Item{Group: "C", Body: []byte("c1"), State: core.Scheduled, ScheduledAt: f.now().Add(time.Hour)})

	if s := f.MustAccept(q, "", "h1", time.Minute); s.ID != "A" || s.Holder != "h1" || s.LockedUntil != t0.Add(time.Minute) {
		t.Fatalf("first accept-next: %+v, want session A for h1 until a minute on", s)
	}
	if s := f.MustAccept(q, "", "h2", time.Minute); s.ID != "B" {
		t.Fatalf("second accept-next got session %q, want B: A is held", s.ID)
	}
	_, err := f.e.AcceptSession(f.now(), q, "", "h3", f.now().Add(time.Minute))
	wantCode(t, "accept-next with every session held or empty", err, core.ENOSESSION)
	_, err = f.e.AcceptSession(f.now(), q, "A", "h3", f.now().Add(time.Minute))
	wantCode(t, "accept of a session another holds", err, core.ERESOURCELOCKED)
	if s := f.MustAccept(q, "A", "h1", time.Minute); s.Holder != "h1" {
		t.Errorf("accepting a session the holder holds: %+v", s)
	}

	// Messages of a session go in send order, to its holder only.
	_, _, err = f.e.ReceiveSession(f.now(), q, "A", "h2")
	wantCode(t, "receive from a session another holds", err, core.ESESSIONLOCKLOST)
	if d := cmp.Diff([]string{"a1", "a2", "a3"}, f.receiveAll(q, "A", "h1")); d != "" {
		t.Errorf("session A (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b1", "b2"}, f.receiveAll(q, "B", "h2")); d != "" {
		t.Errorf("session B (-want +got):\n%s", d)
	}

	// A plain receiver and an item without a session have no place here,
	// and an entity without sessions has none to accept.
	_, _, err = f.e.Receive(f.now(), q, f.now().Add(time.Minute))
	wantCode(t, "plain receive", err, core.EPRECONDITION)
	_, _, _, err = f.e.Take(f.now(), q)
	wantCode(t, "plain take", err, core.EPRECONDITION)
	_, _, err = f.e.Enqueue(f.now(), q, body("no session"))
	wantCode(t, "enqueue without a session id", err, core.EINVALID)
	plain := f.MustCreate("plain", ttlPolicy(time.Hour))
	_, err = f.e.AcceptSession(f.now(), plain, "A", "h1", f.now().Add(time.Minute))
	wantCode(t, "accept on an entity without sessions", err, core.EPRECONDITION)
	_, _, err = f.e.Update(f.now(), q, func(en *core.Entity) error { en.Policy.Sessions = false; return nil })
	wantCode(t, "turning sessions off", err, core.EINVALID)

	// Closing a receiver frees its session: its locked messages come back
	// in their places, their delivery not counted (the service counts it
	// only when the session lock runs out).
	if err := f.e.ReleaseSession(f.now(), q, "A", "h1"); err != nil {
		t.Fatal(err)
	}
	if s := f.MustAccept(q, "", "h3", time.Minute); s.ID != "A" || s.Counts.Active != 3 || s.Counts.Locked != 0 {
		t.Fatalf("accept-next after A was released: %+v, want A with its 3 messages available", s)
	}
	it, ok, err := f.e.ReceiveSession(f.now(), q, "A", "h3")
	if err != nil || !ok || string(it.Body) != "a1" || it.DeliveryCount != 1 {
		t.Fatalf("first message after the release: %q count %d (%v %v), want a1 delivered once", it.Body, it.DeliveryCount, ok, err)
	}
	// Abandoned, it is the session's next message again, its delivery counted.
	if err := f.e.Holder(q, "A", "h3").Release(f.now(), it.Seq); err != nil {
		t.Fatal(err)
	}
	it, _, _ = f.e.ReceiveSession(f.now(), q, "A", "h3")
	if string(it.Body) != "a1" || it.DeliveryCount != 2 {
		t.Fatalf("after an abandon: %q count %d, want a1 delivered twice", it.Body, it.DeliveryCount)
	}
	// The old holder settles nothing of it any more.
	_, err = f.e.Holder(q, "A", "h1").Complete(f.now(), it.Seq)
	wantCode(t, "complete by the holder that released the session", err, core.ESESSIONLOCKLOST)
	if _, err := f.e.Holder(q, "A", "h3").Complete(f.now(), it.Seq); err != nil {
		t.Fatal(err)
	}
	_, err = f.e.Holder(q, "A", "h3").Complete(f.now(), it.Seq)
	wantCode(t, "complete twice", err, core.ELOCKLOST)
	// Releasing a session one does not hold does nothing.
	if err := f.e.ReleaseSession(f.now(), q, "A", "h1"); err != nil {
		t.Fatal(err)
	}
	if ss, _ := f.e.Sessions(f.now(), q); len(ss) != 3 || ss[0].Holder != "h3" {
		t.Fatalf("sessions after a stray release: %+v", ss)
	}
}

// rule: SS-2
func TestSessionLockDurationAndRenewal_SS2(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", sessionPolicy(time.Hour))
	f.MustEnqueue(q, inSession("A", "a1"))
	f.MustEnqueue(q, inSession("A", "a2"))
	f.MustAccept(q, "A", "h1", 30*time.Second)
	a1, _, _ := f.e.ReceiveSession(f.now(), q, "A", "h1")
	if a1.LockedUntil != t0.Add(30*time.Second) {
		t.Fatalf("a message's lock is its session's: LockedUntil %v, want %v", a1.LockedUntil, t0.Add(30*time.Second))
	}
	f.advance(20 * time.Second)
	s, err := f.e.RenewSession(f.now(), q, "A", "h1", f.now().Add(30*time.Second))
	if err != nil || s.LockedUntil != t0.Add(50*time.Second) {
		t.Fatalf("renew: %+v %v, want locked until 50s on", s, err)
	}
	items, _ := f.e.PeekSession(f.now(), q, "A", 0, 10)
	if items[0].LockedUntil != s.LockedUntil {
		t.Errorf("a renewal renews the session's messages: a1 locked until %v, want %v", items[0].LockedUntil, s.LockedUntil)
	}
	_, err = f.e.RenewSession(f.now(), q, "A", "h2", f.now().Add(time.Hour))
	wantCode(t, "renew by another holder", err, core.ESESSIONLOCKLOST)
	f.advance(20 * time.Second) // 40s: past the first lock, within the renewed one
	if _, err := f.e.Holder(q, "A", "h1").Complete(f.now(), a1.Seq); err != nil {
		t.Fatalf("complete under the renewed lock: %v", err)
	}
	a2, _, _ := f.e.ReceiveSession(f.now(), q, "A", "h1")
	// Renewing a message's lock renews its session's.
	got, err := f.e.Holder(q, "A", "h1").RenewLock(f.now(), a2.Seq, f.now().Add(30*time.Second))
	if err != nil || got.LockedUntil != t0.Add(70*time.Second) {
		t.Fatalf("renew a message lock: %v %v, want 70s on", got.LockedUntil, err)
	}
	_, err = f.e.RenewLock(f.now(), q, a2.Seq, f.now().Add(time.Hour))
	wantCode(t, "a plain renewal of a session's message", err, core.EPRECONDITION)
	ss, _ := f.e.Sessions(f.now(), q)
	want := []core.SessionInfo{{ID: "A", Holder: "h1", LockedUntil: t0.Add(70 * time.Second), Counts: core.Counts{Locked: 1}}}
	if d := cmp.Diff(want, ss); d != "" {
		t.Errorf("Sessions (-want +got):\n%s", d)
	}
	if in, _ := f.e.Info(f.now(), q); in.NextDue != t0.Add(70*time.Second) {
		t.Errorf("NextDue %v, want the session lock's %v", in.NextDue, t0.Add(70*time.Second))
	}
	f.advance(29 * time.Second)
	if n := f.advance(time.Second); n == 0 {
		t.Errorf("nothing happened when the renewed lock ran out")
	}
	if in, _ := f.e.Info(f.now(), q); in.NextDue != a2.DueAt {
		t.Errorf("NextDue %v after the lock ran out, want a2's expiry %v", in.NextDue, a2.DueAt)
	}
}

// rule: SS-3, SB-7
func TestSessionLockLossAtItsDueTime_SS3(t *testing.T) {
	f := MustFixture(t)
	var lags []string
	f.e = core.NewEngine(core.Config{Store: f.store, ObserveLag: func(protocol string, a core.Action, lag time.Duration) {
		lags = append(lags, fmt.Sprint(a, " ", lag))
	}})
	var woken []string
	f.e.Register("test", core.ProtocolHooks{SessionAvailable: func(k core.EntityKey, group string) {
		woken = append(woken, group)
	}})
	q := f.MustCreate("q", sessionPolicy(time.Hour))
	a1 := f.MustEnqueue(q, core.Item{Group: "A", Body: []byte("a1"), TTL: core.After(10 * time.Second)})
	a2 := f.MustEnqueue(q, core.Item{Group: "A", Body: []byte("a2"), TTL: core.After(55 * time.Second)})
	a3 := f.MustEnqueue(q, inSession("A", "a3"))
	f.MustAccept(q, "", "h1", 30*time.Second)
	if d := cmp.Diff([]string{"a1", "a2", "a3"}, f.receiveAll(q, "A", "h1")); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	f.advance(20 * time.Second)
	if _, err := f.e.RenewSession(f.now(), q, "A", "h1", f.now().Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	woken = nil
	// The clock jumps past the lock's expiry (50s) and a2's (55s): each
	// is applied at its due time, in order.
	f.advance(100 * time.Second)
	want := []string{
		"lock-lost SS-3 0 2m0s",                       // the session's lock, due at 50s
		fmt.Sprintf("lock-lost SS-3 %d 2m0s", a1.Seq), // and those of its messages
		fmt.Sprintf("lock-lost SS-3 %d 2m0s", a2.Seq),
		fmt.Sprintf("lock-lost SS-3 %d 2m0s", a3.Seq),
		fmt.Sprintf("expired T-LOCK %d 2m0s", a1.Seq), // SB-7: expired while locked, so at once
		fmt.Sprintf("expired T-EXP %d 2m0s", a2.Seq),  // at its own due time, 55s
	}
	if d := cmp.Diff(want, f.events(q)); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	evs := f.e.Events(core.EventQuery{Entity: q.Name})
	if evs[0].Session != "A" || evs[0].Due != t0.Add(50*time.Second) || evs[5].Due != t0.Add(55*time.Second) {
		t.Errorf("the lock loss event: %+v, the expiry: %+v", evs[0], evs[5])
	}
	if d := cmp.Diff([]string{"lock-lost 1m10s", "expired 1m5s"}, lags); d != "" {
		t.Errorf("lags (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"A"}, woken); d != "" {
		t.Errorf("SessionAvailable after the lock loss (-want +got):\n%s", d)
	}
	// Settling under the lost lock fails; the next holder gets what is
	// left with its delivery counted (the lock ran out: it counts).
	_, err := f.e.Holder(q, "A", "h1").Complete(f.now(), a3.Seq)
	wantCode(t, "complete under a lost session lock", err, core.ESESSIONLOCKLOST)
	for _, op := range []func() error{
		func() error { return f.e.Holder(q, "A", "h1").Release(f.now(), a3.Seq) },
		func() error { _, err := f.e.Holder(q, "A", "h1").Defer(f.now(), a3.Seq); return err },
		func() error {
			_, err := f.e.Holder(q, "A", "h1").DeadLetter(f.now(), a3.Seq, core.DeadLetterReason{Code: "x"})
			return err
		},
		func() error { _, err := f.e.Holder(q, "A", "h1").RenewLock(f.now(), a3.Seq, f.now()); return err },
		func() error { _, err := f.e.Holder(q, "A", "h1").SetMeta(f.now(), a3.Seq, nil); return err },
		func() error { return f.e.Holder(q, "A", "h1").Unlock(f.now(), a3.Seq) },
	} {
		wantCode(t, "settle under a lost session lock", op(), core.ESESSIONLOCKLOST)
	}
	if s := f.MustAccept(q, "", "h2", 30*time.Second); s.ID != "A" {
		t.Fatalf("accept-next got %q, want A, free again", s.ID)
	}
	it, ok, _ := f.e.ReceiveSession(f.now(), q, "A", "h2")
	if !ok || it.Seq != a3.Seq || it.DeliveryCount != 2 {
		t.Fatalf("after the lock loss: item %d count %d, want a3 delivered twice", it.Seq, it.DeliveryCount)
	}
	_, err = f.e.Holder(q, "A", "h1").Complete(f.now(), a3.Seq)
	wantCode(t, "complete by the old holder after another accepted the session", err, core.ESESSIONLOCKLOST)
	if _, err := f.e.Holder(q, "A", "h2").Complete(f.now(), a3.Seq); err != nil {
		t.Fatal(err)
	}
}

// rule: SS-4
func TestSessionStateDurableAcrossRestartAndLockLoss_SS4(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", sessionPolicy(time.Hour))
	f.MustAccept(q, "S", "h1", 30*time.Second)
	if st, err := f.e.GetSessionState(f.now(), q, "S", "h1"); st != nil || err != nil {
		t.Fatalf("state of a new session: %q %v, want none", st, err)
	}
	c, err := f.e.SetSessionState(f.now(), q, "S", "h1", []byte("step 1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = f.e.SetSessionState(f.now(), q, "S", "h2", []byte("theirs"))
	wantCode(t, "set state of a session another holds", err, core.ESESSIONLOCKLOST)
	_, err = f.e.GetSessionState(f.now(), q, "S", "h2")
	wantCode(t, "get state of a session another holds", err, core.ESESSIONLOCKLOST)

	// The lock runs out: the state stays, for the next holder.
	f.advance(time.Minute)
	f.MustAccept(q, "S", "h2", 30*time.Second)
	if st, _ := f.e.GetSessionState(f.now(), q, "S", "h2"); string(st) != "step 1" {
		t.Fatalf("state after the lock loss: %q", st)
	}
	f.MustEnqueue(q, inSession("T", "t1"))
	f.MustAccept(q, "T", "h3", time.Hour)
	f.e.SetSessionState(f.now(), q, "T", "h3", []byte{}) // empty is a state too
	ss, _ := f.e.Sessions(f.now(), q)
	want := []core.SessionInfo{
		{ID: "S", Holder: "h2", LockedUntil: f.now().Add(30 * time.Second), HasState: true, StateSize: 6},
		{ID: "T", Holder: "h3", LockedUntil: f.now().Add(time.Hour), HasState: true, Counts: core.Counts{Active: 1, ActiveBytes: 2}},
	}
	if d := cmp.Diff(want, ss); d != "" {
		t.Errorf("Sessions (-want +got):\n%s", d)
	}

	// A restart keeps the states, not the locks.
	restart := func() {
		t.Helper()
		e2 := core.NewEngine(core.Config{Store: f.store})
		if err := e2.Recover(context.Background(), f.now()); err != nil {
			t.Fatal(err)
		}
		f.e = e2
	}
	restart()
	f.MustAccept(q, "S", "h4", time.Minute)
	f.MustAccept(q, "T", "h5", time.Minute)
	if st, _ := f.e.GetSessionState(f.now(), q, "S", "h4"); string(st) != "step 1" {
		t.Fatalf("state after a restart: %q", st)
	}
	if st, _ := f.e.GetSessionState(f.now(), q, "T", "h5"); st == nil || len(st) != 0 {
		t.Fatalf("an empty state after a restart: %q (nil %v), want empty, not none", st, st == nil)
	}
	// nil clears it, for good.
	f.e.SetSessionState(f.now(), q, "S", "h4", nil)
	f.e.ReleaseSession(f.now(), q, "S", "h4")
	if ss, _ := f.e.Sessions(f.now(), q); len(ss) != 1 || ss[0].ID != "T" {
		t.Errorf("sessions after S was cleared and released: %+v, want only T", ss)
	}
	restart()
	f.MustAccept(q, "S", "h6", time.Minute)
	if st, _ := f.e.GetSessionState(f.now(), q, "S", "h6"); st != nil {
		t.Fatalf("a cleared state after a restart: %q", st)
	}

	// Deleting the entity deletes its states.
	if _, err := f.e.Delete(f.now(), q); err != nil {
		t.Fatal(err)
	}
	q = f.MustCreate("q", sessionPolicy(time.Hour))
	restart()
	f.MustAccept(q, "T", "h7", time.Minute)
	if st, _ := f.e.GetSessionState(f.now(), q, "T", "h7"); st != nil {
		t.Fatalf("the state of a deleted entity came back: %q", st)
	}
}

// rule: SS-5, SB-8, SB-4, SB-9
func TestExpiryDeadLetteringSchedulingAndDeferralInSessions_SS5(t *testing.T) {
	f := MustFixture(t)
	p := sessionPolicy(time.Minute)
	p.OnExpire = core.DeadLetter
	q := f.MustCreate("q", p)
	dlq := f.MustCreate("dlq", core.Policy{})
	f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		tx.Enqueue(dlq, it)
	}})
	// TTL and dead-lettering: the dead letter keeps its session id.
	f.MustEnqueue(q, inSession("A", "a1"))
	f.advance(time.Minute)
	dead, ok, _, _ := f.e.Take(f.now(), dlq)
	if !ok || dead.Group != "A" || string(dead.Body) != "a1" {
		t.Fatalf("dead letter: %+v %v, want a1 of session A", dead, ok)
	}
	if ss, _ := f.e.Sessions(f.now(), q); len(ss) != 0 {
		t.Errorf("sessions after their only message expired: %+v", ss)
	}

	// A scheduled message makes its session available at its time.
	f.MustEnqueue(q, core.Item{Group: "B", Body: []byte("b1"), State: core.Scheduled, ScheduledAt: f.now().Add(5 * time.Minute)})
	_, err := f.e.AcceptSession(f.now(), q, "", "h1", f.now().Add(time.Minute))
	wantCode(t, "accept-next before the scheduled time", err, core.ENOSESSION)
	f.advance(5 * time.Minute)
	f.MustAccept(q, "", "h1", time.Hour)
	b1, ok, _ := f.e.ReceiveSession(f.now(), q, "B", "h1")
	if !ok || string(b1.Body) != "b1" || !b1.DueAt.Equal(b1.ScheduledAt.Add(time.Minute)) {
		t.Fatalf("scheduled message: %+v, want b1 expiring a minute after its scheduled time", b1)
	}

	// Deferral: set aside, out of the session's order, taken back by its
	// sequence number by the session's holder only; it never expires on
	// its own.
	if _, err := f.e.Holder(q, "B", "h1").Defer(f.now(), b1.Seq); err != nil {
		t.Fatal(err)
	}
	b2 := f.MustEnqueue(q, inSession("B", "b2"))
	if d := cmp.Diff([]string{"b2"}, f.receiveAll(q, "B", "h1")); d != "" {
		t.Errorf("after a deferral (-want +got):\n%s", d)
	}
	f.e.Holder(q, "B", "h1").Complete(f.now(), b2.Seq)
	peek, _ := f.e.PeekSession(f.now(), q, "B", 0, 10)
	if len(peek) != 1 || peek[0].State != core.Deferred {
		t.Errorf("peek of session B: %+v, want the deferred b1", peek)
	}
	if _, ok, _, _ := f.e.TakeDeferredSession(f.now(), q, "A", "h1", b1.Seq); ok {
		t.Errorf("took a deferred message of B through session A")
	}
	_, _, _, err = f.e.TakeDeferredSession(f.now(), q, "B", "h2", b1.Seq)
	wantCode(t, "take a deferred message without the session", err, core.ESESSIONLOCKLOST)
	_, _, _, err = f.e.TakeDeferred(f.now(), q, b1.Seq, f.now().Add(time.Minute))
	wantCode(t, "a plain take of a deferred message", err, core.EPRECONDITION)
	got, ok, _, err := f.e.TakeDeferredSession(f.now(), q, "B", "h1", b1.Seq)
	if err != nil || !ok || got.State != core.Locked || got.DeliveryCount != 2 {
		t.Fatalf("take deferred: %+v %v %v, want b1 locked, delivered twice", got, ok, err)
	}
	f.e.Holder(q, "B", "h1").Defer(f.now(), b1.Seq)
	f.advance(time.Hour) // b1 is long past its expiry, but deferred
	f.MustAccept(q, "B", "h2", time.Hour)
	if _, ok, _, _ := f.e.TakeDeferredSession(f.now(), q, "B", "h2", b1.Seq); ok {
		t.Errorf("an expired deferred message was handed out")
	}
	if dead, ok, _, _ := f.e.Take(f.now(), dlq); !ok || string(dead.Body) != "b1" {
		t.Errorf("the expired deferred message was not dead-lettered: %+v", dead)
	}

	// Peek of one session shows its items only, from a sequence number on.
	c1 := f.MustEnqueue(q, inSession("C", "c1"))
	f.MustEnqueue(q, inSession("D", "d1"))
	c2 := f.MustEnqueue(q, inSession("C", "c2"))
	peek, _ = f.e.PeekSession(f.now(), q, "C", c1.Seq+1, 10)
	if len(peek) != 1 || peek[0].Seq != c2.Seq {
		t.Errorf("peek of C from %d: %+v, want c2 only", c1.Seq+1, peek)
	}
	// Receive-and-delete.
	f.MustAccept(q, "C", "h3", time.Hour)
	for _, want := range []string{"c1", "c2"} {
		it, ok, _, err := f.e.TakeSession(f.now(), q, "C", "h3")
		if err != nil || !ok || string(it.Body) != want {
			t.Fatalf("take: %q %v %v, want %s", it.Body, ok, err, want)
		}
	}
	if _, ok, _, _ := f.e.TakeSession(f.now(), q, "C", "h3"); ok {
		t.Errorf("took a third message of C")
	}
	// Dead-lettering by the holder (MaxDeliveryCount, a client's choice).
	f.MustAccept(q, "D", "h4", time.Hour)
	d1, _, _ := f.e.ReceiveSession(f.now(), q, "D", "h4")
	if _, err := f.e.Holder(q, "D", "h4").DeadLetter(f.now(), d1.Seq, core.DeadLetterReason{Code: "MaxDeliveryCountExceeded"}); err != nil {
		t.Fatal(err)
	}
	if dead, ok, _, _ := f.e.Take(f.now(), dlq); !ok || dead.Group != "D" {
		t.Errorf("dead letter of D: %+v", dead)
	}
}

// rule: SS-3 (the holder learns that its session's lock ran out): the
// SessionLost hook is called once, outside the lock, with the session and
// the holder that lost it, when the clock passes the lock; a release by
// the holder itself calls nothing.
func TestSessionLostHookTellsTheHolder_SS3(t *testing.T) {
	f := MustFixture(t)
	var lost []string
	f.e.Register("test", core.ProtocolHooks{SessionLost: func(k core.EntityKey, group, holder string) {
		// Outside the lock: the engine can be called.
		infos, err := f.e.Sessions(f.now(), k)
		lost = append(lost, fmt.Sprint(k.Name, " ", group, " ", holder, " ", err == nil && len(infos) == 2))
	}})
	q := f.MustCreate("q", sessionPolicy(time.Hour))
	f.MustEnqueue(q, inSession("A", "a1"))
	f.MustEnqueue(q, inSession("B", "b1"))
	f.MustAccept(q, "A", "h1", 30*time.Second)
	f.MustAccept(q, "B", "h2", 30*time.Second)
	if err := f.e.ReleaseSession(f.now(), q, "B", "h2"); err != nil {
		t.Fatal(err)
	}
	f.advance(29 * time.Second)
	if len(lost) != 0 {
		t.Fatalf("before the lock ran out: %v", lost)
	}
	f.advance(2 * time.Second)
	if d := cmp.Diff([]string{"q A h1 true"}, lost); d != "" {
		t.Errorf("SessionLost (-want +got):\n%s", d)
	}
}
