package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// MustRunBench runs `lapse-bench` with args and --json, fails the test
// unless it exits 0, and returns its results by scenario.
func MustRunBench(tb testing.TB, args ...string) map[string]benchResult {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	if code := runBench(context.Background(), append(args, "--json"), &stdout, &stderr); code != 0 {
		tb.Fatalf("lapse-bench %q: exit code %d; stderr:\n%s", args, code, stderr.String())
	}
	out := map[string]benchResult{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var r benchResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			tb.Fatalf("a line that is not a result: %q: %v", sc.Text(), err)
		}
		out[r.Scenario] = r
	}
	return out
}

// checkBenchResults fails the test unless got has a measured result of
// messages for each of want.
func checkBenchResults(tb testing.TB, got map[string]benchResult, messages int, want ...string) {
	tb.Helper()
	var names []string
	for _, name := range want {
		r, ok := got[name]
		if !ok {
			continue
		}
		names = append(names, name)
		if r.Value == nil || *r.Value <= 0 || r.Messages != messages {
			tb.Errorf("%s: %+v, want a figure over %d messages", name, r, messages)
		}
	}
	if diff := cmp.Diff(want, names); diff != "" {
		tb.Errorf("scenarios (-want +got):\n%s", diff)
	}
}

// TestBenchAMQP1AndServiceBusOnLapse runs the AMQP 1.0 and Service Bus
// scenarios briefly against a lapse in the test, so that their code runs
// in CI; the figures are not checked.
func TestBenchAMQP1AndServiceBusOnLapse(t *testing.T) {
	m := MustStart(t)
	got := MustRunBench(t,
		"--url", listenerURL(m, "amqp", "amqp")+"/",
		"--servicebus-admin-url", listenerURL(m, "http", "servicebusAdmin"),
		"--control-url", controlURL(m),
		"--scenarios", "amqp1,servicebus", "--messages", "300", "--runs", "2")
	checkBenchResults(t, got, 300, append(benchAMQP1All, benchSBAll...)...)
	for _, r := range got {
		t.Logf("%s", benchRow(r))
	}
	// Every queue is gone, dead-letter queues with them.
	var ents []struct{ Name string }
	mustGetJSON(t, m, "/api/entities?protocol=servicebus", &ents)
	if len(ents) != 0 {
		t.Errorf("entities left: %v", ents)
	}
}

// TestBenchAMQP1OnRabbitMQ runs the AMQP 1.0 scenarios briefly against
// the RabbitMQ of the differential suite, with its rabbitmq_amqp1_0
// plugin (.ci/rabbitmq start), when LAPSE_DIFF_RABBITMQ_URL names it.
func TestBenchAMQP1OnRabbitMQ(t *testing.T) {
	url := os.Getenv("LAPSE_DIFF_RABBITMQ_URL")
	if url == "" {
		t.Skip("LAPSE_DIFF_RABBITMQ_URL is not set (.ci/rabbitmq start prints it)")
	}
	got := MustRunBench(t, "--url", url, "--scenarios", "amqp1", "--messages", "300")
	checkBenchResults(t, got, 300, benchAMQP1All...)
}
