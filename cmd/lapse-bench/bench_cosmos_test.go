package main

import (
	"bytes"
	"context"
	"github.com/lapse-emulator/lapse/server"
	"os"
	"strconv"
	"strings"
	"testing"
)

// benchCosmosAll is the group cosmos in the order it runs.
var benchCosmosAll = []string{"cosmos-create", "cosmos-read", "cosmos-query-id", "cosmos-query-pk", "cosmos-upsert", "cosmos-replace"}

// cosmosURL is the plain-HTTP endpoint of m's Cosmos DB front-end.
func cosmosURL(m *server.Main) string {
	return listenerURL(m, "http", "cosmos") + "/"
}

// TestBenchCosmosOnLapse runs the Cosmos DB scenarios briefly against a
// lapse in the test, with one worker and with several, so that their code
// runs in CI; the figures are not checked, but each scenario checks what
// it reads, and every database it made is gone afterwards.
func TestBenchCosmosOnLapse(t *testing.T) {
	m := MustStart(t)
	for _, workers := range []int{1, 3} {
		t.Run("Workers"+strconv.Itoa(workers), func(t *testing.T) {
			got := MustRunBench(t, "--cosmos-url", cosmosURL(m), "--scenarios", "cosmos",
				"--items", "250", "--workers", strconv.Itoa(workers), "--runs", "2")
			for _, r := range got {
				if r.Unit != "ops/s" || r.Runs != 2 || !strings.Contains(r.Notes, strconv.Itoa(workers)+" worker") {
					t.Errorf("%s: %+v, want ops/s over 2 runs of %d workers", r.Scenario, r, workers)
				}
				t.Logf("%s", benchRow(r))
			}
			// Each scenario counts operations: cosmos-query-pk a tenth as many.
			checkBenchResults(t, map[string]benchResult{"cosmos-query-pk": got["cosmos-query-pk"]}, 25, "cosmos-query-pk")
			delete(got, "cosmos-query-pk")
			checkBenchResults(t, got, 250, "cosmos-create", "cosmos-read", "cosmos-query-id", "cosmos-upsert", "cosmos-replace")
		})
	}
	t.Run("WrongKey", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		args := []string{"--cosmos-url", cosmosURL(m), "--scenarios", "cosmos-create", "--cosmos-key", "d3Jvbmcga2V5"}
		if code := runBench(context.Background(), args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "connecting to --cosmos-url with --cosmos-key") ||
			!strings.Contains(stderr.String(), "401") {
			t.Errorf("exit code %d, stderr %q; want 1 and a 401", code, stderr.String())
		}
	})
	var ents []struct{ Name string }
	mustGetJSON(t, m, "/api/entities?protocol=cosmos", &ents)
	if len(ents) != 0 {
		t.Errorf("entities left: %v", ents)
	}
}

// BenchmarkCosmosScenarios runs each Cosmos DB scenario of lapse-bench
// against a lapse in the same process, durable (SQLite in a temporary
// folder), for profiles of client and server together:
//
//	go test ./cmd/lapse-bench -run XXX -bench CosmosScenarios/cosmos-create -benchtime 3x -cpuprofile cpu.out
//
// LAPSE_BENCH_ITEMS and LAPSE_BENCH_WORKERS change --items (10000) and
// --workers (1).
func BenchmarkCosmosScenarios(b *testing.B) {
	items, workers := "10000", "1"
	if v := os.Getenv("LAPSE_BENCH_ITEMS"); v != "" {
		items = v
	}
	if v := os.Getenv("LAPSE_BENCH_WORKERS"); v != "" {
		workers = v
	}
	m := MustStart(b, "--log-level", "warn")
	for _, name := range benchCosmosAll {
		b.Run(name, func(b *testing.B) {
			var sum float64
			for b.Loop() {
				r := MustRunBench(b, "--cosmos-url", cosmosURL(m), "--scenarios", name, "--items", items, "--workers", workers)[name]
				sum += *r.Value
			}
			b.ReportMetric(sum/float64(b.N), "ops/s")
		})
	}
}
