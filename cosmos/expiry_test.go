package cosmos_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// The CO rules of SEMANTICS.md, each through azcosmos against the server on
// a frozen clock that the test advances.

// rule: CO-1
func TestTTLCountsFromLastWrite_CO1(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", ptr[int32](10))
	f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p"})
	f.advance(8 * time.Second)
	// Every kind of write restarts the TTL: replace, upsert, patch.
	if _, err := c.ReplaceItem(context.Background(), azcosmos.NewPartitionKeyString("p"), "a", []byte(`{"id":"a","pk":"p","v":1}`), nil); err != nil {
		t.Fatal(err)
	}
	f.advance(8 * time.Second)
	if _, err := c.UpsertItem(context.Background(), azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"a","pk":"p","v":2}`), nil); err != nil {
		t.Fatal(err)
	}
	f.advance(8 * time.Second)
	ops := azcosmos.PatchOperations{}
	ops.AppendSet("/v", 3)
	if _, err := c.PatchItem(context.Background(), azcosmos.NewPartitionKeyString("p"), "a", ops, nil); err != nil {
		t.Fatal(err)
	}
	f.advance(9 * time.Second)
	if got := f.read(c, "p", "a"); got == nil || got["v"] != 3.0 {
		t.Fatalf("after patch and 9s: %v, want v 3", got)
	}
	f.advance(time.Second)
	if got := f.read(c, "p", "a"); got != nil {
		t.Fatalf("10s after the last write the item is still there: %v", got)
	}
}

// rule: CO-2
func TestNoDefaultTTLNothingExpires_CO2(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p", "ttl": 5})
	f.advance(365 * 24 * time.Hour)
	if f.read(c, "p", "a") == nil {
		t.Fatal("an item with ttl 5 expired in a container without defaultTtl")
	}
}

// rule: CO-3
func TestDefaultTTLMinusOneOnlyItemTTLExpires_CO3(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", ptr[int32](-1))
	f.MustCreate(c, "p", map[string]any{"id": "forever", "pk": "p"})
	f.MustCreate(c, "p", map[string]any{"id": "five", "pk": "p", "ttl": 5})
	f.advance(4 * time.Second)
	if d := cmp.Diff([]string{"forever", "five"}, f.queryIDs(c, "p", "SELECT * FROM c", nil)); d != "" {
		t.Fatalf("after 4s (-want +got):\n%s", d)
	}
	f.advance(time.Second)
	if d := cmp.Diff([]string{"forever"}, f.queryIDs(c, "p", "SELECT * FROM c", nil)); d != "" {
		t.Fatalf("after 5s (-want +got):\n%s", d)
	}
	f.advance(10 * 365 * 24 * time.Hour)
	if f.read(c, "p", "forever") == nil {
		t.Fatal("an item without ttl expired under defaultTtl -1")
	}
}

// rule: CO-4
func TestDefaultTTLAndItemOverrides_CO4(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", ptr[int32](60))
	f.MustCreate(c, "p", map[string]any{"id": "default", "pk": "p"})
	f.MustCreate(c, "p", map[string]any{"id": "longer", "pk": "p", "ttl": 120})
	f.MustCreate(c, "p", map[string]any{"id": "shorter", "pk": "p", "ttl": 10})
	f.MustCreate(c, "p", map[string]any{"id": "never", "pk": "p", "ttl": -1})
	for _, step := range []struct {
		after time.Duration
		want  []string
	}{
		{9 * time.Second, []string{"default", "longer", "shorter", "never"}},
		{time.Second, []string{"default", "longer", "never"}},
		{50 * time.Second, []string{"longer", "never"}},
		{60 * time.Second, []string{"never"}},
		{14 * 24 * time.Hour, []string{"never"}},
	} {
		f.advance(step.after)
		if d := cmp.Diff(step.want, f.queryIDs(c, "p", "SELECT * FROM c", nil)); d != "" {
			t.Fatalf("at %v (-want +got):\n%s", f.clock.Now().Sub(t0), d)
		}
	}
}

// rule: CO-5
func TestInvalidTTLIs400_CO5(t *testing.T) {
	f := MustServer(t)
	db := f.MustDatabase("db")
	c := f.MustContainer(db, "c", "/pk", ptr[int32](60))
	for _, tc := range []struct{ doc, text string }{
		{`{"id":"a","pk":"p","ttl":0}`, "The input ttl '0' is invalid."},
		{`{"id":"a","pk":"p","ttl":null}`, "The input ttl 'null' is invalid."},
		{`{"id":"a","pk":"p","ttl":-2}`, "The input ttl '-2' is invalid."},
		{`{"id":"a","pk":"p","ttl":1.5}`, "The input ttl '1.5' is invalid."},
		{`{"id":"a","pk":"p","ttl":2147483648}`, "The input ttl '2147483648' is invalid."},
		// The text is JSON in JSON: the quotes of "5" come out escaped twice.
		{`{"id":"a","pk":"p","ttl":"5"}`, `The input ttl '\\\"5\\\"' is invalid.`},
	} {
		_, err := c.CreateItem(context.Background(), azcosmos.NewPartitionKeyString("p"), []byte(tc.doc), nil)
		if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), tc.text) ||
			!strings.Contains(err.Error(), "Ensure to provide a nonzero positive integer less than or equal to '2147483647', or '-1' which means never expire.") {
			t.Errorf("create %s: %v", tc.doc, err)
		}
	}
	if ids := f.queryIDs(c, "p", "SELECT * FROM c", nil); len(ids) != 0 {
		t.Fatalf("a refused item was stored: %v", ids)
	}
	for _, ttl := range []int32{0, -2} {
		_, err := db.CreateContainer(context.Background(), azcosmos.ContainerProperties{ID: "bad", DefaultTimeToLive: ptr(ttl),
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil)
		if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "The input defaultTtl") {
			t.Errorf("container with defaultTtl %d: %v", ttl, err)
		}
	}
}

// rule: CO-6
func TestExpiredItemGoneEverywhereAtOnce_CO6(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", ptr[int32](30))
	f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p"})
	f.MustCreate(c, "p", map[string]any{"id": "b", "pk": "p", "ttl": 3600})
	// Only the clock moves: no sweep runs (f.clock.Advance, not f.advance),
	// so every read must check due times itself.
	f.clock.Advance(30 * time.Second)
	if f.read(c, "p", "a") != nil {
		t.Fatal("point read served an expired item")
	}
	if d := cmp.Diff([]string{"b"}, f.queryIDs(c, "p", "SELECT * FROM c WHERE c.pk = 'p'", nil)); d != "" {
		t.Fatalf("query (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b"}, f.queryIDs(c, "", "SELECT * FROM c", nil)); d != "" {
		t.Fatalf("cross-partition query (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b"}, f.readFeedPages("db", "c", "", 0)); d != "" {
		t.Fatalf("read feed (-want +got):\n%s", d)
	}
	if _, err := c.ReplaceItem(context.Background(), azcosmos.NewPartitionKeyString("p"), "a", []byte(`{"id":"a","pk":"p"}`), nil); statusOf(err) != http.StatusNotFound {
		t.Fatalf("replace of an expired item: %v, want 404", err)
	}
	// The id is free again.
	f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p"})
}

// rule: CO-7
func TestDefaultTTLChangeAppliesToStoredItems_CO7(t *testing.T) {
	f := MustServer(t)
	db := f.MustDatabase("db")
	c := f.MustContainer(db, "c", "/pk", nil)
	f.MustCreate(c, "p", map[string]any{"id": "old", "pk": "p"})
	f.advance(time.Hour)
	f.MustCreate(c, "p", map[string]any{"id": "new", "pk": "p"})
	props, err := c.Read(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cp := props.ContainerProperties
	cp.DefaultTimeToLive = ptr[int32](1800)
	if _, err := c.Replace(context.Background(), *cp, nil); err != nil {
		t.Fatal(err)
	}
	// "old" was written an hour ago: past 30 minutes at once.
	if d := cmp.Diff([]string{"new"}, f.queryIDs(c, "p", "SELECT * FROM c", nil)); d != "" {
		t.Fatalf("after defaultTtl 1800 (-want +got):\n%s", d)
	}
	f.advance(30 * time.Minute)
	if ids := f.queryIDs(c, "p", "SELECT * FROM c", nil); len(ids) != 0 {
		t.Fatalf("30 minutes later: %v", ids)
	}
	// Turning TTL off (a replace without defaultTtl) keeps what is left.
	f.MustCreate(c, "p", map[string]any{"id": "kept", "pk": "p", "ttl": 1})
	props, _ = c.Read(context.Background(), nil)
	cp = props.ContainerProperties
	cp.DefaultTimeToLive = nil
	if _, err := c.Replace(context.Background(), *cp, nil); err != nil {
		t.Fatal(err)
	}
	f.advance(time.Hour)
	if f.read(c, "p", "kept") == nil {
		t.Fatal("with defaultTtl removed an item with ttl 1 still expired")
	}
}
