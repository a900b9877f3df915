package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// cosmosCrashDirEnv names the data folder of the child lapse that
// TestKillNineKeepsCreatedCosmosItems_EM3 kills.
const cosmosCrashDirEnv = "LAPSE_TEST_COSMOS_CRASH_DIR"

// rule: EM-3. A child process runs lapse; the parent creates a container,
// then eight azcosmos clients create items continuously, each CreateItem
// returning nil only after a 201; the child is killed with SIGKILL once
// about 1000 creates were answered, and started again on its data folder,
// three times over. Then every item a 201 answered must be there.
func TestKillNineKeepsCreatedCosmosItems_EM3(t *testing.T) {
	if dir := os.Getenv(cosmosCrashDirEnv); dir != "" {
		cosmosCrashChild(dir)
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
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillNineKeepsCreatedCosmosItems_EM3$", "-test.count=1")
	cmd.Env = append(os.Environ(), cosmosCrashDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var addr string
	sc := bufio.NewScanner(stdout)
	for addr == "" && sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "cosmos "); ok {
			addr = dialable(a)
		}
	}
	if addr == "" {
		t.Fatalf("round %d: the child did not report its Cosmos DB address", round)
	}
	go io.Copy(io.Discard, stdout)
	client := mustCosmosClientAt(t, addr)
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		done := n >= 1000
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
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

// cosmosCrashChild runs lapse on dir until it is killed.
func cosmosCrashChild(dir string) {
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags(serveArgs(dir), noEnv); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := m.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("cosmos %s\n", m.Cosmos.Addr())
	select {}
}
