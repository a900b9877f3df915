package server

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "Config.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	defaults := Config{
		Data: "./lapse-data", AMQPAddr: ":5672", AMQPSAddr: ":5671", CosmosAddr: ":8081", ServiceBusAdminAddr: ":5300",
		ServiceBusWebSocketAddr: ":5443", RabbitMQManagementAddr: ":15672", ControlAddr: ":8080", Clock: "real", LogLevel: slog.LevelInfo,
		ServiceBusMaxMessageSize: 256 * 1024, CosmosConsistency: "Session", CosmosPartitionCount: 25,
	}
	with := func(f func(*Config)) Config {
		c := defaults
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want Config
	}{
		{"Defaults", nil, nil, defaults},
		{"EveryFlag", []string{
			"--data", ":memory:", "--amqp-addr", ":1", "--amqps-addr", ":6", "--cosmos-addr", ":2", "--servicebus-admin-addr", ":3",
			"--servicebus-websocket-addr", ":8", "--rabbitmq-management-addr", ":4", "--control-addr", "127.0.0.1:5", "--clock", "frozen",
			"--servicebus-config", file, "--rabbitmq-definitions", file, "--cosmos-config", file, "--log-level", "debug",
			"--cert-hosts", "lapse,ci.example", "--repair-journal",
		}, nil, Config{
			Data: ":memory:", AMQPAddr: ":1", AMQPSAddr: ":6", CertHosts: "lapse,ci.example", CosmosAddr: ":2", ServiceBusAdminAddr: ":3", ServiceBusWebSocketAddr: ":8", RabbitMQManagementAddr: ":4",
			ControlAddr: "127.0.0.1:5", Clock: "frozen", ServiceBusConfig: file, RabbitMQDefinitions: file,
			CosmosConfig: file, LogLevel: slog.LevelDebug, ServiceBusMaxMessageSize: 256 * 1024, RepairJournal: true,
			CosmosConsistency: "Session", CosmosPartitionCount: 25,
		}},
		{"EveryEnvironmentVariable", nil, map[string]string{
			"LAPSE_DATA": "/d", "LAPSE_AMQP_ADDR": ":1", "LAPSE_AMQPS_ADDR": ":6", "LAPSE_CERT_HOSTS": "lapse", "LAPSE_COSMOS_ADDR": ":2", "LAPSE_SERVICEBUS_ADMIN_ADDR": ":3",
			"LAPSE_SERVICEBUS_WEBSOCKET_ADDR": ":8", "LAPSE_RABBITMQ_MANAGEMENT_ADDR": ":4", "LAPSE_CONTROL_ADDR": ":5", "LAPSE_CLOCK": "frozen",
			"LAPSE_SERVICEBUS_CONFIG": file, "LAPSE_RABBITMQ_DEFINITIONS": file, "LAPSE_COSMOS_CONFIG": file,
			"LAPSE_LOG_LEVEL": "warn", "LAPSE_REPAIR_JOURNAL": "true",
		}, Config{
			Data: "/d", AMQPAddr: ":1", AMQPSAddr: ":6", CertHosts: "lapse", CosmosAddr: ":2", ServiceBusAdminAddr: ":3", ServiceBusWebSocketAddr: ":8", RabbitMQManagementAddr: ":4",
			ControlAddr: ":5", Clock: "frozen", ServiceBusConfig: file, RabbitMQDefinitions: file,
			CosmosConfig: file, LogLevel: slog.LevelWarn, ServiceBusMaxMessageSize: 256 * 1024, RepairJournal: true,
			CosmosConsistency: "Session", CosmosPartitionCount: 25,
		}},
		{"FlagBeatsEnvironment", []string{"--control-addr", ":7", "-log-level=error"},
			map[string]string{"LAPSE_CONTROL_ADDR": ":9", "LAPSE_LOG_LEVEL": "debug", "LAPSE_AMQP_ADDR": ":6"},
			with(func(c *Config) { c.ControlAddr, c.LogLevel, c.AMQPAddr = ":7", slog.LevelError, ":6" })},
		{"EmptyEnvironmentVariableIsUnset", nil, map[string]string{"LAPSE_DATA": ""}, defaults},
		{"BooleanFlagBeatsEnvironment", []string{"--repair-journal=false"}, map[string]string{"LAPSE_REPAIR_JOURNAL": "1"}, defaults},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMain()
			m.Stderr = io.Discard
			if err := m.ParseFlags(tc.args, func(k string) string { return tc.env[k] }); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, m.Config); diff != "" {
				t.Errorf("Config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlagsErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	for _, tc := range []struct {
		name  string
		args  []string
		env   map[string]string
		usage bool   // a usage error (exit code 2)
		want  string // in the message
	}{
		{"UnknownFlag", []string{"--port", "1"}, nil, true, "flag provided but not defined: -port"},
		{"Argument", []string{"now"}, nil, true, `unexpected argument "now"`},
		{"BadClock", []string{"--clock", "fast"}, nil, true, `--clock "fast": use "real" or "frozen"`},
		{"BadClockInEnvironment", nil, map[string]string{"LAPSE_CLOCK": "fast"}, true, `--clock "fast"`},
		{"BadLogLevel", []string{"--log-level", "loud"}, nil, true, `--log-level "loud"`},
		{"EmptyData", []string{"--data", ""}, nil, true, "--data must not be empty"},
		{"BadRepairJournalInEnvironment", nil, map[string]string{"LAPSE_REPAIR_JOURNAL": "please"}, true, `LAPSE_REPAIR_JOURNAL "please": use true or false`},
		{"MissingServiceBusConfig", []string{"--servicebus-config", missing}, nil, false, "--servicebus-config: open " + missing + ": no such file or directory"},
		{"MissingRabbitMQDefinitions", nil, map[string]string{"LAPSE_RABBITMQ_DEFINITIONS": missing}, false, "--rabbitmq-definitions: open " + missing},
		{"CosmosConfigIsAFolder", []string{"--cosmos-config", dir}, nil, false, "--cosmos-config: " + dir + " is a folder, not a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMain()
			m.Stderr = io.Discard
			err := m.ParseFlags(tc.args, func(k string) string { return tc.env[k] })
			if err == nil {
				t.Fatal("no error")
			}
			var ue *usageError
			if got := errors.As(err, &ue); got != tc.usage {
				t.Errorf("usage error = %v, want %v (%v)", got, tc.usage, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags([]string{"-h"}, noEnv); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

func TestParseFlagsUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	f := filepath.Join(t.TempDir(), "defs.json")
	if err := os.WriteFile(f, []byte("{}"), 0); err != nil {
		t.Fatal(err)
	}
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags([]string{"--rabbitmq-definitions", f}, noEnv); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("unreadable file: %v", err)
	}
}

// docs/cli.md has a row for every flag of lapse serve, with its
// environment variable.
func TestEveryFlagIsInTheDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	var level string
	n := 0
	newServeFlags(&c, &level, noEnv).VisitAll(func(f *flag.Flag) {
		n++
		for _, line := range strings.Split(string(doc), "\n") {
			if (strings.HasPrefix(line, "| `--"+f.Name+"`") || strings.HasPrefix(line, "| `--"+f.Name+" ")) &&
				strings.Contains(line, "| `"+envName(f.Name)+"` |") {
				return
			}
		}
		t.Errorf("docs/cli.md has no row for --%s with %s", f.Name, envName(f.Name))
	})
	if n < 15 {
		t.Fatalf("%d flags", n)
	}
}

// issue 26.7: --cosmos-consistency and --cosmos-partition-count, the
// official emulator's /Consistency and /PartitionCount, from the flags or
// LAPSE_COSMOS_CONSISTENCY and LAPSE_COSMOS_PARTITION_COUNT, with the
// emulator's defaults (Session, 25) and limit (250); a level is taken in
// any case and kept in the service's.
func TestIssue26_7_CosmosConsistencyAndPartitionCountFlags(t *testing.T) {
	type cosmosFlags struct {
		Consistency    string
		PartitionCount int
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want cosmosFlags
	}{
		{"Defaults", nil, nil, cosmosFlags{"Session", 25}},
		{"Flags", []string{"--cosmos-consistency", "Strong", "--cosmos-partition-count", "50"}, nil, cosmosFlags{"Strong", 50}},
		{"Environment", nil, map[string]string{"LAPSE_COSMOS_CONSISTENCY": "eventual", "LAPSE_COSMOS_PARTITION_COUNT": "250"},
			cosmosFlags{"Eventual", 250}},
		{"FlagBeatsEnvironment", []string{"--cosmos-consistency=consistentprefix", "--cosmos-partition-count=1"},
			map[string]string{"LAPSE_COSMOS_CONSISTENCY": "Strong", "LAPSE_COSMOS_PARTITION_COUNT": "50"}, cosmosFlags{"ConsistentPrefix", 1}},
		{"BoundedStaleness", []string{"--cosmos-consistency", "BOUNDEDSTALENESS"}, nil, cosmosFlags{"BoundedStaleness", 25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMain()
			m.Stderr = io.Discard
			if err := m.ParseFlags(tc.args, func(k string) string { return tc.env[k] }); err != nil {
				t.Fatal(err)
			}
			got := cosmosFlags{m.Config.CosmosConsistency, m.Config.CosmosPartitionCount}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"UnknownLevel", []string{"--cosmos-consistency", "Linearizable"}, nil, `--cosmos-consistency "Linearizable": use Strong, BoundedStaleness, Session, ConsistentPrefix or Eventual`},
		{"UnknownLevelInEnvironment", nil, map[string]string{"LAPSE_COSMOS_CONSISTENCY": "Most"}, `--cosmos-consistency "Most"`},
		{"NoPartitions", []string{"--cosmos-partition-count", "0"}, nil, "--cosmos-partition-count 0: use 1 to 250"},
		{"PastTheEmulatorsLimit", []string{"--cosmos-partition-count", "251"}, nil, "--cosmos-partition-count 251: use 1 to 250"},
		{"NotANumber", []string{"--cosmos-partition-count", "many"}, nil, `invalid value "many" for flag -cosmos-partition-count`},
		{"NotANumberInEnvironment", nil, map[string]string{"LAPSE_COSMOS_PARTITION_COUNT": "many"}, `LAPSE_COSMOS_PARTITION_COUNT "many": use a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMain()
			m.Stderr = io.Discard
			err := m.ParseFlags(tc.args, func(k string) string { return tc.env[k] })
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want a usage error that says %q", err, tc.want)
			}
		})
	}
}
