package cosmos_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/google/go-cmp/cmp"
)

func TestDatabasesAndContainers(t *testing.T) {
	f := MustServer(t)
	ctx := context.Background()
	db := f.MustDatabase("db")
	if _, err := f.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); statusOf(err) != http.StatusConflict {
		t.Fatalf("second database create: %v, want 409", err)
	}
	f.MustDatabase("db2")
	var ids []string
	pager := f.client.NewQueryDatabasesPager("SELECT * FROM dbs d WHERE d.id LIKE 'db%' ORDER BY d.id DESC", nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Databases {
			ids = append(ids, d.ID)
		}
	}
	if d := cmp.Diff([]string{"db2", "db"}, ids); d != "" {
		t.Fatalf("database query (-want +got):\n%s", d)
	}

	ttl := int32(3600)
	props := azcosmos.ContainerProperties{ID: "c", DefaultTimeToLive: &ttl,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/tenant"}},
		IndexingPolicy: &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths: []azcosmos.IncludedPath{{Path: "/tenant/?"}}, ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/*"}}}}
	created, err := db.CreateContainer(ctx, props, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := created.ContainerProperties
	if got == nil || got.DefaultTimeToLive == nil || *got.DefaultTimeToLive != 3600 || got.PartitionKeyDefinition.Paths[0] != "/tenant" ||
		got.IndexingPolicy == nil || got.IndexingPolicy.IncludedPaths[0].Path != "/tenant/?" || got.ETag == nil {
		t.Fatalf("created container: %+v", got)
	}
	if _, err := db.CreateContainer(ctx, props, nil); statusOf(err) != http.StatusConflict {
		t.Fatalf("second container create: %v, want 409", err)
	}
	c, _ := db.NewContainer("c")
	read, err := c.Read(ctx, nil)
	if err != nil || read.ContainerProperties.ID != "c" {
		t.Fatalf("read container: %v", err)
	}
	// A container of a database without throughput has its own, 400 RU/s.
	tp, err := c.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := tp.ThroughputProperties.ManualThroughput(); !ok || n != 400 {
		t.Fatalf("throughput %v %v", n, ok)
	}
	if _, err := c.ReplaceThroughput(ctx, azcosmos.NewManualThroughputProperties(1000), nil); err != nil {
		t.Fatal(err)
	}
	tp, _ = c.ReadThroughput(ctx, nil)
	if n, _ := tp.ThroughputProperties.ManualThroughput(); n != 1000 {
		t.Fatalf("throughput after replace: %d", n)
	}
	if _, err := c.ReplaceThroughput(ctx, azcosmos.NewAutoscaleThroughputProperties(4000), nil); err != nil {
		t.Fatal(err)
	}
	tp, _ = c.ReadThroughput(ctx, nil)
	if n, ok := tp.ThroughputProperties.AutoscaleMaxThroughput(); !ok || n != 4000 {
		t.Fatalf("autoscale after replace: %d %v", n, ok)
	}
	// The partition key cannot change.
	cp := *read.ContainerProperties
	cp.PartitionKeyDefinition = azcosmos.PartitionKeyDefinition{Paths: []string{"/other"}}
	if _, err := c.Replace(ctx, cp, nil); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("partition key change: %v, want 400", err)
	}
	cpager := db.NewQueryContainersPager("SELECT * FROM c", nil)
	page, err := cpager.NextPage(ctx)
	if err != nil || len(page.Containers) != 1 || page.Containers[0].ID != "c" {
		t.Fatalf("container query: %v %+v", err, page.Containers)
	}
	f.MustCreate(c, "t", map[string]any{"id": "a", "tenant": "t"})
	if _, err := c.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString("t"), "a", nil); statusOf(err) != http.StatusNotFound {
		t.Fatalf("item of a deleted container: %v", err)
	}
	// Shared throughput on a database, autoscale.
	tp2 := azcosmos.NewAutoscaleThroughputProperties(5000)
	if _, err := f.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shared"}, &azcosmos.CreateDatabaseOptions{ThroughputProperties: &tp2}); err != nil {
		t.Fatal(err)
	}
	shared, _ := f.client.NewDatabase("shared")
	dtp, err := shared.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := dtp.ThroughputProperties.AutoscaleMaxThroughput(); !ok || n != 5000 {
		t.Fatalf("database autoscale: %d %v", n, ok)
	}
	// Deleting a database takes its containers and their items.
	sc := f.MustContainer(shared, "inner", "/pk", nil)
	f.MustCreate(sc, "p", map[string]any{"id": "x", "pk": "p"})
	if _, err := sc.ReadThroughput(ctx, nil); statusOf(err) != http.StatusNotFound {
		t.Fatalf("a container in a shared-throughput database has no offer of its own: %v", err)
	}
	if _, err := shared.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Read(ctx, nil); statusOf(err) != http.StatusNotFound {
		t.Fatalf("container of a deleted database: %v", err)
	}
	if _, err := f.client.NewDatabase("nope"); err != nil {
		t.Fatal(err)
	}
	nope, _ := f.client.NewDatabase("nope")
	if _, err := nope.Read(ctx, nil); statusOf(err) != http.StatusNotFound || !strings.Contains(err.Error(), `"code": "NotFound"`) {
		t.Fatalf("missing database: %v", err)
	}
}

func TestBadRequestsKeepWhatIsStored(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p"})
	h := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "Content-Type": "application/json"}
	big := `{"id":"big","pk":"p","x":"` + strings.Repeat("x", 2<<20) + `"}`
	for name, tc := range map[string]struct {
		body   string
		status int
		code   string
	}{
		"NotJSON":     {`{"id":`, http.StatusBadRequest, "BadRequest"},
		"NotAnObject": {`[1,2]`, http.StatusBadRequest, "BadRequest"},
		"NoID":        {`{"pk":"p"}`, http.StatusBadRequest, "BadRequest"},
		"NumberID":    {`{"id":5,"pk":"p"}`, http.StatusBadRequest, "BadRequest"},
		"Over2MB":     {big, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge"},
	} {
		r := f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", []byte(tc.body), h)
		var e struct{ Code, Message string }
		if err := json.Unmarshal(r.body, &e); err != nil || r.status != tc.status || e.Code != tc.code || !strings.Contains(e.Message, "ActivityId: ") {
			t.Errorf("%s: %d %.300s", name, r.status, r.body)
		}
	}
	if d := cmp.Diff([]string{"a"}, f.queryIDs(c, "p", "SELECT * FROM c", nil)); d != "" {
		t.Fatalf("stored (-want +got):\n%s", d)
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", ptr[int32](60))
	f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p"})
	f.MustCreate(c, "q", map[string]any{"id": "b", "pk": "q", "ttl": -1})
	before := f.read(c, "p", "a")

	g := MustServerOn(t, f.store, f.clock.Now())
	gc, _ := g.client.NewContainer("db", "c")
	if d := cmp.Diff(before, g.read(gc, "p", "a")); d != "" {
		t.Fatalf("item after restart (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b"}, g.queryIDs(gc, "q", "SELECT * FROM c", nil)); d != "" {
		t.Fatalf("partition q after restart (-want +got):\n%s", d)
	}
	// The container's defaultTtl came back with it (CO-4).
	g.advance(60e9)
	if g.read(gc, "p", "a") != nil || g.read(gc, "q", "b") == nil {
		t.Fatal("TTLs after restart are wrong")
	}
}
