package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// panicFixture is an engine on a frozen clock whose recovered panics are
// recorded.
type panicFixture struct {
	*fixture
	mu     sync.Mutex
	panics []core.HookPanic
}

func MustPanicFixture(tb testing.TB, store core.Store, h core.ProtocolHooks) *panicFixture {
	tb.Helper()
	pf := &panicFixture{}
	clock := core.NewClock(func() time.Time { return t0 })
	clock.Freeze()
	e := core.NewEngine(core.Config{Store: store, OnPanic: func(p core.HookPanic) {
		pf.mu.Lock()
		pf.panics = append(pf.panics, p)
		pf.mu.Unlock()
	}})
	e.Register("test", h)
	if err := e.Recover(context.Background(), clock.Now()); err != nil {
		tb.Fatal(err)
	}
	pf.fixture = &fixture{tb: tb, e: e, clock: clock}
	return pf
}

// reported returns the panics reported so far, once the hooks queued so
// far have run.
func (pf *panicFixture) reported() []core.HookPanic {
	pf.hooks()
	pf.mu.Lock()
	defer pf.mu.Unlock()
	return append([]core.HookPanic(nil), pf.panics...)
}

// within runs fn in another goroutine and fails the test unless it returns
// within a deadline: an engine left locked never answers. It returns what
// fn panicked with, if anything.
func within(tb testing.TB, what string, fn func()) (panicked any) {
	tb.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		fn()
	}()
	select {
	case p := <-done:
		return p
	case <-time.After(5 * time.Second):
		tb.Fatalf("%s did not return within 5s: the engine is left locked", what)
		return nil
	}
}

// mustServe checks that the engine answers calls on other entities from
// another goroutine: it creates one, enqueues and receives.
func (pf *panicFixture) mustServe(name string) {
	pf.tb.Helper()
	if p := within(pf.tb, "a call on another entity", func() {
		k := pf.MustCreate(name, ttlPolicy(time.Hour))
		pf.MustEnqueue(k, body("other"))
		if it, ok := pf.MustReceive(k, time.Minute); !ok || string(it.Body) != "other" {
			pf.tb.Errorf("receive from %s = %q, %v; want other", name, it.Body, ok)
		}
	}); p != nil {
		pf.tb.Fatalf("a call on another entity panicked: %v", p)
	}
}

func TestPanickingDeadLetterHookKeepsTheExpiredItemAndLeavesTheEngineServing(t *testing.T) {
	// issue 16.1: a DeadLetter hook that panics while an expiry
	// dead-letters an item (T-EXP) leaves the engine unlocked, the item
	// kept in its entity (deferred), an event and one report with a stack.
	pf := MustPanicFixture(t, core.NewMemStore(), core.ProtocolHooks{
		DeadLetter: func(*core.Tx, *core.Entity, core.Item, core.DeadLetterReason) { panic("dead-letter hook bug") },
	})
	p := ttlPolicy(time.Minute)
	p.OnExpire = core.DeadLetter
	q := pf.MustCreate("q", p)
	orig := pf.MustEnqueue(q, body("keep me"))

	if v := within(t, "Advance past the expiry", func() { pf.advance(2 * time.Minute) }); v != nil {
		t.Errorf("Advance panicked: %v", v)
	}
	pf.mustServe("other")

	items, err := pf.e.Peek(pf.now(), q, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || string(items[0].Body) != "keep me" || items[0].State != core.Deferred {
		t.Fatalf("items of q = %+v; want the expired item kept, deferred", items)
	}
	var failed []core.Event
	for _, ev := range pf.e.Events(core.EventQuery{Entity: "q"}) {
		if ev.Action == core.ActionDeadLetterFailed {
			failed = append(failed, ev)
		}
	}
	if len(failed) != 1 || failed[0].Item != items[0].Seq || failed[0].Rule != "T-EXP" {
		t.Fatalf("dead-letter-failed events = %+v; want one for item %d with rule T-EXP", failed, items[0].Seq)
	}
	got := pf.reported()
	if len(got) != 1 || got[0].Hook != "DeadLetter" || got[0].Entity != q || got[0].Item != orig.Seq ||
		got[0].Value != "dead-letter hook bug" || len(got[0].Stack) == 0 {
		t.Fatalf("reported panics = %+v; want one of the DeadLetter hook on item %d, with a stack", got, orig.Seq)
	}

	// Taking the deferred item finds it expired and tries the hook again:
	// contained again, the item still kept.
	if v := within(t, "TakeDeferred", func() {
		if _, found, _, err := pf.e.TakeDeferred(pf.now(), q, items[0].Seq, time.Time{}); err != nil || found {
			t.Errorf("TakeDeferred of the kept item = %v, %v; want not found (expired)", found, err)
		}
	}); v != nil {
		t.Fatalf("TakeDeferred panicked: %v", v)
	}
	if items, _ := pf.e.Peek(pf.now(), q, 0, 10); len(items) != 1 || string(items[0].Body) != "keep me" {
		t.Fatalf("items of q after TakeDeferred = %+v; want the item kept", items)
	}
}

func TestPanickingDeadLetterHookOnRejectKeepsTheItem(t *testing.T) {
	// issue 16.1: the same for an item dead-lettered by a call
	// (a rejection): the call returns, the item is kept.
	pf := MustPanicFixture(t, core.NewMemStore(), core.ProtocolHooks{
		DeadLetter: func(*core.Tx, *core.Entity, core.Item, core.DeadLetterReason) { panic("dead-letter hook bug") },
	})
	q := pf.MustCreate("q", ttlPolicy(time.Hour))
	pf.MustEnqueue(q, body("rejected"))
	it, _ := pf.MustReceive(q, time.Minute)
	if v := within(t, "DeadLetter", func() {
		if _, err := pf.e.DeadLetter(pf.now(), q, it.Seq, core.DeadLetterReason{Code: "rejected", Rule: "T-REJ"}); err != nil {
			t.Error(err)
		}
	}); v != nil {
		t.Errorf("DeadLetter panicked: %v", v)
	}
	pf.mustServe("other")
	items, _ := pf.e.Peek(pf.now(), q, 0, 10)
	if len(items) != 1 || string(items[0].Body) != "rejected" || items[0].State != core.Deferred {
		t.Fatalf("items of q = %+v; want the rejected item kept, deferred", items)
	}
}

func TestPanickingSessionAvailableHookIsContained(t *testing.T) {
	// issue 16.1: a SessionAvailable hook (run after the lock is
	// released) that panics does not reach the caller: the enqueue
	// returns its item, the engine serves others, the panic is reported.
	pf := MustPanicFixture(t, core.NewMemStore(), core.ProtocolHooks{
		SessionAvailable: func(core.EntityKey, string) { panic("session hook bug") },
	})
	q := pf.MustCreate("q", sessionPolicy(time.Hour))
	var it core.Item
	if v := within(t, "Enqueue", func() {
		var err error
		if it, _, err = pf.e.Enqueue(pf.now(), q, inSession("s1", "a")); err != nil {
			t.Error(err)
		}
	}); v != nil {
		t.Fatalf("Enqueue panicked: %v", v)
	}
	pf.mustServe("other")
	if items, _ := pf.e.Peek(pf.now(), q, 0, 10); len(items) != 1 || items[0].Seq != it.Seq || items[0].State != core.Active {
		t.Fatalf("items of q = %+v; want the enqueued item, active", items)
	}
	got := pf.reported()
	if len(got) != 1 || got[0].Hook != "SessionAvailable" || got[0].Entity != q || len(got[0].Stack) == 0 {
		t.Fatalf("reported panics = %+v; want one of the SessionAvailable hook", got)
	}
}

// panickyStore is a MemStore whose Append panics while fail is set.
type panickyStore struct {
	*core.MemStore
	mu   sync.Mutex
	fail bool
}

func (s *panickyStore) Append(ops []core.Op) *core.Commit {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail {
		panic("store bug")
	}
	return s.MemStore.Append(ops)
}

func TestPanicInsideTheEngineReleasesItsLock(t *testing.T) {
	// issue 16.1: a panic of the engine's own code (here the Store's
	// Append, called inside the lock) goes on to the caller as a
	// *core.LockReleased, and the engine's lock is released.
	st := &panickyStore{MemStore: core.NewMemStore()}
	pf := MustPanicFixture(t, st, core.ProtocolHooks{})
	q := pf.MustCreate("q", ttlPolicy(time.Hour))
	st.mu.Lock()
	st.fail = true
	st.mu.Unlock()
	v := within(t, "Enqueue", func() { pf.e.Enqueue(pf.now(), q, core.Item{Body: []byte("a"), Persistent: true}) })
	var lr *core.LockReleased
	if err, _ := v.(error); !errors.As(err, &lr) || lr.Value != "store bug" {
		t.Errorf("Enqueue panicked with %#v; want a *core.LockReleased of the store's panic", v)
	}
	st.mu.Lock()
	st.fail = false
	st.mu.Unlock()
	pf.mustServe("other")
	if got := pf.reported(); len(got) != 1 || got[0].Hook != "Engine" || len(got[0].Stack) == 0 {
		t.Fatalf("reported panics = %+v; want one of the engine", got)
	}
}
