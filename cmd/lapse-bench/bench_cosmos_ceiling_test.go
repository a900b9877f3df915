package main

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"testing"
)

// TestCosmosCeilingAnswersTheScenarios serves the ceiling as
// --serve-cosmos-ceiling does, runs against it every cosmos scenario it
// answers, each of which checks what it reads, and stops it.
func TestCosmosCeilingAnswersTheScenarios(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- runBench(ctx, []string{"--serve-cosmos-ceiling", "127.0.0.1:0"}, w, io.Discard)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading where the ceiling answers: %v", err)
	}
	go io.Copy(io.Discard, out)
	url := regexp.MustCompile(`http://\S+/`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}
	scenarios := []string{"cosmos-create", "cosmos-read", "cosmos-query-id", "cosmos-upsert", "cosmos-replace"}
	got := MustRunBench(t, "--cosmos-url", url, "--scenarios", "cosmos-create,cosmos-read,cosmos-query-id,cosmos-upsert,cosmos-replace",
		"--items", "200", "--workers", "2")
	checkBenchResults(t, got, 200, scenarios...)
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after the context ended, want 0", code)
	}
}
