package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// MustBatchFixture is a dlFixture with a queue s that requires sessions.
func MustBatchFixture(tb testing.TB) (*dlFixture, core.EntityKey) {
	tb.Helper()
	f := MustDLFixture(tb)
	s := f.MustCreate("s", core.Policy{Sessions: true})
	f.MustCreate("capped", core.Policy{MaxItems: core.CapAt(1), Overflow: core.RejectNew})
	return f, s
}

func (f *dlFixture) appends() int {
	f.store.mu.Lock()
	defer f.store.mu.Unlock()
	return len(f.store.appends)
}

func TestEnqueueBatchStoresAllOrNothing(t *testing.T) {
	item := func(body, group string) core.Item {
		return core.Item{Body: []byte(body), Group: group, Persistent: true}
	}
	for _, tc := range []struct {
		name string
		code string
		bad  core.Target // goes between two good targets
	}{
		{"NoSessionID", core.EINVALID, core.Target{Key: key("s"), Item: item("b", "")}},
		{"NoEntity", core.ENOTFOUND, core.Target{Key: key("gone"), Item: item("b", "")}},
		{"ScheduledWithoutTime", core.EINVALID, core.Target{Key: key("q"), Item: core.Item{Body: []byte("b"), State: core.Scheduled}}},
		{"KeyTwice", core.ECONFLICT, core.Target{Key: key("dlq"), Item: core.Item{Key: "k", Body: []byte("b")}}},
		// The batch's first item to "capped" fits its cap, the second does
		// not: neither is stored (RB-9's reject-publish, kept by a batch).
		{"PastACap", core.EFULL, core.Target{Key: key("capped"), Item: item("b", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, s := MustBatchFixture(t)
			before := f.appends()
			ts := []core.Target{
				{Key: f.dlq, Item: core.Item{Key: "k", Body: []byte("a"), Persistent: true}},
				{Key: s, Item: item("a", "g")},
				{Key: key("capped"), Item: item("a", "")},
				tc.bad,
				{Key: f.q, Item: item("c", "")},
			}
			_, c, err := f.e.EnqueueBatch(f.now(), ts)
			if core.ErrorCode(err) != tc.code || c != nil {
				t.Fatalf("EnqueueBatch = %v, %v; want a %s error and no commit", c, err, tc.code)
			}
			if n := f.appends() - before; n != 0 {
				t.Errorf("%d appends to the store, want none", n)
			}
			for _, k := range []core.EntityKey{f.q, f.dlq, s, key("capped")} {
				if its, err := f.e.Items(f.now(), k, 10); err != nil || len(its) != 0 {
					t.Errorf("%s holds %d items (%v), want none", k.Name, len(its), err)
				}
				if info, _ := f.e.Info(f.now(), k); info.LastSeq != 0 {
					t.Errorf("%s LastSeq = %d, want 0", k.Name, info.LastSeq)
				}
			}
		})
	}
}

func key(name string) core.EntityKey { return core.EntityKey{Protocol: "test", Name: name} }

func TestEnqueueBatchOneCommit(t *testing.T) {
	f, s := MustBatchFixture(t)
	f.MustEnqueue(f.q, core.Item{Body: []byte("before")})
	before := f.appends()
	ts := []core.Target{
		{Key: f.q, Item: core.Item{Body: []byte("a"), Persistent: true}},
		{Key: s, Item: core.Item{Body: []byte("b"), Group: "g", Persistent: true}},
		{Key: key("gone"), Item: core.Item{Body: []byte("skipped")}, IfExists: true},
		{Key: f.q, Item: core.Item{Body: []byte("c"), Persistent: true, State: core.Scheduled, ScheduledAt: f.now().Add(time.Hour)}},
		{Key: s, Item: core.Item{Body: []byte("refused"), Persistent: true}, Refused: &core.DeadLetterReason{Code: "no session"}},
	}
	out, c, err := f.e.EnqueueBatch(f.now(), ts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range out {
		got = append(got, fmt.Sprintf("%s %s %d", it.Body, it.State, it.Seq))
	}
	want := []string{"a active 2", "b active 1", " active 0", "c scheduled 3", " active 0"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
	if n := f.appends() - before; n != 1 {
		t.Fatalf("%d appends to the store, want one", n)
	}
	if d := cmp.Diff([]string{"put q 2", "put s 1", "put q 3", "put dlq 1"}, f.store.last()); d != "" {
		t.Errorf("the append (-want +got):\n%s", d)
	}
	if its, _ := f.e.Items(f.now(), f.dlq, 10); len(its) != 1 || string(its[0].Meta) != "dead:s" {
		t.Errorf("dlq holds %v, want the refused item dead-lettered from s", its)
	}
}

func TestEnqueueBatchSharesTheSeqOfAnotherEntity(t *testing.T) {
	// The copies of a topic's message carry the topic's number: higher
	// than each subscription's LastSeq, and durable in the topic.
	f := MustFixture(t)
	topic, a, b := f.MustCreate("topic", core.Policy{}), f.MustCreate("a", core.Policy{}), f.MustCreate("b", core.Policy{})
	f.MustEnqueue(b, core.Item{Body: []byte("b's own 1")})
	f.MustEnqueue(b, core.Item{Body: []byte("b's own 2")})
	copies := func(share int, body string, to ...core.EntityKey) []core.Target {
		var ts []core.Target
		for _, k := range to {
			ts = append(ts, core.Target{Key: k, Item: core.Item{Body: []byte(body), Persistent: true}, SeqFrom: topic, Share: share})
		}
		return ts
	}
	ts := append(copies(0, "m0", a, b, a), copies(1, "m1", a, b)...)
	out, _, err := f.e.EnqueueBatch(f.now(), ts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, it := range out {
		got = append(got, fmt.Sprintf("%s %s %d", ts[i].Key.Name, it.Body, it.Seq))
	}
	// m0 takes 3, above b's 2; the second copy in a takes a's next.
	want := []string{"a m0 3", "b m0 3", "a m0 4", "a m1 5", "b m1 5"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
	seq, _, err := f.e.ReserveSeq(f.now(), topic)
	if err != nil || seq != 6 {
		t.Errorf("ReserveSeq = %d, %v; want 6", seq, err)
	}
	// After a restart the topic goes on from its last number.
	e2 := core.NewEngine(core.Config{Store: f.store})
	if err := e2.Recover(context.Background(), f.now()); err != nil {
		t.Fatal(err)
	}
	out, _, err = e2.EnqueueBatch(f.now(), copies(0, "m2", b))
	if err != nil || out[0].Seq != 7 {
		t.Errorf("after a restart the next copy is %+v, %v; want Seq 7", out, err)
	}
}
