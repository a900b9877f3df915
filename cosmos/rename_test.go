package cosmos_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// Issue 26: a replace of item a whose document has id b renames the item,
// as the service does (the Python SDK's own tests replace so, in point
// operations and batches): b is there with a's _rid, a is gone, and an id
// another item has is a 409.
func TestIssue26_ReplaceWithAnotherIDRenames(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	ctx := context.Background()
	for _, id := range []string{"a", "taken", "x"} {
		if _, err := c.CreateItem(ctx, pkOf("p"), []byte(`{"id":"`+id+`","pk":"p"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	ridOf := func(id string) string {
		t.Helper()
		r, err := c.ReadItem(ctx, pkOf("p"), id, nil)
		if err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
		var d struct {
			RID string `json:"_rid"`
		}
		json.Unmarshal(r.Value, &d)
		return d.RID
	}
	rid := ridOf("a")
	if _, err := c.ReplaceItem(ctx, pkOf("p"), "a", []byte(`{"id":"b","pk":"p","v":1}`), nil); err != nil {
		t.Fatalf("replace a with id b: %v", err)
	}
	if got := ridOf("b"); got != rid {
		t.Errorf("b's _rid %s, want a's %s", got, rid)
	}
	if _, err := c.ReadItem(ctx, pkOf("p"), "a", nil); statusOf(err) != http.StatusNotFound {
		t.Errorf("read a after the rename: %v, want 404", err)
	}
	if _, err := c.ReplaceItem(ctx, pkOf("p"), "b", []byte(`{"id":"taken","pk":"p"}`), nil); statusOf(err) != http.StatusConflict {
		t.Errorf("rename onto an id another item has: %v, want 409", err)
	}

	// In a transactional batch too.
	b := c.NewTransactionalBatch(pkOf("p"))
	b.ReplaceItem("x", []byte(`{"id":"y","pk":"p"}`), nil)
	b.ReadItem("y", nil)
	res, err := c.ExecuteTransactionalBatch(ctx, b, nil)
	if err != nil || !res.Success {
		t.Fatalf("batch renaming x to y: %v %+v", err, res)
	}
	if _, err := c.ReadItem(ctx, pkOf("p"), "x", nil); statusOf(err) != http.StatusNotFound {
		t.Errorf("read x after the batch: %v, want 404", err)
	}
}
