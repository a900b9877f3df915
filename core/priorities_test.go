package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// prio is an item of an entity with Priorities: its Group is its priority.
func prio(s, p string) core.Item { return core.Item{Body: []byte(s), Group: p} }

func prioPolicy() core.Policy {
	p := ttlPolicy(time.Hour)
	p.HeadOnly = true
	p.Priorities = true
	return p
}

func TestPrioritiesOrderDeliveries_RB14(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", prioPolicy())
	for _, it := range []core.Item{prio("p3-a", "3"), prio("p6", "6"), prio("p3-b", "3"), prio("none", ""),
		prio("p10", "10"), prio("p0", "0")} {
		f.MustEnqueue(q, it)
	}
	// A locked item released goes back among its priority, by Seq.
	first, _ := f.MustReceive(q, 0)
	second, _ := f.MustReceive(q, 0)
	f.MustEnqueue(q, prio("p10-late", "10"))
	for _, it := range []core.Item{second, first} {
		if err := f.e.Release(f.now(), q, it.Seq); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"p10", "p10-late", "p6", "p3-a", "p3-b", "none", "p0"}
	if got := f.drain(q); !cmp.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}

func TestPrioritiesExpireAtTheHeadInDeliveryOrder_RB14(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", prioPolicy())
	short := core.After(100 * time.Millisecond)
	f.MustEnqueue(q, core.Item{Body: []byte("p1-short"), Group: "1", TTL: short})
	f.MustEnqueue(q, prio("p1-live", "1"))
	f.MustEnqueue(q, prio("p5-live", "5"))
	f.MustEnqueue(q, core.Item{Body: []byte("p5-short"), Group: "5", TTL: short})
	f.advance(time.Second)
	in, _ := f.e.Info(f.now(), q)
	if in.Counts.Active != 4 {
		t.Fatalf("active = %d, want 4: behind a live head nothing expires", in.Counts.Active)
	}
	if got := f.drain(q); !cmp.Equal(got, []string{"p5-live", "p1-live"}) {
		t.Fatalf("delivered %q, want the live ones by priority", got)
	}
}

func TestPrioritiesDropHeadTakesTheHighest_RB14(t *testing.T) {
	f := MustFixture(t)
	p := prioPolicy()
	p.MaxItems, p.Overflow = core.CapAt(2), core.DropHead
	q := f.MustCreate("q", p)
	for _, it := range []core.Item{prio("p1-a", "1"), prio("p5", "5"), prio("p1-b", "1"), prio("p3", "3")} {
		f.MustEnqueue(q, it)
	}
	if got := f.drain(q); !cmp.Equal(got, []string{"p1-a", "p1-b"}) {
		t.Fatalf("kept %q, want the two lowest: drop-head drops the head by priority", got)
	}
}

func TestPrioritiesKeptAfterRecovery_RB14(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", prioPolicy())
	for _, it := range []core.Item{prio("p1", "1"), prio("none", ""), prio("p9", "9"), prio("p5", "5")} {
		f.MustEnqueue(q, it)
	}
	e2 := core.NewEngine(core.Config{Store: f.store})
	if err := e2.Recover(context.Background(), f.now()); err != nil {
		t.Fatal(err)
	}
	f.e = e2
	if got := f.drain(q); !cmp.Equal(got, []string{"p9", "p5", "p1", "none"}) {
		t.Fatalf("after recovery delivered %q", got)
	}
}

// An entity whose policy turns Priorities on or off (a queue an older
// lapse stored, its policy made anew) keeps its items, reordered.
func TestPrioritiesChangedByUpdate_RB14(t *testing.T) {
	f := MustFixture(t)
	p := prioPolicy()
	p.Priorities = false
	q := f.MustCreate("q", p)
	for _, it := range []core.Item{prio("p1", "1"), prio("p9", "9"), prio("none", "")} {
		f.MustEnqueue(q, it)
	}
	set := func(on bool) {
		if _, _, err := f.e.Update(f.now(), q, func(en *core.Entity) error {
			en.Policy.Priorities = on
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	set(true)
	f.MustEnqueue(q, prio("p5", "5"))
	it, _ := f.MustReceive(q, 0)
	if string(it.Body) != "p9" {
		t.Fatalf("first after the change: %q, want p9", it.Body)
	}
	set(false)
	if err := f.e.Release(f.now(), q, it.Seq); err != nil {
		t.Fatal(err)
	}
	if got := f.drain(q); !cmp.Equal(got, []string{"p1", "p9", "none", "p5"}) {
		t.Fatalf("after turning it off delivered %q, want Seq order", got)
	}
}
