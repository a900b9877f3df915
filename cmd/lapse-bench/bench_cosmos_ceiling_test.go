package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/lapse-emulator/lapse/cosmos"
)

// TestCosmosCeilingAnswersTheScenarios serves the ceiling as
// --serve-cosmos-ceiling does, over HTTP and over HTTPS (--ceiling-tls),
// on net/http's server and on the own HTTP/1.1 loop (--ceiling-own-http1),
// and with work on each request (--ceiling-work), runs against it every
// cosmos scenario it answers, each of which checks what it reads, and
// stops it.
func TestCosmosCeilingAnswersTheScenarios(t *testing.T) {
	t.Run("http", func(t *testing.T) { testCosmosCeiling(t, "http") })
	t.Run("https", func(t *testing.T) { testCosmosCeiling(t, "https", "--ceiling-tls") })
	t.Run("http-own", func(t *testing.T) { testCosmosCeiling(t, "http", "--ceiling-own-http1") })
	t.Run("https-own", func(t *testing.T) { testCosmosCeiling(t, "https", "--ceiling-tls", "--ceiling-own-http1") })
	t.Run("https-own-work", func(t *testing.T) {
		testCosmosCeiling(t, "https", "--ceiling-tls", "--ceiling-own-http1", "--ceiling-work", "20us")
	})
}

func testCosmosCeiling(t *testing.T, scheme string, flags ...string) {
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- runBench(ctx, append([]string{"--serve-cosmos-ceiling", "127.0.0.1:0"}, flags...), w, io.Discard)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading where the ceiling answers: %v", err)
	}
	go io.Copy(io.Discard, out)
	url := regexp.MustCompile(scheme + `://\S+/`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}
	scenarios := []string{"cosmos-create", "cosmos-read", "cosmos-query-id", "cosmos-upsert", "cosmos-replace"}
	// The ceiling is this process, which is then the server of
	// --server-pid too.
	got := MustRunBench(t, "--cosmos-url", url, "--scenarios", "cosmos-create,cosmos-read,cosmos-query-id,cosmos-upsert,cosmos-replace",
		"--items", "200", "--workers", "2", "--server-pid", strconv.Itoa(os.Getpid()))
	checkBenchResults(t, got, 200, scenarios...)
	for _, name := range scenarios {
		r := got[name]
		if r.ClientCPU == nil || *r.ClientCPU <= 0 || r.ServerCPU == nil || *r.ServerCPU < 0 ||
			!strings.Contains(r.Notes, "; CPU per op: client ") {
			t.Errorf("%s: %+v, want the CPU time per op of both sides", name, r)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after the context ended, want 0", code)
	}
}

// The ceiling answers an item with every header lapse answers it with, so
// that it bounds a server that says what lapse says: the headers cost both
// sides time to write and to read.
func TestCosmosCeilingSendsLapsesHeaders(t *testing.T) {
	names := func(url string) map[string]bool {
		client, tr, err := newBenchCosmosClient(benchConfig{CosmosURL: url, CosmosKey: cosmos.EmulatorKey, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.CloseIdleConnections()
		ctx := context.Background()
		if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
			t.Fatal(err)
		}
		db, _ := client.NewDatabase("db")
		if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
			t.Fatal(err)
		}
		c, _ := db.NewContainer("c")
		pk := azcosmos.NewPartitionKeyString("p")
		if _, err := c.CreateItem(ctx, pk, []byte(`{"id":"a","pk":"p"}`), nil); err != nil {
			t.Fatal(err)
		}
		resp, err := c.ReadItem(ctx, pk, "a", nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for k := range resp.RawResponse.Header {
			out[k] = true
		}
		return out
	}
	ceiling := httptest.NewServer(http.HandlerFunc(cosmosCeiling))
	defer ceiling.Close()
	fromLapse, fromCeiling := names(cosmosURL(MustStart(t))), names(ceiling.URL+"/")
	for k := range fromLapse {
		if !fromCeiling[k] {
			t.Errorf("lapse answers a read with %s, the ceiling does not", k)
		}
	}
	if len(fromLapse) < 10 {
		t.Errorf("lapse's read answer has only %v", fromLapse)
	}
}
