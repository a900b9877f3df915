package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lapseServer is the --server command of a lapse on a data folder of its
// own, the test binary run as lapse (runChild).
const lapseServer = "lapse={self} lapse --data {dir} --cosmos-addr 127.0.0.1:{port} --amqp-addr :0 --amqps-addr :0 --control-addr :0 " +
	"--servicebus-admin-addr :0 --servicebus-websocket-addr :0 --rabbitmq-management-addr :0"

// ceilingServer is the --server command of the ceiling over HTTPS.
const ceilingServer = "ceiling={self} --serve-cosmos-ceiling 127.0.0.1:{port} --ceiling-tls"

// TestSideBySideRunsEachServerEachRound starts a durable lapse and the
// ceiling as commands, two rounds, and checks that each ran every
// scenario each round, in an order that turns, with its CPU measured; that
// the ratios compare them round by round; and that the servers' folders
// are gone afterwards.
func TestSideBySideRunsEachServerEachRound(t *testing.T) {
	t.Setenv(childEnv, "1")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{"--server", lapseServer, "--server", ceilingServer,
		"--scenarios", "cosmos-create,cosmos-read", "--items", "1000", "--rounds", "2", "--reference", "ceiling", "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr.String())
	}
	type runKey struct {
		server, scenario string
		round            int
	}
	ran := map[runKey]int{}
	var ratios []sideRatio
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var probe map[string]any
		if err := json.Unmarshal(sc.Bytes(), &probe); err != nil {
			t.Fatalf("a line that is not JSON: %q", sc.Text())
		}
		if _, ok := probe["reference"]; ok {
			var r sideRatio
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			ratios = append(ratios, r)
			continue
		}
		var r sideRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		ran[runKey{r.Server, r.Scenario, r.Round}]++
		if r.Scenario == sideTotalCPU {
			if r.Value == nil || *r.Value <= 0 || r.Unit != "ms" {
				t.Errorf("%s, round %d: %+v, want the server's CPU time in ms", r.Server, r.Round, r.benchResult)
			}
			continue
		}
		if r.Value == nil || *r.Value <= 0 || r.Messages != 1000 || r.ServerCPU == nil || r.ServerSwitches == nil {
			t.Errorf("%s, round %d, %s: %+v, want a rate of 1000 items and the server's CPU", r.Server, r.Round, r.Scenario, r.benchResult)
		}
	}
	for _, s := range []string{"lapse", "ceiling"} {
		for _, scenario := range []string{"cosmos-create", "cosmos-read", sideTotalCPU} {
			for round := 1; round <= 2; round++ {
				if n := ran[runKey{s, scenario, round}]; n != 1 {
					t.Errorf("%s ran %s %d times in round %d, want once", s, scenario, n, round)
				}
			}
		}
	}
	if len(ran) != 12 {
		t.Errorf("%d results, want 12: %v", len(ran), ran)
	}
	var order []string
	for _, m := range regexp.MustCompile(`round (\d) of 2: (\w+)`).FindAllStringSubmatch(stderr.String(), -1) {
		order = append(order, m[1]+":"+m[2])
	}
	if diff := cmp.Diff([]string{"1:lapse", "1:ceiling", "2:ceiling", "2:lapse"}, order); diff != "" {
		t.Errorf("order of the servers (-want +got):\n%s", diff)
	}
	if len(ratios) != 3 {
		t.Fatalf("ratios %+v, want lapse / ceiling for each scenario and for the CPU time in all", ratios)
	}
	for i, r := range ratios {
		wantCPU := r.Scenario != sideTotalCPU // a CPU time has no CPU per op
		if r.Scenario != []string{"cosmos-create", "cosmos-read", sideTotalCPU}[i] || r.Server != "lapse" || r.Reference != "ceiling" || r.Rounds != 2 ||
			!(r.Min <= r.Ratio && r.Ratio <= r.Max && r.Min > 0) || (r.CPURatio != nil) != wantCPU || wantCPU && *r.CPURatio <= 0 {
			t.Errorf("ratio %+v, want lapse / ceiling over 2 rounds, with its CPU ratio: %t", r, wantCPU)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in the temporary folder: %v", left)
	}
}

// TestSideBySideTable checks the report without --json: each server's
// medians, then the ratios.
func TestSideBySideTable(t *testing.T) {
	t.Setenv(childEnv, "1")
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{"--server", strings.Replace(ceilingServer, "ceiling=", "a=", 1),
		"--server", strings.Replace(ceilingServer, "ceiling=", "b=", 1), "--scenarios", "cosmos-read", "--items", "1000", "--rounds", "1"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^cosmos-read +a +1  \d+ ops/s +\d+ µs$`),
		regexp.MustCompile(`(?m)^cosmos-read +b +1  \d+ ops/s +\d+ µs$`),
		regexp.MustCompile(`(?m)^ratios: the median of the per-round ratios`),
		regexp.MustCompile(`(?m)^cosmos-read +b / a +\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\] +\d+\.\d\d-\d+\.\d\d at \d+% +\d+\.\d\d$`),
		regexp.MustCompile(`(?m)^server-cpu-total +a +1  \d+\.\d ms +n/a$`),
		regexp.MustCompile(`(?m)^server-cpu-total +b / a +\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\] +\d+\.\d\d-\d+\.\d\d at \d+% +n/a$`),
		regexp.MustCompile(`(?m)^server-cpu-total: the server's CPU time in a round`),
	} {
		if !want.MatchString(stdout.String()) {
			t.Errorf("no line like %s in:\n%s", want, stdout.String())
		}
	}
}

// TestSideBySideServerThatFails checks that a server that ends before it
// listens fails its rounds with its name and what it printed, that the
// other servers' rounds still run and are reported, that the run exits 1
// saying how many rounds failed, and that no folder is left behind.
func TestSideBySideServerThatFails(t *testing.T) {
	t.Setenv(childEnv, "1")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{"--server", ceilingServer,
		"--server", "broken={self} --serve-cosmos-ceiling 127.0.0.1:{port} --no-such-flag {dir}", "--scenarios", "cosmos-read", "--items", "10",
		"--rounds", "2"}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit code %d, want 1; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"round 1, server broken: the server ended before it listened on 127.0.0.1:",
		"round 2, server broken: the server ended before it listened on 127.0.0.1:", "flag provided but not defined: -no-such-flag",
		"round 2 of 2: ceiling", "2 of 4 server rounds failed"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !regexp.MustCompile(`(?m)^cosmos-read\s+ceiling\s+2\s+\d`).MatchString(stdout.String()) {
		t.Errorf("the table lacks the ceiling's two rounds of cosmos-read:\n%s", stdout.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in the temporary folder: %v", left)
	}
}

// A server that ends at once because the port it was given was taken
// meanwhile is started again on another port, in a fresh folder, and its
// round goes on.
func TestSideBySideServerWhosePortWasTaken(t *testing.T) {
	t.Setenv(childEnv, "1")
	tmp := t.TempDir()
	marker := filepath.Join(t.TempDir(), "started")
	t.Setenv("TMPDIR", tmp)
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{"--server", ceilingServer,
		"--server", "busy={self} busy-once " + marker + " --serve-cosmos-ceiling 127.0.0.1:{port} --ceiling-tls",
		"--scenarios", "cosmos-read", "--items", "10", "--rounds", "1", "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr.String())
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the server was never refused a port: %v", err)
	}
	if !strings.Contains(stdout.String(), `"server":"busy","round":1,"scenario":"cosmos-read"`) {
		t.Errorf("no cosmos-read row of busy:\n%s", stdout.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in the temporary folder: %v", left)
	}
}

// TestSideRatios checks the arithmetic: ratios within each round, their
// median and range, only over rounds that measured both servers, and no
// CPU ratio when a round lacks a server's CPU.
func TestSideRatios(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	row := func(server string, round int, value float64, cpu *float64) sideRow {
		return sideRow{Server: server, Round: round, benchResult: benchResult{Scenario: "s", Value: f(value), Unit: "ops/s", ServerCPU: cpu}}
	}
	rows := []sideRow{
		row("ref", 1, 100, f(10)), row("x", 1, 50, f(20)), row("y", 1, 100, f(10)),
		row("ref", 2, 200, f(10)), row("x", 2, 300, f(5)), row("y", 2, 150, nil),
		row("ref", 3, 100, f(10)), row("x", 3, 120, f(10)),
		row("x", 4, 1000, f(1)), // no reference this round
	}
	got := sideRatios(rows, []string{"ref"})
	want := []sideRatio{
		{Scenario: "s", Server: "x", Reference: "ref", Rounds: 3, Ratio: 1.2, Min: 0.5, Max: 1.5,
			Low: 0.5, High: 1.5, Confidence: 0.75, CPURatio: f(1)},
		{Scenario: "s", Server: "y", Reference: "ref", Rounds: 2, Ratio: 0.875, Min: 0.75, Max: 1,
			Low: 0.75, High: 1, Confidence: 0.5},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sideRatios (-want +got):\n%s", diff)
	}
}

// TestMedianInterval checks the interval against the binomial
// distribution worked out by hand: the largest k whose order statistics
// k and n-k+1 hold the median with a probability of 95% or more.
func TestMedianInterval(t *testing.T) {
	for _, tc := range []struct {
		n, k       int
		confidence float64
	}{
		{1, 1, 0},
		{5, 1, 1 - 2.0/32},       // no interval reaches 95%: the whole range
		{8, 1, 1 - 2.0/256},      // k = 2 would be 1 - 2*9/256, below 95%
		{10, 2, 1 - 2*11.0/1024}, // k = 3 would be 1 - 2*56/1024
		{12, 3, 1 - 2*79.0/4096}, // 1 + 12 + 66 ways for 2 or fewer below
		{26, 8, 0.9710407257080078},
	} {
		sorted := make([]float64, tc.n)
		for i := range sorted {
			sorted[i] = float64(i + 1)
		}
		low, high, confidence := medianInterval(sorted)
		if low != float64(tc.k) || high != float64(tc.n-tc.k+1) || math.Abs(confidence-tc.confidence) > 1e-12 {
			t.Errorf("n=%d: [%v, %v] at %v, want [%d, %d] at %v", tc.n, low, high, confidence, tc.k, tc.n-tc.k+1, tc.confidence)
		}
	}
}
