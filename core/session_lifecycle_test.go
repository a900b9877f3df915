package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// Sessions at the end of their entity's life and of their messages'.

// rule: SB-10, SS-5
func TestIdleDeletionCountsSessionReceivesAndDropsSessions_SS5(t *testing.T) {
	f := MustFixture(t)
	p := sessionPolicy(time.Hour)
	p.IdleTTL = core.After(5 * time.Minute)
	p.IdleUses = core.UseSend | core.UseReceive
	q := f.MustCreate("q", p)
	f.MustEnqueue(q, inSession("A", "a1"))
	f.advance(4 * time.Minute)
	f.MustAccept(q, "A", "h1", time.Hour)
	f.advance(4 * time.Minute)
	f.e.SetSessionState(f.now(), q, "A", "h1", []byte("state"))
	if _, ok, _ := f.e.ReceiveSession(f.now(), q, "A", "h1"); !ok {
		t.Fatal("nothing to receive")
	}
	f.advance(4 * time.Minute)
	if _, ok := f.e.Entity(q); !ok {
		t.Fatal("deleted while its sessions were received from")
	}
	f.advance(time.Minute)
	if _, ok := f.e.Entity(q); ok {
		t.Fatal("not deleted after 5 minutes idle")
	}
	if in, _ := f.e.NextDue(); !in.IsZero() {
		t.Errorf("a timer of the deleted entity is still armed, due %v", in)
	}
	q = f.MustCreate("q", p)
	f.MustAccept(q, "A", "h2", time.Hour)
	if st, _ := f.e.GetSessionState(f.now(), q, "A", "h2"); st != nil {
		t.Errorf("the state of an entity deleted idle came back: %q", st)
	}
}

// rule: SS-3
// A message dead-lettered by its session's holder has left the session:
// renewing or releasing the session later does not touch it, wherever it
// went (here it is received, locked, from the dead-letter entity).
func TestSessionLeavesItsDeadLettersAlone_SS3(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", sessionPolicy(time.Hour))
	dlq := f.MustCreate("dlq", core.Policy{})
	f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		tx.Enqueue(dlq, it)
	}})
	a1 := f.MustEnqueue(q, inSession("A", "a1"))
	f.MustEnqueue(q, inSession("A", "a2"))
	f.MustAccept(q, "A", "h1", time.Minute)
	f.receiveAll(q, "A", "h1")
	if _, err := f.e.Holder(q, "A", "h1").DeadLetter(f.now(), a1.Seq, core.DeadLetterReason{Code: "bad"}); err != nil {
		t.Fatal(err)
	}
	dead, ok := f.MustReceive(dlq, time.Hour)
	if !ok || string(dead.Body) != "a1" {
		t.Fatalf("dead letter: %+v", dead)
	}
	f.e.RenewSession(f.now(), q, "A", "h1", f.now().Add(2*time.Minute))
	if err := f.e.ReleaseSession(f.now(), q, "A", "h1"); err != nil {
		t.Fatal(err)
	}
	in, _ := f.e.Info(f.now(), dlq)
	items, _ := f.e.Items(f.now(), dlq, 0)
	if in.Counts.Locked != 1 || len(items) != 1 || !items[0].LockedUntil.Equal(t0.Add(time.Hour)) || items[0].DeliveryCount != 2 {
		t.Errorf("the dead letter after its session was renewed and released: %+v, counts %+v", items, in.Counts)
	}
}

// rule: SS-4
// Purge removes the messages of every session and keeps their states; a
// reset drops the sessions, states too, as deleting the entity does.
func TestPurgeAndResetOfSessions_SS4(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", sessionPolicy(time.Hour))
	for _, g := range []string{"A", "B", "A"} {
		f.MustEnqueue(q, inSession(g, "x"))
	}
	f.MustEnqueue(q, core.Item{Group: "B", State: core.Scheduled, ScheduledAt: f.now().Add(time.Hour)})
	f.MustAccept(q, "A", "h1", time.Hour)
	f.e.SetSessionState(f.now(), q, "A", "h1", []byte("kept"))
	if n, _, err := f.e.Purge(f.now(), q); n != 3 || err != nil {
		t.Fatalf("purge removed %d (%v), want the 3 active messages", n, err)
	}
	ss, _ := f.e.Sessions(f.now(), q)
	want := []core.SessionInfo{
		{ID: "A", Holder: "h1", LockedUntil: f.now().Add(time.Hour), HasState: true, StateSize: 4},
		{ID: "B", Counts: core.Counts{Scheduled: 1}},
	}
	if d := cmp.Diff(want, ss); d != "" {
		t.Errorf("sessions after a purge (-want +got):\n%s", d)
	}
	f.e.Reset(f.now())
	q = f.MustCreate("q", sessionPolicy(time.Hour))
	e2 := core.NewEngine(core.Config{Store: f.store})
	e2.Recover(context.Background(), f.now())
	if ss, _ := e2.Sessions(f.now(), q); len(ss) != 0 {
		t.Errorf("sessions after a reset and a restart: %+v", ss)
	}
	if next, ok := f.e.NextDue(); ok {
		t.Errorf("a timer is armed after a reset, due %v", next)
	}
}
