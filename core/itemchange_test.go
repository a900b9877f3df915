package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// The ItemChanged hook hears of every change of a keyed item, in the
// engine's order, by the time the engine call that made it returns (no
// wait for the hook lanes): a new item, a new version, a caller's removal
// and an expiry, told apart from a removal (CO-6).
func TestItemChanged_TellsEachChangeOfAKeyedItemInOrder(t *testing.T) {
	f := MustFixture(t)
	type seen struct {
		Key             string
		Old, New        uint64 // Seqs, 0 for none
		Expired         bool
		At              time.Time
		LastSeq         uint64
		OldBody, NewBod string
	}
	var mu lockorder.Mutex
	var got []seen
	f.e.Register("test", core.ProtocolHooks{ItemChanged: func(k core.EntityKey, ch core.ItemChange) {
		s := seen{Expired: ch.Expired, At: ch.At, LastSeq: ch.LastSeq}
		if ch.Old != nil {
			s.Key, s.Old, s.OldBody = ch.Old.Key, ch.Old.Seq, string(ch.Old.Body)
		}
		if ch.New != nil {
			s.Key, s.New, s.NewBod = ch.New.Key, ch.New.Seq, string(ch.New.Body)
		}
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}})
	k := core.EntityKey{Protocol: "test", Name: "c"}
	wait := func(c *core.Commit, err error) {
		t.Helper()
		if err == nil {
			err = c.Wait(context.Background())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	_, c, err := f.e.Create(f.now(), core.Entity{EntityKey: k, Kind: "container", Durable: true,
		Policy: core.Policy{Base: core.FromModified, OnExpire: core.Drop}})
	wait(c, err)
	t0 := f.now()
	_, c, err = f.e.Enqueue(f.now(), k, core.Item{Key: "a", Body: []byte("a1"), Persistent: true})
	mu.Lock()
	told := len(got)
	mu.Unlock()
	if told != 1 {
		t.Fatalf("%d changes told when the write returned, want 1", told)
	}
	wait(c, err)
	_, c, err = f.e.Write(f.now(), k, nil, []core.Item{{Key: "a", Body: []byte("a2"), Persistent: true}})
	wait(c, err)
	_, c, err = f.e.Write(f.now(), k, []string{"a"}, nil)
	wait(c, err)
	_, c, err = f.e.Write(f.now(), k, nil, []core.Item{{Key: "b", Body: []byte("b1"), Persistent: true, TTL: core.After(10 * time.Second)}})
	wait(c, err)
	// An item without a key is no document: nothing is told of it.
	_, c, err = f.e.Enqueue(f.now(), k, core.Item{Body: []byte("m")})
	wait(c, err)
	f.advance(25 * time.Second) // b's expiry is told at its due time, t0+10s

	want := []seen{
		{Key: "a", New: 1, At: t0, LastSeq: 1, NewBod: "a1"},
		{Key: "a", Old: 1, New: 2, At: t0, LastSeq: 2, OldBody: "a1", NewBod: "a2"},
		{Key: "a", Old: 2, At: t0, LastSeq: 2, OldBody: "a2"},
		{Key: "b", New: 3, At: t0, LastSeq: 3, NewBod: "b1"},
		{Key: "b", Old: 3, Expired: true, At: t0.Add(10 * time.Second), LastSeq: 4, OldBody: "b1"},
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("changes told (-want +got):\n%s", d)
	}
}
