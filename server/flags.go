package server

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/cosmos"
)

// Config is what `lapse serve` runs with: the flags of docs/cli.md, each also
// read from its LAPSE_* environment variable (flag > environment > default).
type Config struct {
	// Data is the data folder; ":memory:" keeps nothing.
	Data string
	// The listeners' addresses; ":0" picks a free port.
	AMQPAddr            string
	AMQPSAddr           string
	CosmosAddr          string
	ServiceBusAdminAddr string
	// ServiceBusWebSocketAddr serves what the service serves over HTTPS
	// on its port 443: AMQP over WebSockets and the administration API.
	ServiceBusWebSocketAddr string
	RabbitMQManagementAddr  string
	ControlAddr             string
	// Clock is "real", or "frozen" to start frozen at the current time.
	Clock string
	// Files that declare entities up front; "" for none. They are checked
	// to be readable now and will be applied by the protocol front-ends.
	ServiceBusConfig string
	// ServiceBusMaxMessageSize is the largest Service Bus message in bytes.
	ServiceBusMaxMessageSize int64
	RabbitMQDefinitions      string
	CosmosConfig             string
	// CosmosKey is the Cosmos DB account key; "" is the emulator's.
	CosmosKey string
	// CosmosConsistency is the Cosmos DB account's default consistency
	// level and CosmosPartitionCount its partition count, the official
	// emulator's /Consistency and /PartitionCount (Session and 25 unless
	// set).
	CosmosConsistency    string
	CosmosPartitionCount int
	// CertHosts are host names and addresses, comma-separated, that the
	// TLS certificate covers besides localhost, 127.0.0.1 and ::1.
	CertHosts string
	// RepairJournal opens a data folder whose journal is damaged before
	// its end, dropping what does not decode and logging it, instead of
	// refusing it (sqlitestore.Options.RepairJournal).
	RepairJournal bool
	// LogLevel is the level of the log written to stderr.
	LogLevel slog.Level
	// HTTPBodyTimeout bounds how long a request body may take to arrive on
	// every HTTP port; zero is httpserver.DefaultBodyTimeout. No flag sets
	// it: tests shorten it.
	HTTPBodyTimeout time.Duration
}

// usageError is a mistake on the command line (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// envName is the environment variable of a flag: --amqp-addr is LAPSE_AMQP_ADDR.
func envName(flagName string) string {
	return "LAPSE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// envString defines a string flag whose default comes from its environment
// variable when that is set and not empty.
func envString(fs *flag.FlagSet, getenv func(string) string, p *string, name, def, usage string) {
	env := envName(name)
	if v := getenv(env); v != "" {
		def = v
	}
	fs.StringVar(p, name, def, usage+" (env "+env+")")
}

// envInt64 is envString for a number; an environment value that is not one
// is left for the flag package to refuse.
func envInt64(fs *flag.FlagSet, getenv func(string) string, p *int64, name string, def int64, usage string) {
	env := envName(name)
	if v := getenv(env); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			def = n
		}
	}
	fs.Int64Var(p, name, def, usage+" (env "+env+")")
}

// envInt is envInt64 for an int; ParseFlags refuses an environment value
// that is not a number.
func envInt(fs *flag.FlagSet, getenv func(string) string, p *int, name string, def int, usage string) {
	env := envName(name)
	if v := getenv(env); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			def = n
		}
	}
	fs.IntVar(p, name, def, usage+" (env "+env+")")
}

// envBool is envString for a flag that is on or off; ParseFlags refuses an
// environment value that is not a boolean.
func envBool(fs *flag.FlagSet, getenv func(string) string, p *bool, name string, usage string) {
	env := envName(name)
	def := false
	if v := getenv(env); v != "" {
		if b, err := strconv.ParseBool(v); err == nil {
			def = b
		}
	}
	fs.BoolVar(p, name, def, usage+" (env "+env+")")
}

// newServeFlags returns the flag set of `lapse serve` writing into c.
func newServeFlags(c *Config, logLevel *string, getenv func(string) string) *flag.FlagSet {
	fs := flag.NewFlagSet("lapse serve", flag.ContinueOnError)
	envString(fs, getenv, &c.Data, "data", "./lapse-data", `data folder (one SQLite file inside); ":memory:" keeps nothing`)
	envString(fs, getenv, &c.AMQPAddr, "amqp-addr", ":5672", "AMQP address: 1.0 (Service Bus) and 0-9-1 (RabbitMQ)")
	envString(fs, getenv, &c.AMQPSAddr, "amqps-addr", ":5671", "AMQPS address: AMQP 1.0 and 0-9-1 over TLS, for clients that always use TLS")
	envString(fs, getenv, &c.CosmosAddr, "cosmos-addr", ":8081", "Cosmos DB REST address (HTTPS and plain HTTP on one port)")
	envString(fs, getenv, &c.ServiceBusAdminAddr, "servicebus-admin-addr", ":5300", "Service Bus administration address (ATOM API over HTTP and HTTPS on one port, GET /health)")
	envString(fs, getenv, &c.ServiceBusWebSocketAddr, "servicebus-websocket-addr", ":5443", "Service Bus AMQP over WebSockets address (wss://host:port/$servicebus/websocket, TLS with the AMQPS certificate; also the administration API)")
	envString(fs, getenv, &c.RabbitMQManagementAddr, "rabbitmq-management-addr", ":15672", "RabbitMQ management HTTP API address")
	envString(fs, getenv, &c.ControlAddr, "control-addr", ":8080", "control API and /healthz address")
	envString(fs, getenv, &c.Clock, "clock", "real", `"real", or "frozen" to start frozen at the current time`)
	envString(fs, getenv, &c.ServiceBusConfig, "servicebus-config", "", "Service Bus emulator Config.json declaring entities")
	envInt64(fs, getenv, &c.ServiceBusMaxMessageSize, "servicebus-max-message-size", 256*1024, "largest Service Bus message in bytes (256 KB, the standard tier's limit)")
	envString(fs, getenv, &c.RabbitMQDefinitions, "rabbitmq-definitions", "", "RabbitMQ definitions.json to declare at start (users, vhosts, permissions, policies, queues, exchanges, bindings)")
	envString(fs, getenv, &c.CosmosConfig, "cosmos-config", "", "JSON file of Cosmos databases and containers")
	envString(fs, getenv, &c.CosmosKey, "cosmos-key", "", "Cosmos DB account key, base64 (default: the official emulator's well-known key)")
	envString(fs, getenv, &c.CosmosConsistency, "cosmos-consistency", "Session", "Cosmos DB account's default consistency level: Strong, BoundedStaleness, Session, ConsistentPrefix or Eventual (the official emulator's /Consistency)")
	envInt(fs, getenv, &c.CosmosPartitionCount, "cosmos-partition-count", cosmos.DefaultPartitionCount, fmt.Sprintf("Cosmos DB partition count, 1 to %d (the official emulator's /PartitionCount)", cosmos.MaxPartitionCount))
	envString(fs, getenv, &c.CertHosts, "cert-hosts", "", "more host names or addresses, comma-separated, for the TLS certificate (e.g. a compose service name)")
	envBool(fs, getenv, &c.RepairJournal, "repair-journal", "open a data folder whose journal is damaged before its end (which stops lapse otherwise), dropping what does not decode: lapse logs what it drops and keeps a copy of the journal")
	envString(fs, getenv, logLevel, "log-level", "info", "debug, info, warn or error")
	return fs
}

// ParseFlags reads the flags of `lapse serve` (args without the program
// name nor the subcommand) and the environment through getenv into
// m.Config, and checks them. -h gives flag.ErrHelp.
func (m *Main) ParseFlags(args []string, getenv func(string) string) error {
	var c Config
	var level string
	fs := newServeFlags(&c, &level, getenv)
	pos, err := parseFlags(fs, args, false, m.Stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	if err := c.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return &usageError{fmt.Sprintf("--log-level %q: use debug, info, warn or error", level)}
	}
	if c.Clock != "real" && c.Clock != "frozen" {
		return &usageError{fmt.Sprintf(`--clock %q: use "real" or "frozen"`, c.Clock)}
	}
	if v := getenv(envName("repair-journal")); v != "" {
		if _, err := strconv.ParseBool(v); err != nil {
			return &usageError{fmt.Sprintf("%s %q: use true or false", envName("repair-journal"), v)}
		}
	}
	consistency, err := cosmos.ParseConsistencyLevel(c.CosmosConsistency)
	if err != nil {
		return &usageError{fmt.Sprintf("--cosmos-consistency %q: use Strong, BoundedStaleness, Session, ConsistentPrefix or Eventual", c.CosmosConsistency)}
	}
	c.CosmosConsistency = consistency
	if v := getenv(envName("cosmos-partition-count")); v != "" {
		if _, err := strconv.Atoi(v); err != nil {
			return &usageError{fmt.Sprintf("%s %q: use a number", envName("cosmos-partition-count"), v)}
		}
	}
	if err := cosmos.CheckPartitionCount(c.CosmosPartitionCount); err != nil {
		return &usageError{fmt.Sprintf("--cosmos-partition-count %d: use 1 to %d", c.CosmosPartitionCount, cosmos.MaxPartitionCount)}
	}
	if c.Data == "" {
		return &usageError{"--data must not be empty"}
	}
	if c.ServiceBusMaxMessageSize < 1024 {
		return &usageError{fmt.Sprintf("--servicebus-max-message-size %d: use at least 1024 bytes", c.ServiceBusMaxMessageSize)}
	}
	for _, f := range []struct{ name, path string }{
		{"servicebus-config", c.ServiceBusConfig},
		{"rabbitmq-definitions", c.RabbitMQDefinitions},
		{"cosmos-config", c.CosmosConfig},
	} {
		if err := checkReadable(f.path); err != nil {
			return fmt.Errorf("--%s: %w", f.name, err)
		}
	}
	m.Config = c
	return nil
}

// parseFlags parses args with fs and returns the positional arguments.
// With interleaved, flags may also follow them (`lapse clock advance 15m
// --control-url U`); "--" ends the flags. The flag package's own messages
// are kept for -h, which prints the flags to help and gives flag.ErrHelp;
// other mistakes become a usageError, which the caller prints.
func parseFlags(fs *flag.FlagSet, args []string, interleaved bool, help io.Writer) ([]string, error) {
	var out bytes.Buffer
	fs.SetOutput(&out)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				_, _ = io.Copy(help, &out)
				return nil, err
			}
			return nil, &usageError{err.Error()}
		}
		// flag stopped at the end, after "--", or at a non-flag argument.
		rest := fs.Args()
		dashes := len(rest) < len(args) && args[len(args)-len(rest)-1] == "--"
		if !interleaved || len(rest) == 0 || dashes {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// checkReadable checks that path, if given, is a file lapse can read.
func checkReadable(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a folder, not a file", path)
	}
	var b [1]byte
	if _, err := f.Read(b[:]); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
