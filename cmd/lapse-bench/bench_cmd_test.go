package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lapse-emulator/lapse/cosmos"
)

// benchAll is every AMQP 0-9-1 scenario (the group all) in the order they run.
var benchAll = []string{
	"transient-autoack", "manual-ack-prefetch100", "persistent-confirms",
	"persistent-confirm-each", "ttl-deadletter", "ttl-deadletter-consumed", "memory",
}

// benchAMQP1All and benchSBAll are the groups amqp1 and servicebus.
var (
	benchAMQP1All = []string{"amqp1-send", "amqp1-receive-complete", "amqp1-roundtrip"}
	benchSBAll    = []string{"sb-sdk", "sb-ttl-deadletter", "sb-ttl-deadletter-realtime",
		"sb-sessions-1", "sb-sessions-100", "sb-sessions-10000",
		"sb-amqp1-sessions-1", "sb-amqp1-sessions-100", "sb-amqp1-sessions-10000"}
)

func TestParseBenchFlags(t *testing.T) {
	defaults := benchConfig{
		URL: "amqp://guest:guest@localhost:5672/", Messages: 100000, Size: 100, Scenarios: benchAll, Runs: 1,
		AMQP1Auth: "plain", AdminURL: "http://localhost:5300", ControlURL: "http://localhost:8080",
		CosmosURL: "http://localhost:8081/", CosmosKey: cosmos.EmulatorKey, Items: 10000, Workers: 1, Rounds: 3,
	}
	for _, tc := range []struct {
		name string
		args []string
		want benchConfig
	}{
		{"Defaults", nil, defaults},
		{"EveryFlag", []string{
			"--url", "amqp://u:p@h:1/v", "--messages", "10", "--size", "0", "--scenarios", "memory, transient-autoack",
			"--server-pid", "42", "--json", "--runs", "3", "--amqp1-auth", "cbs",
			"--servicebus-admin-url", "http://h:2", "--control-url", "http://h:3",
			"--cosmos-url", "https://h:4/", "--cosmos-key", "a2V5", "--items", "7", "--workers", "8",
		}, benchConfig{
			URL: "amqp://u:p@h:1/v", Messages: 10, Size: 0, Scenarios: []string{"memory", "transient-autoack"},
			ServerPID: 42, JSON: true, Runs: 3, AMQP1Auth: "cbs", AdminURL: "http://h:2", ControlURL: "http://h:3",
			CosmosURL: "https://h:4/", CosmosKey: "a2V5", Items: 7, Workers: 8, Rounds: 3,
		}},
		{"CBSWithoutUser", []string{"--url", "amqp://h:1/", "--scenarios", "servicebus,amqp1"}, benchConfig{
			URL: "amqp://h:1/", Messages: 100000, Size: 100, Scenarios: append(slices.Clone(benchSBAll), benchAMQP1All...), Runs: 1,
			AMQP1Auth: "cbs", AdminURL: "http://localhost:5300", ControlURL: "http://localhost:8080",
			CosmosURL: "http://localhost:8081/", CosmosKey: cosmos.EmulatorKey, Items: 10000, Workers: 1, Rounds: 3,
		}},
		{"Groups", []string{"--scenarios", "amqp1,amqp091,amqp1-send"}, func() benchConfig {
			c := defaults
			c.Scenarios = append(slices.Clone(benchAMQP1All), benchAll...)
			return c
		}()},
		{"CosmosGroup", []string{"--scenarios", "cosmos,cosmos-read", "--workers", "8"}, func() benchConfig {
			c := defaults
			c.Scenarios, c.Workers = benchCosmosAll, 8
			return c
		}()},
		{"CosmosScenarioAndGroup", []string{"--scenarios", "cosmos-query-pk,cosmos"}, func() benchConfig {
			c := defaults
			c.Scenarios = []string{"cosmos-query-pk", "cosmos-create", "cosmos-read", "cosmos-query-id", "cosmos-upsert", "cosmos-replace"}
			return c
		}()},
		{"SideBySide", []string{"--server", "a=lapse --cosmos-addr 127.0.0.1:{port}", "--server", " b = cosmium  -Port {port} ",
			"--rounds", "10", "--workers", "8"}, func() benchConfig {
			c := defaults
			c.Scenarios, c.Workers, c.Rounds = benchCosmosAll, 8, 10
			c.Servers = sideServers{{"a", []string{"lapse", "--cosmos-addr", "127.0.0.1:{port}"}}, {"b", []string{"cosmium", "-Port", "{port}"}}}
			c.References = []string{"a"}
			return c
		}()},
		{"SideBySideReferences", []string{"--server", "a=x {port}", "--server", "b=y {port}", "--server", "c=z {port}",
			"--scenarios", "cosmos-read", "--reference", "c, b,c"}, func() benchConfig {
			c := defaults
			c.Scenarios = []string{"cosmos-read"}
			c.Servers = sideServers{{"a", []string{"x", "{port}"}}, {"b", []string{"y", "{port}"}}, {"c", []string{"z", "{port}"}}}
			c.References = []string{"c", "b"}
			return c
		}()},
		{"OrderKeptOnceEach", []string{"-scenarios=memory,all,memory"}, func() benchConfig {
			c := defaults
			c.Scenarios = append([]string{"memory"}, benchAll[:len(benchAll)-1]...)
			return c
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseBenchFlags(tc.args, new(bytes.Buffer))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("benchConfig (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseBenchFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"UnknownScenario", []string{"--scenarios", "transient-autoack,fast"}, `unknown scenario "fast"`},
		{"EmptyScenario", []string{"--scenarios", ""}, `unknown scenario ""`},
		{"NoMessages", []string{"--messages", "0"}, "--messages must be at least 1"},
		{"NegativeSize", []string{"--size", "-1"}, "--size must not be negative"},
		{"NoRuns", []string{"--runs", "0"}, "--runs must be at least 1"},
		{"NegativePID", []string{"--server-pid", "-3"}, "--server-pid must be a process id"},
		{"NotANumber", []string{"--messages", "many"}, `invalid value "many"`},
		{"UnknownFlag", []string{"--queues", "3"}, "flag provided but not defined: -queues"},
		{"Argument", []string{"now"}, `unexpected argument "now"`},
		{"UnknownAuth", []string{"--amqp1-auth", "sasl"}, `--amqp1-auth "sasl": use cbs or plain`},
		{"NoItems", []string{"--items", "0"}, "--items must be at least 1"},
		{"NoWorkers", []string{"--workers", "0"}, "--workers must be at least 1"},
		{"CosmosURLWithoutScheme", []string{"--cosmos-url", "localhost:8081"}, `--cosmos-url "localhost:8081": use http://HOST:PORT/`},
		{"CosmosURLNotHTTP", []string{"--cosmos-url", "amqp://localhost:8081/"}, `--cosmos-url "amqp://localhost:8081/"`},
		{"CosmosKeyNotBase64", []string{"--cosmos-key", "not a key"}, "--cosmos-key must be an account key in base64"},
		{"CosmosKeyEmpty", []string{"--cosmos-key", ""}, "--cosmos-key must be an account key in base64"},
		{"OneServer", []string{"--server", "a=x {port}"}, "--server: give two servers or more"},
		{"ServerWithoutCommand", []string{"--server", "a="}, "use NAME=COMMAND"},
		{"ServerWithoutName", []string{"--server", "x {port}"}, "use NAME=COMMAND"},
		{"ServerWithoutPort", []string{"--server", "a=x --port 1"}, `server "a": its command must serve on {port}`},
		{"ServerTwice", []string{"--server", "a=x {port}", "--server", "a=y {port}"}, `server "a" given twice`},
		{"ServerNameWithComma", []string{"--server", "a,b=x {port}"}, `server name "a,b"`},
		{"ServerAndRuns", []string{"--server", "a=x {port}", "--server", "b=y {port}", "--runs", "3"}, "--runs does not go with --server"},
		{"ServerAndURL", []string{"--server", "a=x {port}", "--server", "b=y {port}", "--cosmos-url", "http://h:1/"}, "--cosmos-url does not go with --server"},
		{"ServerAndPID", []string{"--server", "a=x {port}", "--server", "b=y {port}", "--server-pid", "1"}, "--server-pid does not go with --server"},
		{"ServerAndAMQP", []string{"--server", "a=x {port}", "--server", "b=y {port}", "--scenarios", "cosmos-read,memory"}, "--server runs cosmos scenarios only, not memory"},
		{"UnknownReference", []string{"--server", "a=x {port}", "--server", "b=y {port}", "--reference", "c"}, `--reference "c" is not a --server`},
		{"RoundsWithoutServers", []string{"--rounds", "3"}, "--rounds compares servers: give them with --server"},
		{"ReferenceWithoutServers", []string{"--reference", "a"}, "--reference compares servers"},
		{"NoRounds", []string{"--rounds", "0"}, "--rounds must be at least 1"},
		{"ServiceBusWithPlain", []string{"--scenarios", "sb-sdk"}, "sb-sdk needs lapse's Service Bus: --amqp1-auth cbs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseBenchFlags(tc.args, new(bytes.Buffer))
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseBenchFlagsHelp(t *testing.T) {
	var help bytes.Buffer
	if _, err := parseBenchFlags([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("error %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"-server-pid", "beam.smp", "-scenarios", "ttl-deadletter", "-amqp1-auth", "/amq/queue/", "sb-ttl-deadletter",
		"-cosmos-url", "-cosmos-key", "-items", "-workers", "cosmos-query-pk",
		"-server", "{port}", "{dir}", "{self}", "-rounds", "-reference"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
}

func TestRunBenchExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"Help", []string{"-h"}, 0, "-messages"},
		{"Mistake", []string{"--runs", "0"}, 2, "lapse-bench: --runs must be at least 1"},
		{"BadURL", []string{"--url", "http://localhost:1/"}, 1, "lapse-bench: connecting to --url"},
		{"BadCosmosURL", []string{"--cosmos-url", "http://127.0.0.1:1/", "--scenarios", "cosmos"}, 1, "lapse-bench: connecting to --cosmos-url"},
		{"BadAMQP1URL", []string{"--url", "amqp://127.0.0.1:1/", "--scenarios", "amqp1"}, 1, "lapse-bench: connecting to --url with AMQP 1.0 (--amqp1-auth cbs)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runBench(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr.String())
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout: %q, want nothing", stdout.String())
			}
		})
	}
}

// benchFloat returns a pointer to v.
func benchFloat(v float64) *float64 { return &v }

func TestBenchTable(t *testing.T) {
	rows := []benchResult{
		{Scenario: "transient-autoack", Messages: 100000, Seconds: 0.71234, Value: benchFloat(140382.6), Unit: "msg/s", Notes: "autoAck"},
		{Scenario: "persistent-confirm-each", Messages: 10000, Seconds: 1.1, Value: benchFloat(9090.9), Unit: "msg/s"},
		{Scenario: "ttl-deadletter", Messages: 100000, Seconds: 3.25, Value: benchFloat(70.44), Unit: "ms", Notes: "first to last 1.2 s"},
		{Scenario: "memory", Messages: 100000, Seconds: 2, Value: benchFloat(4012.3), Unit: "bytes/msg"},
		{Scenario: "memory", Messages: 100000, Seconds: 2, Unit: "bytes/msg", Notes: "n/a without --server-pid"},
	}
	got := []string{benchHeader()}
	for _, r := range rows {
		got = append(got, benchRow(r))
	}
	want := []string{
		"scenario                  messages   seconds  result           notes",
		"transient-autoack           100000     0.712  140383 msg/s     autoAck",
		"persistent-confirm-each      10000     1.100  9091 msg/s",
		"ttl-deadletter              100000     3.250  70.4 ms          first to last 1.2 s",
		"memory                      100000     2.000  4012 bytes/msg",
		"memory                      100000     2.000  n/a              n/a without --server-pid",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestBenchResultJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    benchResult
		want string
	}{
		{"Rate", benchResult{Scenario: "transient-autoack", Messages: 5, Seconds: 0.5, Value: benchFloat(10), Unit: "msg/s", Runs: 1},
			`{"scenario":"transient-autoack","messages":5,"seconds":0.5,"value":10,"unit":"msg/s","runs":1}`},
		{"NotMeasured", benchResult{Scenario: "memory", Messages: 5, Seconds: 1, Unit: "bytes/msg", Notes: "n/a", Runs: 1},
			`{"scenario":"memory","messages":5,"seconds":1,"value":null,"unit":"bytes/msg","notes":"n/a","runs":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("JSON\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestMedianResult(t *testing.T) {
	run := func(secs, v float64, notes string) benchResult {
		return benchResult{Scenario: "s", Messages: 10, Seconds: secs, Value: benchFloat(v), Unit: "msg/s", Notes: notes}
	}
	for _, tc := range []struct {
		name string
		runs []benchResult
		want benchResult
	}{
		{"One", []benchResult{run(2, 5, "a")}, benchResult{Scenario: "s", Messages: 10, Seconds: 2, Value: benchFloat(5), Unit: "msg/s", Notes: "a", Runs: 1}},
		{"Odd", []benchResult{run(1, 10, "fast"), run(3, 3.3, "slow"), run(2, 5, "mid")},
			benchResult{Scenario: "s", Messages: 10, Seconds: 2, Value: benchFloat(5), Unit: "msg/s", Notes: "mid; median of 3 runs, 3 msg/s to 10 msg/s", Runs: 3}},
		{"Even", []benchResult{run(1, 10, ""), run(4, 2, ""), run(3, 4, ""), run(2, 6, "")},
			benchResult{Scenario: "s", Messages: 10, Seconds: 2.5, Value: benchFloat(5), Unit: "msg/s", Notes: "median of 4 runs, 2 msg/s to 10 msg/s", Runs: 4}},
		{"NotMeasured", []benchResult{{Scenario: "memory", Seconds: 2, Notes: "n/a"}, {Scenario: "memory", Seconds: 1, Notes: "n/a"}},
			benchResult{Scenario: "memory", Seconds: 1.5, Notes: "n/a", Runs: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, medianResult(tc.runs)); diff != "" {
				t.Errorf("median (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tbeam.smp\nVmPeak:\t 4000000 kB\nVmRSS:\t  126744 kB\nRssAnon:\t   90000 kB\n"
	got, err := parseVmRSS(status)
	if err != nil || got != 126744*1024 {
		t.Errorf("parseVmRSS = %d, %v; want %d", got, err, 126744*1024)
	}
	for _, bad := range []string{"Name:\tkthreadd\n", "VmRSS:\t12 MB\n", "VmRSS:\tlots kB\n"} {
		if _, err := parseVmRSS(bad); err == nil {
			t.Errorf("parseVmRSS(%q) succeeded", bad)
		}
	}
}
