package server

import (
	"slices"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// wait returns the next event of sub, failing the test if none comes in 10 s.
func wait(t *testing.T, sub *core.Subscription) core.Event {
	t.Helper()
	select {
	case ev := <-sub.C:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return core.Event{}
}

// rule: EM-1 — the runner applies what a clock change made due, even when
// the change did not come through the control API.
func TestRunnerWakesOnClockChange_EM1(t *testing.T) {
	wall := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := core.NewClock(func() time.Time { return wall })
	clock.Freeze()
	r := newRunner(clock)
	engine := core.NewEngine(core.Config{Wake: r.Wake})
	clock.OnChange(r.Wake)
	r.start(engine)
	defer r.stop()

	k := core.EntityKey{Protocol: "p", Name: "q"}
	if _, _, err := engine.Create(clock.Now(), core.Entity{EntityKey: k}); err != nil {
		t.Fatal(err)
	}
	sub := engine.Subscribe(8)
	defer engine.Unsubscribe(sub)
	if _, _, err := engine.Enqueue(clock.Now(), k, core.Item{TTL: core.After(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := clock.Advance(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	ev := wait(t, sub)
	if !ev.Due.Equal(wall.Add(time.Minute)) || !ev.Time.Equal(wall.Add(2*time.Minute)) {
		t.Errorf("event due %v applied %v, want due %v applied %v", ev.Due, ev.Time, wall.Add(time.Minute), wall.Add(2*time.Minute))
	}
}

func TestRunnerStop(t *testing.T) {
	clock := core.NewClock(time.Now)
	r := newRunner(clock)
	r.stop() // before start
	r.stop()
	r.start(core.NewEngine(core.Config{})) // after stop: does not run
	r.stop()

	r = newRunner(clock)
	r.start(core.NewEngine(core.Config{}))
	r.Wake()
	r.Wake() // never blocks
	r.stop()
	r.stop()
}

// rule: EM-4 — in real-time mode an item is applied within 50 ms of its
// due time (p99), with many pending.
//
// This test runs in real time and waits for the expiries: EM-4 is about
// the runner against the wall clock, which no virtual clock can show. The
// work is kept small (2,000 items over about 300 ms, with 100,000 more
// pending far ahead, non-durable so that no disk is involved) so that it
// holds under -race on two cores.
func TestExpiryPrecision_EM4(t *testing.T) {
	m := MustStart(t, "--data", ":memory:")
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "em4"}
	MustCreate(t, m, core.Entity{EntityKey: k, Policy: core.Policy{Rules: core.RuleIDs{Expire: "EM-4"}}})
	const n = 2000
	const lead, spread = 50 * time.Millisecond, 300 * time.Millisecond
	// "At any count of pending items": 100,000 more wait far in the future
	// in the same scheduler.
	far := core.EntityKey{Protocol: core.ServiceBus, Name: "em4-far"}
	MustCreate(t, m, core.Entity{EntityKey: far})
	for range 100_000 {
		if _, _, err := m.Engine.Enqueue(m.Clock.Now(), far, core.Item{TTL: core.After(24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	sub := m.Engine.Subscribe(n)
	defer m.Engine.Unsubscribe(sub)
	for i := range n {
		ttl := lead + spread*time.Duration(i)/n
		if _, _, err := m.Engine.Enqueue(m.Clock.Now(), k, core.Item{TTL: core.After(ttl)}); err != nil {
			t.Fatal(err)
		}
	}
	late := make([]time.Duration, 0, n)
	for range n {
		ev := wait(t, sub)
		late = append(late, ev.Time.Sub(ev.Due))
	}
	if d := sub.Dropped(); d > 0 {
		t.Fatalf("%d events dropped", d)
	}
	slices.Sort(late)
	p := func(q float64) time.Duration { return late[int(q*float64(n-1))] }
	t.Logf("lateness over %d items: min %v p50 %v p99 %v max %v", n, late[0], p(0.5), p(0.99), late[n-1])
	if late[0] < 0 {
		t.Errorf("an item expired %v before its due time", -late[0])
	}
	if p(0.99) >= 50*time.Millisecond {
		t.Errorf("p99 lateness %v, want under 50ms", p(0.99))
	}
}
