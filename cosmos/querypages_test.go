package cosmos_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/google/go-cmp/cmp"
)

// pageRows reads the next page of pager as rows of strings: a document's
// id, or the row itself for rows that are not documents.
func pageRows(t *testing.T, pager interface {
	NextPage(context.Context) (azcosmos.QueryItemsResponse, error)
}) []string {
	t.Helper()
	page, err := pager.NextPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows := []string{}
	for _, it := range page.Items {
		var d struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(it, &d); err == nil && d.ID != "" {
			rows = append(rows, d.ID)
			continue
		}
		rows = append(rows, string(it))
	}
	return rows
}

// A query's next page starts after the rows already returned, however
// many of them are deleted, or expire (CO-6), before it is read: the
// continuation is a place in the result, not a count of rows.
func TestQueryPagesKeepTheirPlaceWhenReturnedItemsGo_CO6(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	ctx := context.Background()
	two := &azcosmos.QueryOptions{PageSizeHint: 2}
	for i := range 6 {
		f.MustCreate(c, "g", map[string]any{"id": "s" + strconv.Itoa(i), "pk": "g", "n": i})
	}

	t.Run("deleted", func(t *testing.T) {
		pager := c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKeyString("g"), two)
		if d := cmp.Diff([]string{"s0", "s1"}, pageRows(t, pager)); d != "" {
			t.Fatalf("page 1 (-want +got):\n%s", d)
		}
		for _, id := range []string{"s0", "s1"} {
			if _, err := c.DeleteItem(ctx, azcosmos.NewPartitionKeyString("g"), id, nil); err != nil {
				t.Fatal(err)
			}
		}
		if d := cmp.Diff([]string{"s2", "s3"}, pageRows(t, pager)); d != "" {
			t.Fatalf("page 2, after deleting page 1's items (-want +got):\n%s", d)
		}
	})

	t.Run("expired", func(t *testing.T) {
		never := int32(-1) // items may set a ttl of their own
		c := f.MustContainer(f.MustDatabase("ttl"), "c", "/pk", &never)
		for i := range 4 {
			doc := map[string]any{"id": "e" + strconv.Itoa(i), "pk": "e"}
			if i == 0 {
				doc["ttl"] = 30
			}
			f.MustCreate(c, "e", doc)
		}
		pager := c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKeyString("e"), two)
		if d := cmp.Diff([]string{"e0", "e1"}, pageRows(t, pager)); d != "" {
			t.Fatalf("page 1 (-want +got):\n%s", d)
		}
		f.advance(31 * time.Second)
		if d := cmp.Diff([]string{"e2", "e3"}, pageRows(t, pager)); d != "" {
			t.Fatalf("page 2, after e0 expired (-want +got):\n%s", d)
		}
	})

	t.Run("filtered across partitions", func(t *testing.T) {
		pager := c.NewQueryItemsPager("SELECT c.id FROM c WHERE c.n >= 2", azcosmos.NewPartitionKey(), two)
		if d := cmp.Diff([]string{"s2", "s3"}, pageRows(t, pager)); d != "" {
			t.Fatalf("page 1 (-want +got):\n%s", d)
		}
		if _, err := c.DeleteItem(ctx, azcosmos.NewPartitionKeyString("g"), "s2", nil); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"s4", "s5"}, pageRows(t, pager)); d != "" {
			t.Fatalf("page 2, after deleting s2 (-want +got):\n%s", d)
		}
	})

	t.Run("a page ends inside a document's rows", func(t *testing.T) {
		f.MustCreate(c, "j", map[string]any{"id": "j0", "pk": "j", "tags": []string{"a", "b", "c"}})
		f.MustCreate(c, "j", map[string]any{"id": "j1", "pk": "j", "tags": []string{"d"}})
		pager := c.NewQueryItemsPager("SELECT VALUE t FROM c JOIN t IN c.tags", azcosmos.NewPartitionKeyString("j"), two)
		var got []string
		for pager.More() {
			got = append(got, pageRows(t, pager)...)
		}
		if d := cmp.Diff([]string{`"a"`, `"b"`, `"c"`, `"d"`}, got); d != "" {
			t.Fatalf("rows (-want +got):\n%s", d)
		}
	})

	t.Run("ORDER BY still pages", func(t *testing.T) {
		pager := c.NewQueryItemsPager("SELECT * FROM c ORDER BY c.n DESC", azcosmos.NewPartitionKeyString("g"), two)
		var got []string
		for pager.More() {
			got = append(got, pageRows(t, pager)...)
		}
		if d := cmp.Diff([]string{"s5", "s4", "s3"}, got); d != "" {
			t.Fatalf("rows (-want +got):\n%s", d)
		}
	})
}
