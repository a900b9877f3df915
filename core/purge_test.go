package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// issue 15.11: PurgeAll (the dashboard's purge of a Service Bus or Cosmos
// DB entity) removes the items of every state, the locked one too, whose
// holder then finds its lock lost; nothing comes back after a restart,
// and nothing stays due.
func TestPurgeAllRemovesLockedScheduledAndDeferredItems(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(time.Hour))
	for _, b := range []string{"locked", "deferred", "active"} {
		f.MustEnqueue(q, body(b))
	}
	f.MustEnqueue(q, core.Item{Body: []byte("scheduled"), State: core.Scheduled, ScheduledAt: f.now().Add(time.Minute)})
	locked, _ := f.MustReceive(q, time.Minute)
	deferred, _ := f.MustReceive(q, time.Minute)
	if _, err := f.e.Defer(f.now(), q, deferred.Seq); err != nil {
		t.Fatal(err)
	}
	n, c, err := f.e.PurgeAll(f.now(), q)
	if err != nil || n != 4 {
		t.Fatalf("PurgeAll = %d, %v; want the 4 items", n, err)
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Complete(f.now(), q, locked.Seq); core.ErrorCode(err) != core.ELOCKLOST {
		t.Errorf("completing the purged locked item: %v, want %s", err, core.ELOCKLOST)
	}
	if _, found, _, err := f.e.TakeDeferred(f.now(), q, deferred.Seq, f.now().Add(time.Minute)); found || err != nil {
		t.Errorf("taking the purged deferred item: found %v, %v", found, err)
	}
	if in, _ := f.e.Info(f.now(), q); in.Counts != (core.Counts{}) {
		t.Errorf("counts after PurgeAll: %+v", in.Counts)
	}
	if due, ok := f.e.NextDue(); ok {
		t.Errorf("something is still due at %s", due)
	}
	if got := f.advance(2 * time.Hour); got != 0 {
		t.Errorf("%d changes applied after PurgeAll, want none", got)
	}
	e2 := core.NewEngine(core.Config{Store: f.store})
	if err := e2.Recover(context.Background(), f.now()); err != nil {
		t.Fatal(err)
	}
	if its, err := e2.Items(f.now(), q, 0); err != nil || len(its) != 0 {
		t.Errorf("items after a restart: %d, %v", len(its), err)
	}
}

// rule: SS-4
// issue 15.11: PurgeAll removes the messages of every session, those the
// holder has locked too, and keeps the sessions' holders and states.
func TestPurgeAllOfSessionsKeepsHoldersAndStates_SS4(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", sessionPolicy(time.Hour))
	for _, g := range []string{"A", "B", "A"} {
		f.MustEnqueue(q, inSession(g, "x"))
	}
	f.MustEnqueue(q, core.Item{Group: "B", State: core.Scheduled, ScheduledAt: f.now().Add(time.Hour)})
	f.MustAccept(q, "A", "h1", time.Hour)
	f.e.SetSessionState(f.now(), q, "A", "h1", []byte("kept"))
	it, found, err := f.e.ReceiveSession(f.now(), q, "A", "h1")
	if !found || err != nil {
		t.Fatal(found, err)
	}
	if n, _, err := f.e.PurgeAll(f.now(), q); n != 4 || err != nil {
		t.Fatalf("PurgeAll removed %d (%v), want 4", n, err)
	}
	if _, err := f.e.Holder(q, "A", "h1").Complete(f.now(), it.Seq); core.ErrorCode(err) != core.ELOCKLOST {
		t.Errorf("completing the purged message of the held session: %v, want %s", err, core.ELOCKLOST)
	}
	ss, _ := f.e.Sessions(f.now(), q)
	want := []core.SessionInfo{{ID: "A", Holder: "h1", LockedUntil: f.now().Add(time.Hour), HasState: true, StateSize: 4}}
	if d := cmp.Diff(want, ss); d != "" {
		t.Errorf("sessions after PurgeAll (-want +got):\n%s", d)
	}
}
