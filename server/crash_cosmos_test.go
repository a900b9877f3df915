package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// rule: EM-3. A child process runs lapse; the parent creates a container,
// then eight azcosmos clients create items continuously, each CreateItem
// returning nil only after a 201; the child is killed with SIGKILL once
// about 1000 creates were answered, and started again on its data folder,
// three times over. Then every item a 201 answered must be there.
func TestKillNineKeepsCreatedCosmosItems_EM3(t *testing.T) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		serveChild(dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	created := map[string]bool{}
	for round := range 3 {
		cosmosCrashRound(ctx, t, dir, round, created)
	}

	m := MustStart(t, "--data", dir)
	c, _ := MustCosmosClient(t, m).NewContainer("crash", "items")
	got := map[string]bool{}
	pager := c.NewQueryItemsPager("SELECT VALUE c.id FROM c", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 1000})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var id string
			if err := json.Unmarshal(it, &id); err != nil {
				t.Fatal(err)
			}
			got[id] = true
		}
	}
	lost := 0
	for id := range created {
		if !got[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d created items lost after kill -9", lost, len(created))
	}
	t.Logf("%d created items over 3 kills all kept (%d in the container)", len(created), len(got))
}

// cosmosCrashRound starts a child lapse on dir, creates the container in
// the first round, creates items from eight clients and kills the child
// once about 1000 more were answered 201, adding their ids to created.
func cosmosCrashRound(ctx context.Context, t *testing.T, dir string, round int, created map[string]bool) {
	t.Helper()
	child := startChild(t, dir)
	client := mustCosmosClientAt(t, child.addrs["cosmos"])
	if round == 0 {
		if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "crash"}, nil); err != nil {
			t.Fatal(err)
		}
		db, _ := client.NewDatabase("crash")
		if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "items",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := client.NewContainer("crash", "items")
	sending, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu  sync.Mutex
		n   int
		wg  sync.WaitGroup
		ids = make([][]string, 8)
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("r%d-w%d-%d", round, w, i)
				pk := fmt.Sprintf("p%d", i%10)
				doc := `{"id":"` + id + `","pk":"` + pk + `"}`
				if _, err := c.CreateItem(sending, azcosmos.NewPartitionKeyString(pk), []byte(doc), nil); err != nil {
					return
				}
				ids[w] = append(ids[w], id)
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	child.killWhen(1000, func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	})
	stop()
	wg.Wait()
	total := 0
	for _, ws := range ids {
		for _, id := range ws {
			created[id] = true
		}
		total += len(ws)
	}
	if total == 0 {
		t.Fatalf("round %d: no create was answered before the kill", round)
	}
}
