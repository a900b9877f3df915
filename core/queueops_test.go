package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

func TestCountsPurgeAndDropHead(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", core.Policy{})
	dlq := f.MustCreate("dlq", core.Policy{})
	f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		it.Meta = []byte(why.Code)
		tx.Enqueue(dlq, it)
	}})
	for _, b := range []string{"a", "bb", "ccc", "dddd"} {
		f.MustEnqueue(q, body(b))
	}
	if _, ok := f.MustReceive(q, 0); !ok { // "a" locked: not active, not dropped nor purged
		t.Fatal("nothing received")
	}
	c, consumers, err := f.e.Counts(f.now(), q)
	if err != nil {
		t.Fatal(err)
	}
	if c.Active != 3 || c.Locked != 1 || c.ActiveBytes != 9 || consumers != 0 {
		t.Fatalf("counts %+v consumers %d", c, consumers)
	}
	// Over a limit of 2 messages or 7 bytes, the head goes first (maxlen).
	n, _, err := f.e.DropHead(f.now(), q, 2, -1, core.DeadLetterReason{Code: "maxlen", Rule: "RB-9"})
	if err != nil || n != 1 {
		t.Fatalf("DropHead by count = %d, %v", n, err)
	}
	n, _, err = f.e.DropHead(f.now(), q, -1, 4, core.DeadLetterReason{Code: "maxlen", Rule: "RB-9"})
	if err != nil || n != 1 {
		t.Fatalf("DropHead by bytes = %d, %v", n, err)
	}
	if got := f.drain(dlq); !cmp.Equal(got, []string{"bb", "ccc"}) {
		t.Fatalf("dead-lettered %q", got)
	}
	n, _, err = f.e.Purge(f.now(), q)
	if err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v", n, err)
	}
	c, _, _ = f.e.Counts(f.now(), q)
	if c.Active != 0 || c.Locked != 1 || c.ActiveBytes != 0 {
		t.Fatalf("after purge %+v", c)
	}
	if _, _, err := f.e.Counts(f.now(), core.EntityKey{Protocol: "test", Name: "nope"}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("Counts of a missing entity: %v", err)
	}
}

func TestEnqueueHanded_RB4(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(0)) // every item expires on arrival unless handed over
	out, handed, _, err := f.e.EnqueueHanded(f.now(), q, body("taken"), core.HandTaken)
	if err != nil || !handed || out.Seq != 1 || out.DeliveryCount != 1 {
		t.Fatalf("HandTaken into an empty entity: %+v %v %v", out, handed, err)
	}
	out, handed, _, err = f.e.EnqueueHanded(f.now(), q, body("locked"), core.HandLocked)
	if err != nil || !handed || out.State != core.Locked || out.Seq != 2 {
		t.Fatalf("HandLocked into an empty entity: %+v %v %v", out, handed, err)
	}
	c, _, _ := f.e.Counts(f.now(), q)
	if c.Locked != 1 || c.Active != 0 {
		t.Fatalf("counts %+v, want the locked item only", c)
	}
	// Behind an active item it is enqueued as usual (and this policy
	// expires it at once).
	p := f.MustCreate("p", core.Policy{})
	f.MustEnqueue(p, body("first"))
	_, handed, _, _ = f.e.EnqueueHanded(f.now(), p, body("second"), core.HandTaken)
	if handed {
		t.Fatal("handed over past an item waiting ahead")
	}
	if got := f.drain(p); !cmp.Equal(got, []string{"first", "second"}) {
		t.Fatalf("drained %q", got)
	}
}

func TestChainedExpiriesHappenAtTheirDueTimes_EM1(t *testing.T) {
	// q1 (1 min) dead-letters into q2 (1 min), which dead-letters into q3:
	// one advance of 5 minutes plays the chain out as if time had passed.
	f := MustFixture(t)
	p := ttlPolicy(time.Minute)
	p.OnExpire = core.DeadLetter
	q1, q2 := f.MustCreate("q1", p), f.MustCreate("q2", p)
	q3 := f.MustCreate("q3", core.Policy{})
	next := map[string]core.EntityKey{"q1": q2, "q2": q3}
	var times []string
	f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		times = append(times, fmt.Sprintf("%s %s", from.Name, tx.Now().Sub(t0)))
		tx.Enqueue(next[from.Name], it)
	}})
	f.MustEnqueue(q1, body("m"))
	f.advance(5 * time.Minute)
	if d := cmp.Diff([]string{"q1 1m0s", "q2 2m0s"}, times); d != "" {
		t.Fatalf("dead-lettered at (-want +got):\n%s", d)
	}
	if got := f.drain(q3); !cmp.Equal(got, []string{"m"}) {
		t.Fatalf("q3 holds %q", got)
	}
}

func TestDeadLetterRefused_RB9(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", core.Policy{})
	dlq := f.MustCreate("dlq", core.Policy{})
	f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		it.Meta = []byte(why.Code + " from " + from.Name)
		tx.Enqueue(dlq, it)
	}})
	if _, err := f.e.DeadLetterRefused(f.now(), q, body("refused"), core.DeadLetterReason{Code: "maxlen", Rule: "RB-9"}); err != nil {
		t.Fatal(err)
	}
	if in, _ := f.e.Info(f.now(), q); in.Counts.Active != 0 || in.Stats.DeadLettered != 1 {
		t.Fatalf("the refusing entity's counts: %+v, stats %+v", in.Counts, in.Stats)
	}
	it, ok, _, _ := f.e.Take(f.now(), dlq)
	if !ok || string(it.Body) != "refused" || string(it.Meta) != "maxlen from q" {
		t.Fatalf("dead letter %v %q %q", ok, it.Body, it.Meta)
	}
}

func TestUnlockTakesBackTheDelivery(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", core.Policy{})
	f.MustEnqueue(q, body("a"))
	it, ok := f.MustReceive(q, time.Minute)
	if !ok || it.DeliveryCount != 1 {
		t.Fatalf("received %+v, %v", it, ok)
	}
	if err := f.e.Unlock(f.now(), q, it.Seq); err != nil {
		t.Fatal(err)
	}
	it, ok = f.MustReceive(q, time.Minute)
	if !ok || it.DeliveryCount != 1 {
		t.Fatalf("after Unlock, received %+v, %v; want delivery count 1 again", it, ok)
	}
	if err := f.e.Release(f.now(), q, it.Seq); err != nil {
		t.Fatal(err)
	}
	it, _ = f.MustReceive(q, time.Minute)
	if it.DeliveryCount != 2 {
		t.Fatalf("after Release, delivery count %d, want 2", it.DeliveryCount)
	}
	if err := f.e.Unlock(f.now(), q, it.Seq+1); core.ErrorCode(err) != core.ELOCKLOST {
		t.Fatalf("Unlock of an item not held: %v, want lock lost", err)
	}
}

func TestSetMetaKeepsTheItemWhereItIs(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", core.Policy{})
	f.MustEnqueue(q, body("a"))
	it, _ := f.MustReceive(q, time.Minute)
	if _, err := f.e.SetMeta(f.now(), q, it.Seq, []byte("m")); err != nil {
		t.Fatal(err)
	}
	if err := f.e.Release(f.now(), q, it.Seq); err != nil {
		t.Fatal(err)
	}
	got, _ := f.MustReceive(q, time.Minute)
	if string(got.Meta) != "m" || got.Seq != it.Seq {
		t.Fatalf("got %+v, want the same item with Meta m", got)
	}
	if _, err := f.e.SetMeta(f.now(), q, 99, nil); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("SetMeta of a missing item: %v", err)
	}
}
