package cosmos_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// issue 13.12: items are numbered as the service numbers its documents:
// the last 8 bytes of an item's _rid count 1, 2, 3... with the top 4 bits
// 0 (a document, not a conflict), so DocumentId gives what the reference
// shows; a restart goes on counting after the stored items.
func TestItemRidsNumberDocumentsAcrossRestarts(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p"})
	f.MustCreate(c, "q", map[string]any{"id": "b", "pk": "q"})
	g := MustServerOn(t, f.store, f.clock.Now())
	gc, _ := g.client.NewContainer("db", "c")
	g.MustCreate(gc, "p", map[string]any{"id": "c", "pk": "p"})

	var nums []uint64
	for _, it := range []struct{ pk, id string }{{"p", "a"}, {"q", "b"}, {"p", "c"}} {
		rid, _ := g.read(gc, it.pk, it.id)["_rid"].(string)
		b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(rid, "-", "/"))
		if err != nil || len(b) != 16 {
			t.Fatalf("_rid %q: %v", rid, err)
		}
		nums = append(nums, binary.LittleEndian.Uint64(b[8:]))
	}
	if d := cmp.Diff([]uint64{1, 2, 3}, nums); d != "" {
		t.Errorf("document numbers (-want +got):\n%s", d)
	}
	var ids []float64
	pager := gc.NewQueryItemsPager("SELECT VALUE DocumentId(c) FROM c", pkOf("p"), nil)
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Items {
			var n float64
			if err := json.Unmarshal(raw, &n); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, n)
		}
	}
	if d := cmp.Diff([]float64{1, 3}, ids); d != "" {
		t.Errorf("DocumentId in partition p (-want +got):\n%s", d)
	}
}
