package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// groupKeys returns the keys ScanGroup yields for group g of entity k.
func groupKeys(tb testing.TB, e *core.Engine, now time.Time, k core.EntityKey, g string) []string {
	tb.Helper()
	var keys []string
	if err := e.ScanGroup(now, k, g, func(it *core.Item) bool {
		keys = append(keys, it.Key)
		return true
	}); err != nil {
		tb.Fatal(err)
	}
	return keys
}

func TestScanGroupFollowsWritesRemovalsExpiryAndRestart_CO6(t *testing.T) {
	f := MustFixture(t)
	p := core.Policy{Base: core.FromModified, Retroactive: true, DefaultTTL: core.Forever, OnExpire: core.Drop}
	c := f.MustCreate("db/c", p)
	put := func(key, group string, ttl core.TTL) {
		t.Helper()
		_, commit, err := f.e.Put(f.now(), c, core.Item{Key: key, Group: group, TTL: ttl, Persistent: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := commit.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	put("a1", "a", core.NoTTL)
	put("b1", "b", core.NoTTL)
	put("a2", "a", core.After(time.Minute))
	put("a3", "a", core.NoTTL)
	put("a1", "a", core.NoTTL) // a rewrite moves to the end, as Seq does
	if _, err := f.e.RemoveKey(f.now(), c, "a3"); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a2", "a1"}, groupKeys(t, f.e, f.now(), c, "a")); d != "" {
		t.Fatalf("group a (-want +got):\n%s", d)
	}
	f.advance(time.Minute)
	if d := cmp.Diff([]string{"a1"}, groupKeys(t, f.e, f.now(), c, "a")); d != "" {
		t.Fatalf("group a after a2 expired (-want +got):\n%s", d)
	}
	if got := groupKeys(t, f.e, f.now(), c, "none"); got != nil {
		t.Fatalf("an unknown group yields %v", got)
	}
	// Many writes to one key leave no tombstones behind in its group.
	for range 200 {
		put("b1", "b", core.NoTTL)
	}
	if d := cmp.Diff([]string{"b1"}, groupKeys(t, f.e, f.now(), c, "b")); d != "" {
		t.Fatalf("group b (-want +got):\n%s", d)
	}

	e2 := core.NewEngine(core.Config{Store: f.store})
	if err := e2.Recover(context.Background(), f.now()); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a1"}, groupKeys(t, e2, f.now(), c, "a")); d != "" {
		t.Fatalf("group a after a restart (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b1"}, groupKeys(t, e2, f.now(), c, "b")); d != "" {
		t.Fatalf("group b after a restart (-want +got):\n%s", d)
	}
}

func TestWriteAppliesRemovalsAndPutsAsOneChange(t *testing.T) {
	f := MustFixture(t)
	c := f.MustCreate("db/c", core.Policy{Base: core.FromModified, Retroactive: true})
	if _, _, err := f.e.Put(f.now(), c, core.Item{Key: "a", Group: "g", Body: []byte("a1"), Persistent: true}); err != nil {
		t.Fatal(err)
	}
	out, commit, err := f.e.Write(f.now(), c, []string{"a", "missing"}, []core.Item{
		{Key: "b", Group: "g", Body: []byte("b1"), Persistent: true},
		{Key: "c", Group: "g", Body: []byte("c1"), Persistent: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := commit.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Seq >= out[1].Seq {
		t.Fatalf("Write returned %+v", out)
	}
	if d := cmp.Diff([]string{"b", "c"}, groupKeys(t, f.e, f.now(), c, "g")); d != "" {
		t.Fatalf("group g (-want +got):\n%s", d)
	}
	if _, _, err := f.e.Write(f.now(), c, nil, []core.Item{{Body: []byte("no key")}}); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("an item without a key: %v", err)
	}
}
