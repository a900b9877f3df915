package main

// lapse-bench runs the same AMQP 0-9-1 load against any broker, so lapse's
// RabbitMQ front-end can be measured beside a real RabbitMQ, and the same
// AMQP 1.0 load against lapse's Service Bus front-end and RabbitMQ's
// rabbitmq_amqp1_0 plugin, and the same Cosmos DB load against lapse's
// Cosmos DB front-end and other emulators. The scenarios themselves are in
// bench_scenarios.go (AMQP 0-9-1), bench_amqp1.go (AMQP 1.0 with go-amqp),
// bench_servicebus.go (lapse only: the Service Bus SDK and the clock) and
// bench_cosmos.go (the azcosmos SDK).

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/cosmos"
)

// benchConfig is what `lapse-bench` was asked to do.
type benchConfig struct {
	URL       string
	Messages  int
	Size      int
	Scenarios []string // in the order they run, each once
	ServerPID int      // 0 when the broker's memory is not measured
	JSON      bool
	Runs      int
	// AMQP1Auth is how the AMQP 1.0 scenarios log in, and so which broker
	// they expect: benchAuthCBS for a Service Bus (lapse), benchAuthPlain
	// for RabbitMQ's AMQP 1.0 plugin.
	AMQP1Auth string
	// AdminURL is the Service Bus administration API (ATOM) that makes the
	// queues of the AMQP 1.0 and Service Bus scenarios with benchAuthCBS.
	AdminURL string
	// ControlURL is lapse's control API, whose clock sb-ttl-deadletter moves.
	ControlURL string
	// CosmosURL and CosmosKey are the Cosmos DB account of the cosmos
	// scenarios, which write Items items from Workers workers.
	CosmosURL string
	CosmosKey string
	Items     int
	Workers   int
	// CeilingAddr, when set, makes lapse-bench serve the Cosmos DB ceiling
	// there instead of running scenarios (bench_cosmos_ceiling.go).
	CeilingAddr string
	// CeilingTLS makes the ceiling answer over HTTPS, with a certificate
	// of its own, as lapse's and the other emulators' Cosmos DB ports do.
	CeilingTLS bool
	// CeilingOwnHTTP1 makes the ceiling serve with httpserver's own
	// HTTP/1.1 loop, lapse's, rather than net/http's server.
	CeilingOwnHTTP1 bool
	// CeilingWork is CPU time the ceiling spends on each request before
	// it answers: a server's own time per request, to see what it costs
	// the client's rate.
	CeilingWork time.Duration
	// Servers, when set, makes lapse-bench start them itself and run the
	// scenarios against each in turn, Rounds times, and compare them with
	// References (bench_side.go).
	Servers    sideServers
	Rounds     int
	References []string
}

// The values of --amqp1-auth.
const (
	benchAuthCBS   = "cbs"
	benchAuthPlain = "plain"
)

// benchGroups are the names --scenarios takes for a set of scenarios, by
// the kind of their scenarios; all is the AMQP 0-9-1 set, as it was before
// the others came.
var benchGroups = map[string]benchKind{
	"all": benchAMQP091, "amqp091": benchAMQP091, "amqp1": benchAMQP1, "servicebus": benchServiceBus, "cosmos": benchCosmos,
}

// benchResult is one scenario's figure: Value in Unit (nil when it could
// not be measured), over Messages messages that took Seconds.
type benchResult struct {
	Scenario string   `json:"scenario"`
	Messages int      `json:"messages"`
	Seconds  float64  `json:"seconds"`
	Value    *float64 `json:"value"`
	Unit     string   `json:"unit"`
	Notes    string   `json:"notes,omitempty"`
	Runs     int      `json:"runs"`
	// ClientCPU and ServerCPU are the CPU time lapse-bench and the
	// server (--server-pid) used per operation, in microseconds, where
	// the scenario measures them (bench_cpu.go).
	ClientCPU *float64 `json:"client_cpu_us_per_op,omitempty"`
	ServerCPU *float64 `json:"server_cpu_us_per_op,omitempty"`
	// ServerSwitches is how many times per operation the server's
	// threads were switched out of their CPU (bench_cpu.go).
	ServerSwitches *float64 `json:"server_switches_per_op,omitempty"`
}

// benchGOGC is the garbage collector's target of lapse-bench's clients
// unless GOGC says otherwise. A load generator should not be what a figure
// measures: go-amqp allocates two 5,000-slot queues for each link it
// attaches, and with Go's default of 100 the client's own collections cost
// sb-amqp1-sessions-10000 about a tenth of its rate on two cores, while
// amqp1-roundtrip, its reference, moved within its noise.
const benchGOGC = 400

// runBench runs `lapse-bench [flags]` and returns the exit code: 0 when
// every scenario ran, 1 when one failed, 2 for a mistake on the command line.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseBenchFlags(args, stderr)
	var ue *usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "lapse-bench: %s (lapse-bench -h lists the flags)\n", oneLine(err))
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "lapse-bench: %s\n", oneLine(err))
		return 1
	}
	if c.CeilingAddr != "" {
		if err := serveCosmosCeiling(ctx, c.CeilingAddr, c.CeilingTLS, c.CeilingOwnHTTP1, c.CeilingWork, stdout); err != nil {
			fmt.Fprintf(stderr, "lapse-bench: --serve-cosmos-ceiling: %s\n", oneLine(err))
			return 1
		}
		return 0
	}
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(benchGOGC))
	}
	if len(c.Servers) > 0 {
		return runSideBySide(ctx, c, stdout, stderr)
	}
	if err := benchPreflight(ctx, c); err != nil {
		fmt.Fprintf(stderr, "lapse-bench: %s\n", oneLine(err))
		return 1
	}
	emit := func(r benchResult) { fmt.Fprintln(stdout, benchRow(r)) }
	if c.JSON {
		enc := json.NewEncoder(stdout)
		emit = func(r benchResult) { _ = enc.Encode(r) }
	} else {
		fmt.Fprintln(stdout, benchHeader())
	}
	code := 0
	byName := benchScenariosByName()
	for _, name := range c.Scenarios {
		s := byName[name]
		n := c.Runs
		if s.once {
			n = 1
		}
		var runs []benchResult
		for range n {
			r, err := s.run(ctx, c)
			if err != nil {
				if ctx.Err() != nil {
					why := ""
					if err != ctx.Err() {
						why = ": " + oneLine(err)
					}
					fmt.Fprintf(stderr, "lapse-bench: %s: interrupted%s\n", s.name, why)
					return 1
				}
				fmt.Fprintf(stderr, "lapse-bench: %s: %s\n", s.name, oneLine(err))
				code = 1
				break
			}
			r.Scenario = s.name
			runs = append(runs, r)
		}
		if len(runs) == n {
			r := medianResult(runs)
			if n < c.Runs {
				r.Notes = strings.TrimPrefix(r.Notes+"; run once whatever --runs says", "; ")
			}
			emit(r)
		}
	}
	return code
}

// benchScenariosByName is benchScenarios by their names.
func benchScenariosByName() map[string]benchScenario {
	byName := map[string]benchScenario{}
	for _, s := range benchScenarios() {
		byName[s.name] = s
	}
	return byName
}

// parseBenchFlags parses the flags of `lapse-bench`.
func parseBenchFlags(args []string, stderr io.Writer) (benchConfig, error) {
	var names []string
	kinds := map[string]benchKind{}
	for _, s := range benchScenarios() {
		names = append(names, s.name)
		kinds[s.name] = s.kind
	}
	c := benchConfig{}
	fs := flag.NewFlagSet("lapse-bench", flag.ContinueOnError)
	fs.StringVar(&c.URL, "url", "amqp://guest:guest@localhost:5672/", "AMQP URL of the broker to load (0-9-1, and 1.0 for the amqp1 and servicebus scenarios)")
	fs.IntVar(&c.Messages, "messages", 100000, "messages per scenario (persistent-confirm-each sends a tenth of them)")
	fs.IntVar(&c.Size, "size", 100, "message body size in bytes")
	scenarios := fs.String("scenarios", "all", "comma-separated scenarios to run in that order: "+strings.Join(names, ", ")+",\n"+
		"or a group of them: all (the AMQP 0-9-1 ones, also named amqp091), amqp1 (AMQP 1.0 with go-amqp,\n"+
		"against lapse or RabbitMQ's rabbitmq_amqp1_0 plugin) or servicebus (lapse only: the azservicebus SDK,\n"+
		"sb-ttl-deadletter, which moves lapse's clock forward through --control-url, and\n"+
		"sb-ttl-deadletter-realtime, which needs that clock running; sb-sessions-N, sb-sdk on a queue that\n"+
		"requires sessions, N of them, accepted next, and sb-amqp1-sessions-N, amqp1-roundtrip so), or cosmos (the azcosmos SDK against\n"+
		"--cosmos-url: point creates, reads and upserts, queries by id and by partition key)")
	fs.IntVar(&c.ServerPID, "server-pid", 0, "process id of the broker, whose VmRSS the memory scenario reads from /proc\n"+
		"(for RabbitMQ the pid of beam.smp: pgrep beam.smp; without it memory reports n/a).\n"+
		"Brokers keep and reuse memory they freed: for a true figure, run memory first on a fresh broker\n"+
		"(--scenarios memory,all); it runs once whatever --runs says.\n"+
		"With it, the cosmos scenarios, persistent-confirms and persistent-confirm-each also report the CPU time\n"+
		"lapse-bench and that process used per operation while timed")
	fs.BoolVar(&c.JSON, "json", false, "print one JSON object a line per scenario instead of a table")
	fs.IntVar(&c.Runs, "runs", 1, "run each scenario this many times and report the median")
	fs.StringVar(&c.AMQP1Auth, "amqp1-auth", "", "how the AMQP 1.0 scenarios log in, which names the broker:\n"+
		"cbs for a Service Bus (lapse): SASL ANONYMOUS and a CBS token signed with the emulator's key,\n"+
		"queues made through --servicebus-admin-url, peek-lock (receiver settle mode second);\n"+
		"plain for RabbitMQ's rabbitmq_amqp1_0 plugin: SASL PLAIN with the URL's user, durable queues\n"+
		"declared over AMQP 0-9-1 on the same URL and addressed /amq/queue/NAME, receiver settle mode first.\n"+
		"Default: plain when the URL has a user, else cbs")
	fs.StringVar(&c.AdminURL, "servicebus-admin-url", "http://localhost:5300", "lapse's Service Bus administration API (--servicebus-admin-addr), for the queues of cbs")
	fs.StringVar(&c.ControlURL, "control-url", "http://localhost:8080", "lapse's control API (--control-addr), whose clock sb-ttl-deadletter advances")
	fs.StringVar(&c.CosmosURL, "cosmos-url", "http://localhost:8081/", "Cosmos DB account endpoint of the cosmos scenarios (lapse's --cosmos-addr);\n"+
		"with https the server's certificate is not checked")
	fs.StringVar(&c.CosmosKey, "cosmos-key", cosmos.EmulatorKey, "Cosmos DB account key of --cosmos-url (default: the emulator's well-known key)")
	fs.IntVar(&c.Items, "items", 10000, "items of about 1 KB per cosmos scenario (cosmos-query-pk runs a tenth as many queries)")
	fs.IntVar(&c.Workers, "workers", 1, "goroutines sending the cosmos scenarios' requests at once, each waiting for its answer")
	fs.StringVar(&c.CeilingAddr, "serve-cosmos-ceiling", "", "run no scenario: serve on this address (host:port) until interrupted a Cosmos DB account that\n"+
		"answers the cosmos scenarios (but cosmos-query-pk) with fixed answers and keeps nothing, the most any\n"+
		"server could let the client do on this machine; point --cosmos-url of another lapse-bench at it")
	fs.BoolVar(&c.CeilingTLS, "ceiling-tls", false, "serve the --serve-cosmos-ceiling account over HTTPS (a self-signed certificate), as emulators serve theirs")
	fs.BoolVar(&c.CeilingOwnHTTP1, "ceiling-own-http1", false, "serve the --serve-cosmos-ceiling account with lapse's own HTTP/1.1 loop, as lapse serves Cosmos DB, rather than net/http's server, as cosmium does")
	fs.DurationVar(&c.CeilingWork, "ceiling-work", 0, "CPU time the --serve-cosmos-ceiling account spends computing on each request before it answers, as a\n"+
		"server's own work would: what a server's time per request costs the client's rate")
	fs.Var(&c.Servers, "server", "NAME=COMMAND: a server to run the cosmos scenarios against side by side with the others given\n"+
		"(twice or more): lapse-bench starts it with COMMAND (split at spaces, no shell) for each round, a fresh\n"+
		"one each time, runs the scenarios against it over HTTPS, with its CPU measured, and stops it (SIGTERM).\n"+
		"In COMMAND, "+sidePort+" is a free port of 127.0.0.1 where it is to serve Cosmos DB, "+sideDir+" a fresh empty\n"+
		"folder and "+sideSelf+" this lapse-bench, for its --serve-cosmos-ceiling")
	fs.IntVar(&c.Rounds, "rounds", 3, "with --server: how many rounds, each running every server once, in an order that turns by one each round")
	references := fs.String("reference", "", "with --server: comma-separated names of the servers the others are compared with,\n"+
		"as the median of the per-round ratios of their results and of their CPU per op (default: the first --server)")
	pos, err := parseFlags(fs, args, false, stderr)
	if err != nil {
		return c, err
	}
	switch {
	case len(pos) > 0:
		return c, &usageError{fmt.Sprintf("unexpected argument %q", pos[0])}
	case c.Messages < 1:
		return c, &usageError{"--messages must be at least 1"}
	case c.Size < 0:
		return c, &usageError{"--size must not be negative"}
	case c.Runs < 1:
		return c, &usageError{"--runs must be at least 1"}
	case c.ServerPID < 0:
		return c, &usageError{"--server-pid must be a process id"}
	case c.Items < 1:
		return c, &usageError{"--items must be at least 1"}
	case c.Workers < 1:
		return c, &usageError{"--workers must be at least 1"}
	case c.Rounds < 1:
		return c, &usageError{"--rounds must be at least 1"}
	}
	if err := checkCosmosURL(c.CosmosURL); err != nil {
		return c, err
	}
	if _, err := base64.StdEncoding.DecodeString(c.CosmosKey); err != nil || c.CosmosKey == "" {
		return c, &usageError{"--cosmos-key must be an account key in base64"}
	}
	switch c.AMQP1Auth {
	case "":
		c.AMQP1Auth = benchAuthCBS
		if u, err := url.Parse(c.URL); err == nil && u.User != nil {
			c.AMQP1Auth = benchAuthPlain
		}
	case benchAuthCBS, benchAuthPlain:
	default:
		return c, &usageError{fmt.Sprintf("--amqp1-auth %q: use cbs or plain", c.AMQP1Auth)}
	}
	for _, s := range strings.Split(*scenarios, ",") {
		s = strings.TrimSpace(s)
		add := []string{s}
		if kind, ok := benchGroups[s]; ok {
			add = nil
			for _, n := range names {
				if kinds[n] == kind {
					add = append(add, n)
				}
			}
		} else if !slices.Contains(names, s) {
			return c, &usageError{fmt.Sprintf("unknown scenario %q (known: %s; groups: all, amqp091, amqp1, servicebus, cosmos)", s, strings.Join(names, ", "))}
		}
		for _, s := range add {
			if !slices.Contains(c.Scenarios, s) {
				c.Scenarios = append(c.Scenarios, s)
			}
		}
	}
	for _, s := range c.Scenarios {
		if kinds[s] == benchServiceBus && c.AMQP1Auth != benchAuthCBS {
			return c, &usageError{fmt.Sprintf("%s needs lapse's Service Bus: --amqp1-auth cbs and a URL without a user", s)}
		}
	}
	return c, checkSideFlags(fs, &c, *references, kinds)
}

// checkSideFlags checks the flags of a side by side (--server) and sets
// its default reference.
func checkSideFlags(fs *flag.FlagSet, c *benchConfig, references string, kinds map[string]benchKind) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(c.Servers) == 0 {
		for _, name := range []string{"rounds", "reference"} {
			if set[name] {
				return &usageError{fmt.Sprintf("--%s compares servers: give them with --server", name)}
			}
		}
		return nil
	}
	if len(c.Servers) < 2 {
		return &usageError{"--server: give two servers or more to compare"}
	}
	// Each server's URL and process are lapse-bench's own, and rounds
	// take the place of runs.
	for _, name := range []string{"cosmos-url", "server-pid", "runs", "serve-cosmos-ceiling"} {
		if set[name] {
			return &usageError{fmt.Sprintf("--%s does not go with --server", name)}
		}
	}
	if !set["scenarios"] {
		c.Scenarios = nil
		for _, s := range benchScenarios() {
			if s.kind == benchCosmos {
				c.Scenarios = append(c.Scenarios, s.name)
			}
		}
	}
	for _, s := range c.Scenarios {
		if kinds[s] != benchCosmos {
			return &usageError{fmt.Sprintf("--server runs cosmos scenarios only, not %s", s)}
		}
	}
	c.References = nil
	if references == "" {
		references = c.Servers[0].Name
	}
	for _, r := range strings.Split(references, ",") {
		r = strings.TrimSpace(r)
		if !slices.ContainsFunc(c.Servers, func(s sideServer) bool { return s.Name == r }) {
			return &usageError{fmt.Sprintf("--reference %q is not a --server", r)}
		}
		if !slices.Contains(c.References, r) {
			c.References = append(c.References, r)
		}
	}
	return nil
}

// benchPreflight fails early when the broker cannot be reached or its
// memory cannot be read, rather than once per scenario.
func benchPreflight(ctx context.Context, c benchConfig) error {
	kinds := map[benchKind]bool{}
	for _, s := range benchScenarios() {
		if slices.Contains(c.Scenarios, s.name) {
			kinds[s.kind] = true
		}
	}
	if kinds[benchAMQP091] {
		conn, err := benchDial(c.URL, "preflight")
		if err != nil {
			return fmt.Errorf("connecting to --url: %w", err)
		}
		conn.Close()
	}
	if kinds[benchAMQP1] || kinds[benchServiceBus] {
		if err := benchAMQP1Preflight(ctx, c, kinds[benchServiceBus]); err != nil {
			return err
		}
	}
	if kinds[benchCosmos] {
		if err := benchCosmosPreflight(ctx, c); err != nil {
			return err
		}
	}
	if c.ServerPID > 0 {
		if _, err := readRSS(c.ServerPID); err != nil {
			return fmt.Errorf("--server-pid: %w", err)
		}
	}
	return nil
}

// benchColumns lays out the table of results.
const benchColumns = "%-24s %9s %9s  %-16s %s"

// benchHeader is the first line of the table.
func benchHeader() string {
	return strings.TrimRight(fmt.Sprintf(benchColumns, "scenario", "messages", "seconds", "result", "notes"), " ")
}

// benchRow is r as a line of the table.
func benchRow(r benchResult) string {
	line := fmt.Sprintf(benchColumns, r.Scenario, strconv.Itoa(r.Messages),
		strconv.FormatFloat(r.Seconds, 'f', 3, 64), benchValue(r.Value, r.Unit), r.Notes)
	return strings.TrimRight(line, " ")
}

// benchValue formats a figure with its unit: milliseconds with a decimal,
// rates and sizes without.
func benchValue(v *float64, unit string) string {
	if v == nil {
		return "n/a"
	}
	prec := 0
	if unit == "ms" {
		prec = 1
	}
	return strconv.FormatFloat(*v, 'f', prec, 64) + " " + unit
}

// medianResult merges the runs of one scenario: the median value and the
// median seconds, the notes of the median run and, for several runs, their
// range.
func medianResult(runs []benchResult) benchResult {
	sorted := slices.Clone(runs)
	value := func(r benchResult) float64 {
		if r.Value == nil {
			return 0
		}
		return *r.Value
	}
	slices.SortStableFunc(sorted, func(a, b benchResult) int { return cmp.Compare(value(a), value(b)) })
	out := sorted[len(sorted)/2]
	out.Runs = len(runs)
	var secs, values []float64
	measured := true
	for _, r := range sorted {
		secs = append(secs, r.Seconds)
		if r.Value == nil {
			measured = false
		} else {
			values = append(values, *r.Value)
		}
	}
	slices.Sort(secs)
	out.Seconds = benchMedian(secs)
	if len(runs) > 1 && measured {
		m := benchMedian(values)
		out.Value = &m
		spread := fmt.Sprintf("median of %d runs, %s to %s", len(runs),
			benchValue(&values[0], out.Unit), benchValue(&values[len(values)-1], out.Unit))
		out.Notes = strings.TrimPrefix(out.Notes+"; "+spread, "; ")
	}
	return out
}

// benchMedian is the middle of sorted xs, or the mean of the two middle ones.
func benchMedian(xs []float64) float64 {
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// readRSS returns the resident memory of process pid in bytes.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	return parseVmRSS(string(b))
}

// parseVmRSS returns the VmRSS line of a /proc/PID/status file in bytes.
func parseVmRSS(status string) (int64, error) {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("unexpected line %q", strings.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected line %q", strings.TrimSpace(line))
		}
		return kb * 1024, nil
	}
	return 0, errors.New("no VmRSS in the process status")
}

// settledRSS reads the resident memory of pid every 200 ms until two
// readings agree within 1%, for at most 10 s; settled says whether they did.
func settledRSS(ctx context.Context, pid int) (rss int64, settled bool, err error) {
	prev, err := readRSS(pid)
	if err != nil {
		return 0, false, err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for range 50 {
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-tick.C:
		}
		cur, err := readRSS(pid)
		if err != nil {
			return 0, false, err
		}
		if d := cur - prev; d*100 <= cur && -d*100 <= cur {
			return cur, true, nil
		}
		prev = cur
	}
	return prev, false, nil
}
