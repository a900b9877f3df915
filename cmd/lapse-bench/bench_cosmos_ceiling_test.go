package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCosmosCeilingAnswersTheScenarios serves the ceiling as
// --serve-cosmos-ceiling does, over HTTP and over HTTPS (--ceiling-tls),
// runs against it every cosmos scenario it answers, each of which checks
// what it reads, and stops it.
func TestCosmosCeilingAnswersTheScenarios(t *testing.T) {
	t.Run("http", func(t *testing.T) { testCosmosCeiling(t, "http") })
	t.Run("https", func(t *testing.T) { testCosmosCeiling(t, "https", "--ceiling-tls") })
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
