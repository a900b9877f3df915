package sqlitestore

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// rule: SS-4, SS-3
// Sessions through a restart on the same SQLite file: the session states
// and the session's messages are there, in order; the locks are not (a
// restarted lapse has no receivers), so every session is free again.
func TestSessionsSurviveARestart_SS4(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	q := core.EntityKey{Protocol: "test", Name: "q"}
	ctx := context.Background()
	open := func() (*Store, *core.Engine) {
		s := MustOpen(t, dir)
		e := core.NewEngine(core.Config{Store: s})
		if err := e.Recover(ctx, at); err != nil {
			t.Fatal(err)
		}
		return s, e
	}
	s, e := open()
	p := core.Policy{Sessions: true, DefaultTTL: core.After(time.Hour), Rules: core.RuleIDs{SessionLock: "SS-3"}}
	if _, _, err := e.Create(at, core.Entity{EntityKey: q, Durable: true, Policy: p}); err != nil {
		t.Fatal(err)
	}
	var last *core.Commit
	for _, m := range []struct{ group, body string }{{"A", "a1"}, {"B", "b1"}, {"A", "a2"}, {"A", "a3"}} {
		_, c, err := e.Enqueue(at, q, core.Item{Group: m.group, Body: []byte(m.body), Persistent: true})
		if err != nil {
			t.Fatal(err)
		}
		last = c
	}
	if _, err := e.AcceptSession(at, q, "A", "h1", at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	a1, _, _ := e.ReceiveSession(at, q, "A", "h1")
	if c, err := e.Holder(q, "A", "h1").Complete(at, a1.Seq); err != nil {
		t.Fatal(err)
	} else {
		last = c
	}
	e.ReceiveSession(at, q, "A", "h1") // a2 stays locked until the restart
	if _, err := e.SetSessionState(at, q, "A", "h1", []byte("after a1")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AcceptSession(at, q, "C", "h2", at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	e.SetSessionState(at, q, "C", "h2", []byte("gone soon"))
	c, err := e.SetSessionState(at, q, "C", "h2", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*core.Commit{last, c} {
		if err := c.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	MustClose(t, s)

	at = at.Add(time.Second)
	_, e = open()
	ss, err := e.Sessions(at, q)
	if err != nil {
		t.Fatal(err)
	}
	want := []core.SessionInfo{
		{ID: "A", HasState: true, StateSize: 8, Counts: core.Counts{Active: 2, ActiveBytes: 4}},
		{ID: "B", Counts: core.Counts{Active: 1, ActiveBytes: 2}},
	}
	if d := cmp.Diff(want, ss); d != "" {
		t.Fatalf("sessions after a restart (-want +got):\n%s", d)
	}
	// Free again, in the order of their oldest messages: b1 came before a2.
	for _, want := range []string{"B", "A"} {
		if got, err := e.AcceptSession(at, q, "", "h3", at.Add(time.Minute)); err != nil || got.ID != want {
			t.Fatalf("accept-next after a restart: %+v %v, want %s", got, err, want)
		}
	}
	if st, _ := e.GetSessionState(at, q, "A", "h3"); string(st) != "after a1" {
		t.Errorf("state of A after a restart: %q", st)
	}
	var bodies []string
	for {
		it, ok, err := e.ReceiveSession(at, q, "A", "h3")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		bodies = append(bodies, string(it.Body))
	}
	if d := cmp.Diff([]string{"a2", "a3"}, bodies); d != "" {
		t.Errorf("session A after a restart (-want +got):\n%s", d)
	}
}
