package core_test

import (
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// takeLocked enqueues an item to f.q and receives it locked.
func takeLocked(t *testing.T, f *dlFixture, body string) core.Item {
	t.Helper()
	f.MustEnqueue(f.q, core.Item{Body: []byte(body), Persistent: true})
	it, found, err := f.e.Receive(f.now(), f.q, f.now().Add(time.Minute))
	if err != nil || !found {
		t.Fatalf("Take = %v, %v", found, err)
	}
	return it
}

// Transact (a Service Bus transaction's commit, TX-1, TX-2) settles and
// stores all at once, with one append to the store.
func TestTransactSettlesAndStoresInOneCommit(t *testing.T) {
	f, _ := MustBatchFixture(t)
	done := takeLocked(t, f, "done")
	dead := takeLocked(t, f, "dead")
	before := f.appends()
	_, c, err := f.e.Transact(f.now(), []core.Settlement{
		{Key: f.q, Seq: done.Seq, DeliveryCount: done.DeliveryCount, Action: core.SettleComplete},
		{Key: f.q, Seq: dead.Seq, DeliveryCount: dead.DeliveryCount, Action: core.SettleDeadLetter, Why: core.DeadLetterReason{Code: "why"}},
	}, []core.Target{{Key: f.dlq, Item: core.Item{Body: []byte("sent"), Persistent: true}}})
	if err != nil || c == nil {
		t.Fatalf("Transact = %v, %v", c, err)
	}
	if n := f.appends() - before; n != 1 {
		t.Errorf("%d appends to the store, want 1", n)
	}
	if its, _ := f.e.Items(f.now(), f.q, 10); len(its) != 0 {
		t.Errorf("q holds %d items, want none", len(its))
	}
	if its, _ := f.e.Items(f.now(), f.dlq, 10); len(its) != 2 {
		t.Errorf("dlq holds %d items, want the dead-lettered one and the sent one", len(its))
	}
}

// Transact changes nothing when one settlement's lock is lost (the item
// was given back and locked again: another delivery count) or one target
// is refused.
func TestTransactChangesNothingWhenOneFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		code string
		lost bool
		bad  core.Target
	}{
		{"LockTakenAgain", core.ELOCKLOST, true, core.Target{Key: key("dlq"), Item: core.Item{Body: []byte("ok")}}},
		{"TargetRefused", core.ENOTFOUND, false, core.Target{Key: key("gone"), Item: core.Item{Body: []byte("x")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := MustBatchFixture(t)
			a := takeLocked(t, f, "a")
			b := takeLocked(t, f, "b")
			if tc.lost {
				if err := f.e.Release(f.now(), f.q, b.Seq); err != nil {
					t.Fatal(err)
				}
				// a is still locked: the take locks b anew.
				if again, _, err := f.e.Receive(f.now(), f.q, f.now().Add(time.Minute)); err != nil || again.Seq != b.Seq || again.DeliveryCount == b.DeliveryCount {
					t.Fatalf("Take = %+v, %v; want b locked again", again, err)
				}
			}
			before := f.appends()
			_, c, err := f.e.Transact(f.now(), []core.Settlement{
				{Key: f.q, Seq: a.Seq, DeliveryCount: a.DeliveryCount, Action: core.SettleComplete},
				{Key: f.q, Seq: b.Seq, DeliveryCount: b.DeliveryCount, Action: core.SettleComplete},
			}, []core.Target{tc.bad})
			if core.ErrorCode(err) != tc.code || c != nil {
				t.Fatalf("Transact = %v, %v; want a %s error and no commit", c, err, tc.code)
			}
			if n := f.appends() - before; n != 0 {
				t.Errorf("%d appends to the store, want none", n)
			}
			if its, _ := f.e.Items(f.now(), f.q, 10); len(its) != 2 {
				t.Errorf("q holds %d items, want both still there", len(its))
			}
			if its, _ := f.e.Items(f.now(), f.dlq, 10); len(its) != 0 {
				t.Errorf("dlq holds %d items, want none", len(its))
			}
		})
	}
}
