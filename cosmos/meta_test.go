package cosmos_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lapse-emulator/lapse/clienttest"
)

// Issue 26.6: container and offer metadata as the SDKs see it, through
// @azure/cosmos (scenarios.mjs, i26-*) and azcosmos.

// mustJSScenario runs scenario name of scenarios.mjs against a fresh
// server and checks its line against want (decoded into want's type).
func mustJSScenario(t *testing.T, name string, want any) {
	t.Helper()
	node := clienttest.Node(t, jsDir, "@azure/cosmos")
	f := MustServer(t)
	line := runJSScenario(t, node, f, name)
	got := newOf(want)
	if err := json.Unmarshal(line, got); err != nil {
		t.Fatalf("decoding %s: %v", line, err)
	}
	if d := cmp.Diff(want, derefAny(got), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("scenario %s (-want +got):\n%s\nline: %s", name, d, line)
	}
}

// policyView is what the tests look at in an indexing policy.
type policyView struct {
	IndexingMode  string
	Automatic     bool
	IncludedPaths []string
	ExcludedPaths []string
}

func TestIssue26_6_IndexingPolicyAsTheServiceWritesIt(t *testing.T) {
	t.Run("JS", func(t *testing.T) {
		type scenario struct{ Plain, Given, Read policyView }
		given := policyView{"consistent", true, []string{"/*"}, []string{"/skip/*", `/"_etag"/?`}}
		mustJSScenario(t, "i26-indexing-policy", scenario{
			Plain: policyView{"consistent", true, []string{"/*"}, []string{`/"_etag"/?`}},
			Given: given, Read: given,
		})
	})
	t.Run("azcosmos", func(t *testing.T) {
		f := MustServer(t)
		ctx := context.Background()
		db := f.MustDatabase("db")
		props := azcosmos.ContainerProperties{ID: "c",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
			IndexingPolicy: &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
				IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}}, ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/big/*"}}}}
		if _, err := db.CreateContainer(ctx, props, nil); err != nil {
			t.Fatal(err)
		}
		c, _ := db.NewContainer("c")
		read, err := c.Read(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range read.ContainerProperties.IndexingPolicy.ExcludedPaths {
			got = append(got, p.Path)
		}
		if d := cmp.Diff([]string{"/big/*", `/"_etag"/?`}, got); d != "" {
			t.Errorf("excluded paths (-want +got):\n%s", d)
		}
	})
}

func TestIssue26_6_QuotaInfoWhenAskedFor(t *testing.T) {
	quota := "functions=25;storedProcedures=100;triggers=25;documentSize=10485760;documentsSize=10485760;documentsCount=-1;collectionSize=10485760;"
	t.Run("JS", func(t *testing.T) {
		type scenario struct {
			Quota, Usage, Progress string
			PlainUsage             *string
		}
		// Two documents, one of about 3 KB: 4 started KB in all.
		mustJSScenario(t, "i26-quota-info", scenario{Quota: quota, Progress: "100",
			Usage: "functions=0;storedProcedures=0;triggers=0;documentSize=4;documentsSize=4;documentsCount=2;collectionSize=4;"})
	})
	t.Run("azcosmos", func(t *testing.T) {
		f := MustServer(t)
		c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
		f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p"})
		asked, err := c.Read(context.Background(), &azcosmos.ReadContainerOptions{PopulateQuotaInfo: true})
		if err != nil {
			t.Fatal(err)
		}
		h := asked.RawResponse.Header
		if got := h.Get("x-ms-resource-quota"); got != quota {
			t.Errorf("x-ms-resource-quota %q, want %q", got, quota)
		}
		if got, want := h.Get("x-ms-resource-usage"), "functions=0;storedProcedures=0;triggers=0;documentSize=1;documentsSize=1;documentsCount=1;collectionSize=1;"; got != want {
			t.Errorf("x-ms-resource-usage %q, want %q", got, want)
		}
		plain, err := c.Read(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := plain.RawResponse.Header.Get("x-ms-resource-usage"); got != "" {
			t.Errorf("x-ms-resource-usage %q on a read that did not ask for it", got)
		}
		if got := plain.RawResponse.Header.Get("x-ms-documentdb-collection-index-transformation-progress"); got != "100" {
			t.Errorf("index transformation progress %q, want 100", got)
		}
	})
}

func TestIssue26_6_DeleteAllItemsForPartitionKey(t *testing.T) {
	// azcosmos has no call for it: the JS SDK's deleteAllItemsForPartitionKey.
	type scenario struct {
		Status, ReadDeleted int
		Query, Changes      []string
		Recreated           bool
		HierStatus          int
		HierLeft            []string
	}
	mustJSScenario(t, "i26-delete-partition-key", scenario{Status: 200, ReadDeleted: 404,
		Query: []string{"c"}, Changes: []string{"c"}, Recreated: true, HierStatus: 200, HierLeft: []string{"z"}})
}

func TestIssue26_6_ConflictsFeedIsEmpty(t *testing.T) {
	// azcosmos has no conflicts feed: the JS SDK's container.conflicts.
	type scenario struct {
		All, Queried []any
		ReadOne      int
	}
	mustJSScenario(t, "i26-conflicts", scenario{All: []any{}, Queried: []any{}, ReadOne: 404})
}

func TestIssue26_6_OfferReplaceWithInvalidLink(t *testing.T) {
	// azcosmos builds the offer's body itself (ReplaceThroughput), with
	// the offer's own links: only the JS SDK can send others.
	type scenario struct{ BadRid, BadID, NullIDs, BadResource, Good int }
	mustJSScenario(t, "i26-offer-links", scenario{BadRid: 400, BadID: 400, NullIDs: 400, BadResource: 400, Good: 500})
	t.Run("azcosmos", func(t *testing.T) {
		f := MustServer(t)
		c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
		if _, err := c.ReplaceThroughput(context.Background(), azcosmos.NewManualThroughputProperties(600), nil); err != nil {
			t.Fatalf("replace throughput with the offer's own links: %v", err)
		}
	})
}

func TestIssue26_6_IndexChecks(t *testing.T) {
	t.Run("JS", func(t *testing.T) {
		type check struct {
			Code    int
			HasText bool
		}
		type scenario struct {
			Plain               check
			PlainCross          int
			Served, Reversed    []string
			Mixed               int
			Single              []string
			Vector              check
			VectorWithEmbedding []string
		}
		mustJSScenario(t, "i26-index-checks", scenario{
			Plain: check{400, true}, PlainCross: 400,
			Served: []string{"z", "y", "x"}, Reversed: []string{"x", "y", "z"}, Mixed: 400,
			Single: []string{"z", "y", "x"},
			Vector: check{400, true}, VectorWithEmbedding: []string{"/vector1"},
		})
	})
	t.Run("azcosmos", func(t *testing.T) {
		f := MustServer(t)
		ctx := context.Background()
		db := f.MustDatabase("db")
		plain := f.MustContainer(db, "plain", "/pk", nil)
		props := azcosmos.ContainerProperties{ID: "composite",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
			IndexingPolicy: &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
				IncludedPaths:    []azcosmos.IncludedPath{{Path: "/*"}},
				CompositeIndexes: [][]azcosmos.CompositeIndex{{{Path: "/a", Order: azcosmos.CompositeIndexAscending}, {Path: "/b", Order: azcosmos.CompositeIndexAscending}}}}}
		if _, err := db.CreateContainer(ctx, props, nil); err != nil {
			t.Fatal(err)
		}
		composite, _ := db.NewContainer("composite")
		for _, c := range []*azcosmos.ContainerClient{plain, composite} {
			f.MustCreate(c, "p", map[string]any{"id": "x", "pk": "p", "a": 1, "b": 2})
			f.MustCreate(c, "p", map[string]any{"id": "y", "pk": "p", "a": 1, "b": 1})
		}
		const q = "SELECT * FROM c ORDER BY c.a, c.b"
		pager := plain.NewQueryItemsPager(q, pkOf("p"), nil)
		_, err := pager.NextPage(ctx)
		if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "does not have a corresponding composite index") {
			t.Errorf("ORDER BY c.a, c.b without a composite index: %v, want the service's 400", err)
		}
		if d := cmp.Diff([]string{"y", "x"}, f.queryIDs(composite, "p", q, nil)); d != "" {
			t.Errorf("ORDER BY served by the composite index (-want +got):\n%s", d)
		}
	})
}

func TestIssue26_6_RequestChargeAndLSN(t *testing.T) {
	t.Run("JS", func(t *testing.T) {
		type scenario struct {
			Charges struct {
				Create, CreateBig, Read, ReadBig, Replace, Delete, Query float64
			}
			Lsns          []int
			CommittedSame bool
		}
		var want scenario
		// 1 RU per started KB read, 5 per started KB written or deleted,
		// 2 per page plus 1 per started KB of its rows (charge.go).
		want.Charges.Create, want.Charges.CreateBig, want.Charges.Read, want.Charges.ReadBig = 5, 15, 1, 3
		want.Charges.Replace, want.Charges.Delete, want.Charges.Query = 5, 5, 5
		// Each write moves the container's LSN on; a read tells it.
		want.Lsns, want.CommittedSame = []int{1, 2, 2, 3, 4}, true
		mustJSScenario(t, "i26-charge-lsn", want)
	})
	t.Run("azcosmos", func(t *testing.T) {
		f := MustServer(t)
		ctx := context.Background()
		c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
		lsn := func(r azcosmos.ItemResponse) int {
			n, err := strconv.Atoi(r.RawResponse.Header.Get("lsn"))
			if err != nil || r.RawResponse.Header.Get("x-ms-global-committed-lsn") != strconv.Itoa(n) {
				t.Fatalf("lsn %q, x-ms-global-committed-lsn %q", r.RawResponse.Header.Get("lsn"), r.RawResponse.Header.Get("x-ms-global-committed-lsn"))
			}
			return n
		}
		first := f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p"})
		second := f.MustCreate(c, "p", map[string]any{"id": "b", "pk": "p", "text": strings.Repeat("y", 3500)})
		read, err := c.ReadItem(ctx, pkOf("p"), "b", nil)
		if err != nil {
			t.Fatal(err)
		}
		del, err := c.DeleteItem(ctx, pkOf("p"), "a", nil)
		if err != nil {
			t.Fatal(err)
		}
		got := []float32{first.RequestCharge, second.RequestCharge, read.RequestCharge, del.RequestCharge}
		if d := cmp.Diff([]float32{5, 20, 4, 5}, got); d != "" {
			t.Errorf("request charges of create, create of 4 KB, read of it, delete (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]int{1, 2, 2, 3}, []int{lsn(first), lsn(second), lsn(read), lsn(del)}); d != "" {
			t.Errorf("LSNs of create, create, read, delete (-want +got):\n%s", d)
		}

		// A batch's charge is its operations': a create (5) and a read of
		// the 4 KB item (4).
		batch := c.NewTransactionalBatch(pkOf("p"))
		batch.CreateItem([]byte(`{"id":"c","pk":"p"}`), nil)
		batch.ReadItem("b", nil)
		br, err := c.ExecuteTransactionalBatch(ctx, batch, nil)
		if err != nil || !br.Success {
			t.Fatalf("batch: %v", err)
		}
		ops := []float32{br.RequestCharge}
		for _, op := range br.OperationResults {
			ops = append(ops, op.RequestCharge)
		}
		if d := cmp.Diff([]float32{9, 5, 4}, ops); d != "" {
			t.Errorf("request charges of a batch and its create and read (-want +got):\n%s", d)
		}
	})
}
