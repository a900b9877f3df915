package core_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixture is an engine on a frozen clock.
type fixture struct {
	tb    testing.TB
	e     *core.Engine
	clock *core.Clock
	store *core.MemStore
}

func MustFixture(tb testing.TB) *fixture {
	tb.Helper()
	clock := core.NewClock(func() time.Time { return t0 })
	clock.Freeze()
	st := core.NewMemStore()
	e := core.NewEngine(core.Config{Store: st})
	if err := e.Recover(context.Background(), clock.Now()); err != nil {
		tb.Fatal(err)
	}
	return &fixture{tb: tb, e: e, clock: clock, store: st}
}

func (f *fixture) now() time.Time { return f.clock.Now() }

func (f *fixture) advance(d time.Duration) int {
	f.tb.Helper()
	now, err := f.clock.Advance(d)
	if err != nil {
		f.tb.Fatal(err)
	}
	n, _ := f.e.Advance(now)
	f.hooks()
	return n
}

// hooks waits until the hooks queued so far have run, as the control
// API's clock calls do.
func (f *fixture) hooks() {
	f.tb.Helper()
	if err := f.e.WaitHooks(context.Background()); err != nil {
		f.tb.Fatal(err)
	}
}

func (f *fixture) MustCreate(name string, p core.Policy) core.EntityKey {
	f.tb.Helper()
	en := core.Entity{EntityKey: core.EntityKey{Protocol: "test", Name: name}, Kind: "queue", Durable: true, Policy: p}
	if _, _, err := f.e.Create(f.now(), en); err != nil {
		f.tb.Fatal(err)
	}
	return en.EntityKey
}

func (f *fixture) MustEnqueue(k core.EntityKey, it core.Item) core.Item {
	f.tb.Helper()
	it.Persistent = true
	out, c, err := f.e.Enqueue(f.now(), k, it)
	if err != nil {
		f.tb.Fatal(err)
	}
	if err := c.Wait(context.Background()); err != nil {
		f.tb.Fatal(err)
	}
	return out
}

func (f *fixture) MustReceive(k core.EntityKey, lock time.Duration) (core.Item, bool) {
	f.tb.Helper()
	var until time.Time
	if lock > 0 {
		until = f.now().Add(lock)
	}
	it, ok, err := f.e.Receive(f.now(), k, until)
	if err != nil {
		f.tb.Fatal(err)
	}
	return it, ok
}

// bodies takes every available item of k and returns their bodies.
func (f *fixture) drain(k core.EntityKey) []string {
	f.tb.Helper()
	var out []string
	for {
		it, ok, _, err := f.e.Take(f.now(), k)
		if err != nil {
			f.tb.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, string(it.Body))
	}
}

func (f *fixture) events(k core.EntityKey) []string {
	var out []string
	for _, ev := range f.e.Events(core.EventQuery{Entity: k.Name}) {
		out = append(out, fmt.Sprintf("%s %s %d %s", ev.Action, ev.Rule, ev.Item, ev.Time.Sub(t0)))
	}
	return out
}

func ttlPolicy(d time.Duration) core.Policy {
	return core.Policy{DefaultTTL: core.After(d), MaxTTL: core.After(d),
		Rules: core.RuleIDs{ItemTTL: "T-ITEM", DefaultTTL: "T-DEF", Ceiling: "T-CEIL", Expire: "T-EXP", LockLost: "T-LOCK", Idle: "T-IDLE", Never: "T-NEVER", Deferred: "T-DEFER"}}
}

func body(s string) core.Item { return core.Item{Body: []byte(s)} }

func TestAdvanceAppliesEverythingDue_EM1(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(10*time.Minute))
	f.MustEnqueue(q, body("a"))
	f.advance(time.Minute)
	f.MustEnqueue(q, body("b"))
	if due, ok := f.e.NextDue(); !ok || !due.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("NextDue = %v %v, want t0+10m", due, ok)
	}
	if n := f.advance(8*time.Minute + 59*time.Second); n != 0 {
		t.Fatalf("%d events before anything was due", n)
	}
	if n := f.advance(time.Second); n != 1 {
		t.Fatalf("advance to a's due time applied %d events, want 1", n)
	}
	if n := f.advance(14 * 24 * time.Hour); n != 1 {
		t.Fatalf("advance by 14 days applied %d events, want 1", n)
	}
	want := []string{"expired T-EXP 1 10m0s", "expired T-EXP 2 336h10m0s"} // b was due at 11m; 14 days later is when it was applied
	if d := cmp.Diff(want, f.events(q)); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	if _, ok := f.e.NextDue(); ok {
		t.Fatal("NextDue still has something")
	}
}

// rule: SB-6, RB-3, CO-6
func TestReadsNeverReturnExpiredItemsBetweenSweeps_SB6_RB3_CO6(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(time.Minute))
	f.MustEnqueue(q, core.Item{Key: "k", Body: []byte("a")})
	f.MustEnqueue(q, core.Item{Body: []byte("b"), TTL: core.After(30 * time.Second)})
	f.MustEnqueue(q, core.Item{Body: []byte("c"), TTL: core.After(2 * time.Minute)})
	// The clock moves but nobody calls Advance: reads must still check.
	later, _ := f.clock.Advance(time.Minute)
	if _, ok, _ := f.e.Get(later, q, "k"); ok {
		t.Fatal("Get returned an expired item")
	}
	it, ok, err := f.e.Receive(later, q, time.Time{})
	if err != nil || ok {
		t.Fatalf("Receive = %q %v %v; c's TTL is cut to the 1m maximum, so nothing is live", it.Body, ok, err)
	}
	if got := len(f.e.Events(core.EventQuery{})); got != 3 {
		t.Fatalf("%d events, want 3", got)
	}
}

func TestItemTTLCutToCeiling_SB2_RB5(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(10*time.Minute))
	long := f.MustEnqueue(q, core.Item{TTL: core.After(20 * time.Minute)})
	short := f.MustEnqueue(q, core.Item{TTL: core.After(time.Minute)})
	none := f.MustEnqueue(q, core.Item{})
	got := []string{long.Rule, long.DueAt.Sub(t0).String(), short.Rule, short.DueAt.Sub(t0).String(), none.Rule, none.DueAt.Sub(t0).String()}
	want := []string{"T-CEIL", "10m0s", "T-ITEM", "1m0s", "T-DEF", "10m0s"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	items, err := f.e.Items(f.now(), q, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "own TTL 20m cut to the entity's maximum 10m"; items[0].Reason != want {
		t.Fatalf("reason %q, want %q", items[0].Reason, want)
	}
}

func TestHeadOnlyExpiry_RB7(t *testing.T) {
	f := MustFixture(t)
	p := ttlPolicy(time.Hour)
	p.HeadOnly = true
	q := f.MustCreate("q", p)
	f.MustEnqueue(q, core.Item{Body: []byte("long"), TTL: core.After(time.Minute)})
	f.MustEnqueue(q, core.Item{Body: []byte("short"), TTL: core.After(100 * time.Millisecond)})
	f.advance(600 * time.Millisecond)
	in, _ := f.e.Info(f.now(), q)
	if in.Counts.Active != 2 {
		t.Fatalf("active = %d: the expired message behind a live one must stay and count", in.Counts.Active)
	}
	if got := f.drain(q); !cmp.Equal(got, []string{"long"}) {
		t.Fatalf("delivered %q, want only the live head", got)
	}
	in, _ = f.e.Info(f.now(), q)
	if in.Counts.Active != 0 {
		t.Fatalf("active = %d after the head left, want 0", in.Counts.Active)
	}
	if d := cmp.Diff([]string{"expired T-EXP 2 600ms"}, f.events(q)); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
}

func TestHeadOnlyExpiresPromptlyWithQueueTTL_RB7(t *testing.T) {
	f := MustFixture(t)
	p := ttlPolicy(time.Second)
	p.HeadOnly = true
	q := f.MustCreate("q", p)
	for i := 0; i < 5; i++ {
		f.MustEnqueue(q, body(fmt.Sprint(i)))
		f.advance(100 * time.Millisecond)
	}
	if n := f.advance(time.Second); n != 5 {
		t.Fatalf("%d expired, want all 5", n)
	}
}

func TestTTLZeroExpiresOnArrivalUnlessDelivered_RB4(t *testing.T) {
	f := MustFixture(t)
	p := ttlPolicy(0)
	p.HeadOnly = true
	q := f.MustCreate("q", p)
	f.MustEnqueue(q, body("nobody-waits"))
	if got := f.drain(q); len(got) != 0 {
		t.Fatalf("delivered %q, want nothing: TTL 0 expires on arrival", got)
	}
	// A consumer ready at once takes it on arrival: it is enqueued locked.
	it := f.MustEnqueue(q, core.Item{Body: []byte("taken"), State: core.Locked})
	if err := f.e.Release(f.now(), q, it.Seq); err != nil {
		t.Fatal(err)
	}
	if got := f.drain(q); len(got) != 0 {
		t.Fatalf("requeued TTL-0 message delivered again: %q", got)
	}
	if n := len(f.events(q)); n != 2 {
		t.Fatalf("%d events, want 2 expiries", n)
	}
}

func TestRequeueKeepsOriginalExpiry_RB6(t *testing.T) {
	f := MustFixture(t)
	p := ttlPolicy(time.Second)
	p.HeadOnly = true
	q := f.MustCreate("q", p)
	a := f.MustEnqueue(q, body("a"))
	f.advance(700 * time.Millisecond)
	got, _ := f.MustReceive(q, 0)
	if got.Seq != a.Seq {
		t.Fatal("wrong item")
	}
	if err := f.e.Release(f.now(), q, a.Seq); err != nil {
		t.Fatal(err)
	}
	if it, ok := f.MustReceive(q, 0); !ok || it.DeliveryCount != 2 {
		t.Fatalf("requeued item not redelivered: %v %v", ok, it.DeliveryCount)
	}
	f.e.Release(f.now(), q, a.Seq)
	f.advance(500 * time.Millisecond)
	if got := f.drain(q); len(got) != 0 {
		t.Fatalf("delivered %q after its original expiry", got)
	}
	// Expired while unacked: gone when it comes back, never redelivered.
	b := f.MustEnqueue(q, body("b"))
	f.MustReceive(q, 0)
	f.advance(2 * time.Second)
	f.e.Release(f.now(), q, b.Seq)
	if got := f.drain(q); len(got) != 0 {
		t.Fatalf("redelivered %q after its expiry passed unacked", got)
	}
}

func TestLockedItemsDoNotExpire_SB7(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(time.Minute))
	a := f.MustEnqueue(q, body("complete-late"))
	b := f.MustEnqueue(q, body("abandon-late"))
	c := f.MustEnqueue(q, body("lock-runs-out"))
	f.MustReceive(q, 5*time.Minute)
	f.MustReceive(q, 5*time.Minute)
	f.MustReceive(q, 90*time.Second)
	f.advance(70 * time.Second) // all three nominally expired, all locked
	if n := len(f.events(q)); n != 0 {
		t.Fatalf("%d events while locked", n)
	}
	if _, err := f.e.Complete(f.now(), q, a.Seq); err != nil {
		t.Fatalf("complete after nominal expiry: %v", err)
	}
	if err := f.e.Release(f.now(), q, b.Seq); err != nil {
		t.Fatal(err)
	}
	f.advance(30 * time.Second) // c's lock runs out
	want := []string{
		fmt.Sprintf("expired T-LOCK %d 1m10s", b.Seq),
		fmt.Sprintf("lock-lost T-LOCK %d 1m40s", c.Seq),
		fmt.Sprintf("expired T-LOCK %d 1m40s", c.Seq),
	}
	if d := cmp.Diff(want, f.events(q)); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	if _, err := f.e.Complete(f.now(), q, c.Seq); core.ErrorCode(err) != core.ELOCKLOST {
		t.Fatalf("complete after the lock ran out: %v, want lock lost", err)
	}
}

func TestLockLostReturnsLiveItem_SB7(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(time.Hour))
	a := f.MustEnqueue(q, body("a"))
	f.MustEnqueue(q, body("b"))
	f.MustReceive(q, 30*time.Second)
	f.advance(31 * time.Second)
	it, ok := f.MustReceive(q, 30*time.Second)
	if !ok || it.Seq != a.Seq || it.DeliveryCount != 2 {
		t.Fatalf("got seq %d count %d, want a again with delivery count 2", it.Seq, it.DeliveryCount)
	}
	if _, err := f.e.RenewLock(f.now(), q, a.Seq, f.now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	f.advance(time.Minute)
	if _, err := f.e.Complete(f.now(), q, a.Seq); err != nil {
		t.Fatalf("complete under a renewed lock: %v", err)
	}
}

func TestDeferredItemsNeverExpireOnTheirOwn_SB9(t *testing.T) {
	f := MustFixture(t)
	p := ttlPolicy(time.Minute)
	p.OnExpire = core.DeadLetter
	q := f.MustCreate("q", p)
	dlq := f.MustCreate("q/$DeadLetterQueue", core.Policy{})
	f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		it.Meta = []byte(why.Code)
		it.TTL = core.NoTTL
		if _, err := tx.Enqueue(dlq, it); err != nil {
			t.Error(err)
		}
	}})
	a := f.MustEnqueue(q, body("a"))
	b := f.MustEnqueue(q, body("b"))
	for _, it := range []core.Item{a, b} {
		f.MustReceive(q, time.Minute)
		if _, err := f.e.Defer(f.now(), q, it.Seq); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := f.e.Peek(f.now(), q, 0, 10); len(got) != 2 || got[0].State != core.Deferred {
		t.Fatalf("peek shows %d items, want the 2 deferred", len(got))
	}
	if it, ok, _, err := f.e.TakeDeferred(f.now(), q, a.Seq, f.now().Add(time.Minute)); err != nil || !ok || it.State != core.Locked {
		t.Fatalf("live deferred item: %v %v %v", ok, it.State, err)
	}
	if _, err := f.e.Complete(f.now(), q, a.Seq); err != nil {
		t.Fatal(err)
	}
	f.advance(24 * time.Hour)
	if n := len(f.events(q)); n != 0 {
		t.Fatalf("deferred items expired on their own: %v", f.events(q))
	}
	if _, ok, _, err := f.e.TakeDeferred(f.now(), q, b.Seq, f.now().Add(time.Minute)); err != nil || ok {
		t.Fatalf("expired deferred item returned: %v %v", ok, err)
	}
	if d := cmp.Diff([]string{fmt.Sprintf("dead-lettered T-DEFER %d 24h0m0s", b.Seq)}, f.events(q)); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	if got := f.drain(dlq); !cmp.Equal(got, []string{"b"}) {
		t.Fatalf("dead-letter queue holds %q", got)
	}
}

func TestDeadLetterOnExpiryThroughProtocolHook_SB8(t *testing.T) {
	f := MustFixture(t)
	p := ttlPolicy(time.Minute)
	p.OnExpire = core.DeadLetter
	q := f.MustCreate("q", p)
	dlq := f.MustCreate("dlq", core.Policy{})
	f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		it.Meta = []byte(why.Code + " from " + from.Name)
		tx.Enqueue(dlq, it)
	}})
	f.MustEnqueue(q, body("x"))
	f.advance(time.Minute)
	it, ok, _, _ := f.e.Take(f.now(), dlq)
	if !ok || string(it.Meta) != "expired from q" || string(it.Body) != "x" {
		t.Fatalf("dead letter = %v %q %q", ok, it.Body, it.Meta)
	}
	in, _ := f.e.Info(f.now(), q)
	if in.Stats.DeadLettered != 1 {
		t.Fatalf("dead-lettered count %d", in.Stats.DeadLettered)
	}
	// Explicit dead-lettering (a rejected message) goes the same way.
	y := f.MustEnqueue(q, body("y"))
	if _, err := f.e.DeadLetter(f.now(), q, y.Seq, core.DeadLetterReason{Code: "rejected", Rule: "RB-9"}); err != nil {
		t.Fatal(err)
	}
	if got := f.drain(dlq); !cmp.Equal(got, []string{"y"}) {
		t.Fatalf("dlq %q", got)
	}
}

func TestScheduledItemsExpireFromScheduledTime_SB4(t *testing.T) {
	f := MustFixture(t)
	p := ttlPolicy(time.Hour)
	p.Rules.Scheduled = "T-SCHED"
	q := f.MustCreate("q", p)
	it := f.MustEnqueue(q, core.Item{TTL: core.After(10 * time.Minute), State: core.Scheduled, ScheduledAt: t0.Add(5 * time.Minute)})
	if !it.DueAt.Equal(t0.Add(15*time.Minute)) || it.Rule != "T-SCHED" {
		t.Fatalf("due %v rule %s, want t0+15m", it.DueAt.Sub(t0), it.Rule)
	}
	if _, ok := f.MustReceive(q, 0); ok {
		t.Fatal("received a message before its scheduled time")
	}
	f.advance(5 * time.Minute)
	got, ok := f.MustReceive(q, time.Minute)
	if !ok || !got.EnqueuedAt.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("scheduled message not enqueued at its time: %v %v", ok, got.EnqueuedAt)
	}
	// Cancelling removes a scheduled message.
	c := f.MustEnqueue(q, core.Item{State: core.Scheduled, ScheduledAt: t0.Add(time.Hour)})
	if _, err := f.e.Remove(f.now(), q, c.Seq); err != nil {
		t.Fatal(err)
	}
	f.advance(2 * time.Hour)
	if _, ok := f.MustReceive(q, 0); ok {
		t.Fatal("cancelled scheduled message arrived")
	}
}

func TestPolicyChangeAffectsNewItemsOnly_SB12(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(time.Hour))
	f.MustEnqueue(q, body("old"))
	f.e.Update(f.now(), q, func(en *core.Entity) error { en.Policy = ttlPolicy(time.Minute); return nil })
	f.MustEnqueue(q, body("new"))
	f.advance(time.Minute)
	if got := f.drain(q); !cmp.Equal(got, []string{"old"}) {
		t.Fatalf("left %q, want the old message to keep its 1h expiry", got)
	}
}

func TestRetroactivePolicyChangeAppliesToStoredItems_CO7(t *testing.T) {
	f := MustFixture(t)
	p := core.Policy{Base: core.FromModified, Retroactive: true, DefaultTTL: core.Forever, Rules: core.RuleIDs{DefaultTTL: "CO-4"}}
	c := f.MustCreate("db/c", p)
	f.MustEnqueue(c, core.Item{Key: "a"})
	f.MustEnqueue(c, core.Item{Key: "b", TTL: core.Forever})
	f.advance(time.Hour)
	f.e.Update(f.now(), c, func(en *core.Entity) error { en.Policy.DefaultTTL = core.After(30 * time.Minute); return nil })
	if _, ok, _ := f.e.Get(f.now(), c, "a"); ok {
		t.Fatal("item a, modified 1h ago, survived a new 30m default")
	}
	if _, ok, _ := f.e.Get(f.now(), c, "b"); !ok {
		t.Fatal("item b with ttl -1 expired")
	}
}

func TestWriteRestartsTTL_CO1(t *testing.T) {
	f := MustFixture(t)
	p := core.Policy{Base: core.FromModified, Retroactive: true, DefaultTTL: core.After(10 * time.Second)}
	c := f.MustCreate("db/c", p)
	f.e.Put(f.now(), c, core.Item{Key: "a", Body: []byte("1")})
	f.advance(8 * time.Second)
	it, _, _ := f.e.Put(f.now(), c, core.Item{Key: "a", Body: []byte("2")})
	if it.Seq != 2 {
		t.Fatalf("rewrite got seq %d, want a new seq 2", it.Seq)
	}
	f.advance(8 * time.Second)
	if got, ok, _ := f.e.Get(f.now(), c, "a"); !ok || string(got.Body) != "2" {
		t.Fatal("the rewrite did not restart the TTL")
	}
	f.advance(2 * time.Second)
	if _, ok, _ := f.e.Get(f.now(), c, "a"); ok {
		t.Fatal("item outlived its TTL from the last write")
	}
}

func TestIdleDeletion_SB10_RB8(t *testing.T) {
	f := MustFixture(t)
	var deleted []string
	f.e.Register("test", core.ProtocolHooks{Deleted: func(en core.Entity) { deleted = append(deleted, en.Name) }})
	p := ttlPolicy(time.Hour)
	p.IdleTTL = core.After(5 * time.Minute)
	p.IdleUses = core.UseReceive | core.UseDeclare | core.UseConsume
	p.IdleOnlyWithoutConsumers = true
	q := f.MustCreate("q", p)
	f.advance(4 * time.Minute)
	f.MustEnqueue(q, body("publishing does not renew"))
	f.advance(time.Minute)
	if _, ok := f.e.Entity(q); ok {
		t.Fatal("queue outlived its idle TTL")
	}
	if d := cmp.Diff([]string{"q"}, deleted); d != "" {
		t.Fatalf("Deleted hook (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"deleted-idle T-IDLE 0 5m0s"}, f.events(q)); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}

	q2 := f.MustCreate("q2", p)
	f.advance(4 * time.Minute)
	f.e.Touch(f.now(), q2, core.UseDeclare) // a redeclare renews the lease
	f.advance(4 * time.Minute)
	f.e.Consumers(f.now(), q2, 1) // no timer while consumed
	f.advance(time.Hour)
	if _, ok := f.e.Entity(q2); !ok {
		t.Fatal("queue with a consumer deleted as idle")
	}
	f.e.Consumers(f.now(), q2, -1) // the lease starts when the last consumer leaves
	f.advance(4*time.Minute + 59*time.Second)
	if _, ok := f.e.Entity(q2); !ok {
		t.Fatal("deleted before the lease from the last consumer ran out")
	}
	f.advance(time.Second)
	if _, ok := f.e.Entity(q2); ok {
		t.Fatal("not deleted when the lease ran out")
	}
}

func TestRecoveryAppliesExpiriesDueWhileDown_RB13(t *testing.T) {
	f := MustFixture(t)
	p := ttlPolicy(time.Minute)
	p.OnExpire = core.DeadLetter
	q := f.MustCreate("q", p)
	dlq := f.MustCreate("dlq", core.Policy{})
	f.MustEnqueue(q, body("expires-while-down"))
	f.MustEnqueue(q, core.Item{Body: []byte("lives"), TTL: core.After(time.Minute)})
	// The second queue item is transient: RabbitMQ loses it on restart.
	f.e.Enqueue(f.now(), q, core.Item{Body: []byte("transient")})
	f.e.Update(f.now(), q, func(en *core.Entity) error { en.Policy.DefaultTTL = core.After(time.Hour); return nil })
	live := f.MustEnqueue(q, body("long"))

	// Restart: a new engine on the same store, 2 minutes later.
	e2 := core.NewEngine(core.Config{Store: f.store})
	var recovered []string
	e2.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		if recovered == nil {
			t.Error("dead-lettering before the front-end got its entities (Recovered)")
		}
		it.TTL = core.NoTTL // as RabbitMQ drops the expiration of a dead letter
		tx.Enqueue(dlq, it)
	}, Recovered: func(ents []core.Entity) {
		for _, en := range ents {
			recovered = append(recovered, en.Name)
		}
	}})
	later := t0.Add(2 * time.Minute)
	if err := e2.Recover(context.Background(), later); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		it, ok, _, _ := e2.Take(later, q)
		if !ok {
			break
		}
		got = append(got, string(it.Body))
	}
	if d := cmp.Diff([]string{"long"}, got); d != "" {
		t.Fatalf("after restart (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"dlq", "q"}, recovered); d != "" {
		t.Fatalf("Recovered got (-want +got):\n%s", d)
	}
	var dl []string
	for {
		it, ok, _, _ := e2.Take(later, dlq)
		if !ok {
			break
		}
		dl = append(dl, string(it.Body))
	}
	if d := cmp.Diff([]string{"expires-while-down", "lives"}, dl); d != "" {
		t.Fatalf("dead-lettered during recovery (-want +got):\n%s", d)
	}
	// Sequence numbers continue after a restart.
	next, _, _ := e2.Enqueue(later, q, core.Item{})
	if next.Seq <= live.Seq {
		t.Fatalf("seq %d after restart, want above %d", next.Seq, live.Seq)
	}
}

// issue 25.9: the event log takes room as events come, not its whole
// bound (10,000 events, 2.5 MB) when the engine is made, at each start.
func TestNewEngineDoesNotAllocateItsEventLog(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e := core.NewEngine(core.Config{})
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<10 {
		t.Errorf("NewEngine allocated %d bytes, want under 256 KiB", n)
	}
	runtime.KeepAlive(e)
}

func TestEventsAreRecordedBoundedAndPublished_EM2(t *testing.T) {
	clock := core.NewClock(func() time.Time { return t0 })
	clock.Freeze()
	e := core.NewEngine(core.Config{EventLogSize: 3})
	sub := e.Subscribe(10)
	k := core.EntityKey{Protocol: "test", Name: "q"}
	e.Create(t0, core.Entity{EntityKey: k, Policy: ttlPolicy(time.Second)})
	for i := 0; i < 5; i++ {
		e.Enqueue(t0, k, core.Item{})
	}
	e.Advance(t0.Add(time.Second))
	evs := e.Events(core.EventQuery{})
	if len(evs) != 3 || evs[0].ID != 3 || evs[2].ID != 5 {
		t.Fatalf("log kept %d events from %d, want the newest 3", len(evs), evs[0].ID)
	}
	if evs := e.Events(core.EventQuery{Since: 4}); len(evs) != 1 || evs[0].ID != 5 {
		t.Fatalf("since=4 gave %v", evs)
	}
	if evs := e.Events(core.EventQuery{Limit: 2}); len(evs) != 2 {
		t.Fatalf("limit 2 gave %d", len(evs))
	}
	ev := <-sub.C
	want := core.Event{ID: 1, Time: t0.Add(time.Second), Due: t0.Add(time.Second), Protocol: "test", Entity: "q",
		Item: 1, Rule: "T-EXP", Action: core.ActionExpired, Reason: "TTL ran out (entity default TTL 1s)"}
	if d := cmp.Diff(want, ev); d != "" {
		t.Fatalf("published event (-want +got):\n%s", d)
	}
	e.Unsubscribe(sub)
	buffered, closed := 0, false
	for !closed {
		select {
		case _, ok := <-sub.C:
			if ok {
				buffered++
			} else {
				closed = true
			}
		default:
			t.Fatalf("Unsubscribe left the channel open (after %d buffered events)", buffered)
		}
	}
	if buffered != 4 {
		t.Fatalf("%d events left in the buffer, want the other 4", buffered)
	}
}

func TestEngineErrors(t *testing.T) {
	f := MustFixture(t)
	missing := core.EntityKey{Protocol: "test", Name: "nope"}
	q := f.MustCreate("q", ttlPolicy(time.Hour))
	checks := []struct {
		name string
		err  error
		code string
	}{
		{"EnqueueUnknownEntity", func() error { _, _, err := f.e.Enqueue(f.now(), missing, core.Item{}); return err }(), core.ENOTFOUND},
		{"CreateTwice", func() error {
			_, _, err := f.e.Create(f.now(), core.Entity{EntityKey: q})
			return err
		}(), core.ECONFLICT},
		{"CompleteUnlocked", func() error { _, err := f.e.Complete(f.now(), q, 99); return err }(), core.ELOCKLOST},
		{"DuplicateKey", func() error {
			f.e.Enqueue(f.now(), q, core.Item{Key: "k"})
			_, _, err := f.e.Enqueue(f.now(), q, core.Item{Key: "k"})
			return err
		}(), core.ECONFLICT},
		{"ScheduledWithoutTime", func() error { _, _, err := f.e.Enqueue(f.now(), q, core.Item{State: core.Scheduled}); return err }(), core.EINVALID},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if got := core.ErrorCode(c.err); got != c.code {
				t.Fatalf("code %q (%v), want %q", got, c.err, c.code)
			}
		})
	}
}

// rule: RB-2
func TestCopiesAgeIndependently_RB2(t *testing.T) {
	f := MustFixture(t)
	short := f.MustCreate("short", ttlPolicy(time.Second))
	long := f.MustCreate("long", ttlPolicy(time.Hour))
	msg := []byte("routed to both")
	f.MustEnqueue(short, core.Item{Body: msg})
	f.MustEnqueue(long, core.Item{Body: msg})
	f.advance(time.Minute)
	if got := f.drain(short); len(got) != 0 {
		t.Fatalf("short queue still has %q", got)
	}
	if got := f.drain(long); !cmp.Equal(got, []string{"routed to both"}) {
		t.Fatalf("the death in one queue touched the other: %q", got)
	}
}

// heldStore is a Store whose Commits complete only when the test says so.
type heldStore struct {
	core.MemStore
	held []*core.Commit
}

func (s *heldStore) Append(ops []core.Op) *core.Commit {
	s.MemStore.Append(ops)
	c := core.NewCommit()
	s.held = append(s.held, c)
	return c
}

func TestAdvanceWaitsForEarlierChanges_EM1(t *testing.T) {
	st := &heldStore{MemStore: *core.NewMemStore()}
	e := core.NewEngine(core.Config{Store: st})
	k := core.EntityKey{Protocol: "test", Name: "q"}
	e.Create(t0, core.Entity{EntityKey: k, Durable: true, Policy: ttlPolicy(time.Minute)})
	e.Enqueue(t0, k, core.Item{Persistent: true})
	// Someone else (the expiry runner) applies the expiry first.
	if n, _ := e.Advance(t0.Add(time.Minute)); n != 1 || e.LastEventID() != 1 {
		t.Fatalf("first advance applied %d, last event %d", n, e.LastEventID())
	}
	// A later Advance with nothing left to do still waits for that deletion.
	n, c := e.Advance(t0.Add(time.Minute))
	if n != 0 || c == nil {
		t.Fatalf("second advance: %d events, commit %v", n, c)
	}
	select {
	case <-c.DoneChan():
		t.Fatal("done before the deletion was durable")
	default:
	}
	for _, h := range st.held {
		h.Done(nil)
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestAvailableHookRunsOutsideTheLock(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(time.Hour))
	var got []string
	f.e.Register("test", core.ProtocolHooks{Available: func(k core.EntityKey) {
		// Outside the lock: the hook may call the engine.
		in, _ := f.e.Info(f.now(), k)
		got = append(got, fmt.Sprintf("%s %d", k.Name, in.Counts.Active))
	}})
	f.MustEnqueue(q, body("a"))
	f.hooks()
	it, _ := f.MustReceive(q, time.Minute)
	f.e.Release(f.now(), q, it.Seq)
	f.hooks()
	f.MustEnqueue(q, core.Item{State: core.Scheduled, ScheduledAt: t0.Add(time.Minute)})
	f.advance(time.Minute)
	if d := cmp.Diff([]string{"q 1", "q 1", "q 2"}, got); d != "" {
		t.Fatalf("Available calls (-want +got):\n%s", d)
	}
}

func TestUpdateToNonDurableLeavesTheStore(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(time.Hour))
	f.MustEnqueue(q, body("a"))
	if _, _, err := f.e.Update(f.now(), q, func(en *core.Entity) error { en.Durable = false; return nil }); err != nil {
		t.Fatal(err)
	}
	e2 := core.NewEngine(core.Config{Store: f.store})
	if err := e2.Recover(context.Background(), f.now()); err != nil {
		t.Fatal(err)
	}
	if _, ok := e2.Entity(q); ok {
		t.Fatal("an entity made non-durable came back after a restart")
	}
}
