package core_test

import (
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// TestReleasePassesItemsOnAtTheirDueTime: an entity whose policy releases
// (Policy.OnExpire Release, a RabbitMQ delayed exchange, RB-15) hands each
// item to the DeadLetter hook at its due time, even when the clock jumps
// past it, records a released event with the due time, and counts neither
// an expiry nor a dead letter.
func TestReleasePassesItemsOnAtTheirDueTime(t *testing.T) {
	e := core.NewEngine(core.Config{Store: core.NewMemStore()})
	k := core.EntityKey{Protocol: "test", Name: "held"}
	out := core.EntityKey{Protocol: "test", Name: "out"}
	var whys []string
	e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		whys = append(whys, why.Code)
		it.TTL = core.NoTTL
		if _, err := tx.Enqueue(out, it); err != nil {
			t.Error(err)
		}
	}})
	for _, en := range []core.Entity{
		{EntityKey: k, Policy: core.Policy{OnExpire: core.Release, Rules: core.RuleIDs{ItemTTL: "R", Expire: "R"}}},
		{EntityKey: out},
	} {
		if _, _, err := e.Create(t0, en); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := e.Enqueue(t0, k, core.Item{Body: []byte("a"), TTL: core.After(2 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	e.Advance(t0.Add(time.Hour))
	items, err := e.Items(t0.Add(time.Hour), out, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || string(items[0].Body) != "a" || !items[0].EnqueuedAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("passed on %+v, want a enqueued at its due time", items)
	}
	evs := e.Events(core.EventQuery{})
	if len(evs) != 1 || evs[0].Action != core.ActionReleased || evs[0].Rule != "R" || !evs[0].Due.Equal(t0.Add(2*time.Second)) ||
		evs[0].Reason != "hold ran out (own TTL 2s); passed on, applied 59m58s after it was due" || len(whys) != 1 || whys[0] != "released" {
		t.Fatalf("events %+v, hook reasons %q", evs, whys)
	}
	for _, st := range e.Stats(t0.Add(time.Hour)) {
		if st.EntityKey == k && (st.Stats.Expired != 0 || st.Stats.DeadLettered != 0) {
			t.Fatalf("stats %+v count a release as an expiry or a dead letter", st.Stats)
		}
	}
}
