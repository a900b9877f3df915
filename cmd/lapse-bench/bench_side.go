package main

// Side by side: --server NAME=COMMAND, given twice or more, makes
// lapse-bench start each server itself, round after round, a fresh one
// each time, run the cosmos scenarios against it and stop it, and then
// compare them. On a machine whose speed drifts from minute to minute (a
// shared two-core VM: the same server's rate can halve between two
// rounds), a ratio of two servers' medians mixes minutes; a ratio taken
// within each round compares servers measured minutes apart at most, and
// the median of those per-round ratios is the figure a target "k times
// another server" is held to. The order of the servers turns by one each
// round, so that none always runs first on a cool machine or last on a
// warm one.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// sideServer is one server of a side by side: its name and the command
// that starts it, with its placeholders (sidePlaceholders) not yet filled.
type sideServer struct {
	Name string
	Args []string
}

// The placeholders of a --server command, filled at each start.
const (
	sidePort = "{port}" // a free TCP port of 127.0.0.1, where the server is to serve Cosmos DB over HTTPS
	sideDir  = "{dir}"  // a fresh empty folder, removed once the server has stopped
	sideSelf = "{self}" // this lapse-bench's executable, for its --serve-cosmos-ceiling
)

// sideServers is the flag.Value of --server, given once per server.
type sideServers []sideServer

func (s *sideServers) String() string {
	var names []string
	for _, v := range *s {
		names = append(names, v.Name)
	}
	return strings.Join(names, ",")
}

func (s *sideServers) Set(v string) error {
	name, command, ok := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	args := strings.Fields(command)
	switch {
	case !ok || name == "" || len(args) == 0:
		return fmt.Errorf("use NAME=COMMAND")
	case strings.ContainsAny(name, ", "):
		return fmt.Errorf("server name %q: no commas or spaces", name)
	case slices.ContainsFunc(*s, func(o sideServer) bool { return o.Name == name }):
		return fmt.Errorf("server %q given twice", name)
	case !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, sidePort) }):
		return fmt.Errorf("server %q: its command must serve on %s", name, sidePort)
	}
	*s = append(*s, sideServer{Name: name, Args: args})
	return nil
}

// sideRow is one scenario's result for one server in one round, as
// --json prints it.
type sideRow struct {
	Server string `json:"server"`
	Round  int    `json:"round"`
	benchResult
}

// sideRatio compares Server with Reference on Scenario over the rounds
// that measured both: the median of the per-round ratios of their
// results, with the lowest and the highest and a confidence interval of
// the median (medianInterval), and the same median of the ratio of the
// CPU time the servers used per operation (nil when a round lacks it).
type sideRatio struct {
	Scenario  string  `json:"scenario"`
	Server    string  `json:"server"`
	Reference string  `json:"reference"`
	Rounds    int     `json:"rounds"`
	Ratio     float64 `json:"ratio"`
	Min       float64 `json:"ratio_min"`
	Max       float64 `json:"ratio_max"`
	// Low and High bound the median with probability Confidence.
	Low        float64  `json:"ratio_interval_low"`
	High       float64  `json:"ratio_interval_high"`
	Confidence float64  `json:"ratio_interval_confidence"`
	CPURatio   *float64 `json:"server_cpu_ratio,omitempty"`
}

// runSideBySide runs c's rounds and prints their results and ratios; it
// returns the exit code.
func runSideBySide(ctx context.Context, c benchConfig, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "lapse-bench: %s: %s\n", sideSelf, oneLine(err))
		return 1
	}
	enc := json.NewEncoder(stdout)
	var rows []sideRow
	n := len(c.Servers)
	failed := 0
	// A server's failed round is reported and the run goes on: the ratios
	// pair only rounds that measured both servers, and an hour of rounds is
	// not lost to one.
rounds:
	for round := 1; round <= c.Rounds; round++ {
		for i := range n {
			s := c.Servers[(i+round-1)%n]
			fmt.Fprintf(stderr, "lapse-bench: round %d of %d: %s\n", round, c.Rounds, s.Name)
			rs, err := sideRound(ctx, c, s, self)
			if err != nil {
				failed++
				fmt.Fprintf(stderr, "lapse-bench: round %d, server %s: %s\n", round, s.Name, oneLine(err))
				if c.JSON {
					_ = enc.Encode(sideFailure{Server: s.Name, Round: round, Error: oneLine(err)})
				}
				if ctx.Err() != nil {
					break rounds // interrupted: report what was measured
				}
				continue
			}
			for _, r := range rs {
				row := sideRow{Server: s.Name, Round: round, benchResult: r}
				rows = append(rows, row)
				if c.JSON {
					_ = enc.Encode(row)
				}
			}
		}
	}
	ratios := sideRatios(rows, c.References)
	if c.JSON {
		for _, r := range ratios {
			_ = enc.Encode(r)
		}
	} else {
		fmt.Fprint(stdout, sideTable(rows, ratios))
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "lapse-bench: %d of %d server rounds failed; the ratios are of the rounds that measured both servers\n", failed, c.Rounds*n)
		return 1
	}
	return 0
}

// sideFailure is the --json line of a server's round that failed.
type sideFailure struct {
	Server string `json:"server"`
	Round  int    `json:"round"`
	Error  string `json:"error"`
}

// sideRound starts s, runs each of c's scenarios once against it and
// stops it.
func sideRound(ctx context.Context, c benchConfig, s sideServer, self string) (_ []benchResult, err error) {
	dir, err := os.MkdirTemp("", "lapse-bench-"+s.Name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var p *sideProc
	// A port free a moment ago can be taken before the server binds it,
	// by another process or by one of the server's own listeners on a
	// port of the system's choosing: the server then ends saying so, and
	// starts again on another port.
	for attempt := 1; ; attempt++ {
		if p, err = startSide(s, dir, self); err != nil {
			return nil, err
		}
		err = waitListening(ctx, p.addr, p.exited, 30*time.Second)
		if err == nil {
			break
		}
		_ = p.stop()
		if attempt < sideStarts && errors.Is(err, errEndedEarly) && strings.Contains(p.out.String(), "address already in use") {
			// A fresh folder too, as if this start were the first.
			if err := os.RemoveAll(dir); err != nil {
				return nil, err
			}
			if err := os.Mkdir(dir, 0o700); err != nil {
				return nil, err
			}
			continue
		}
		return nil, fmt.Errorf("%w; its output ends: %q", err, p.out.String())
	}
	defer func() {
		if stopErr := p.stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	c.CosmosURL = "https://" + p.addr + "/"
	c.ServerPID = p.cmd.Process.Pid
	if err := benchCosmosPreflight(ctx, c); err != nil {
		return nil, err
	}
	byName := benchScenariosByName()
	var rs []benchResult
	for _, name := range c.Scenarios {
		r, err := byName[name].run(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r.Scenario, r.Runs = name, 1
		rs = append(rs, r)
	}
	total, idle, err := settledServerCPU(ctx, p.cmd.Process.Pid, p.exited)
	if err != nil {
		return nil, fmt.Errorf("%w; its output ends: %q", err, p.out.String())
	}
	ms := float64(total) / float64(time.Millisecond)
	notes := "CPU time the server used from its start until idle after the last scenario"
	if !idle {
		notes = fmt.Sprintf("CPU time the server used from its start until %s after the last scenario, never idle for %s", sideSettleMax, sideIdle)
	}
	rs = append(rs, benchResult{Scenario: sideTotalCPU, Value: &ms, Unit: "ms", Runs: 1, Notes: notes})
	return rs, nil
}

// sideStarts is how many times a round starts a server that ends at once
// because its port was taken.
const sideStarts = 3

// errEndedEarly is waitListening's error for a server that ended before
// it listened.
var errEndedEarly = errors.New("the server ended before it listened")

// sideProc is a started server: its process, a channel closed once it
// has ended, the address it is to serve on and the end of its output.
type sideProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	addr   string
	out    *tailWriter
}

func (p *sideProc) stop() error { return stopServer(p.cmd, p.exited) }

// startSide starts s on a free port, its placeholders filled in.
func startSide(s sideServer, dir, self string) (*sideProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	fill := strings.NewReplacer(sidePort, strconv.Itoa(port), sideDir, dir, sideSelf, self)
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = fill.Replace(a)
	}
	out := &tailWriter{max: 2048}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &sideProc{cmd: cmd, exited: make(chan struct{}), addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), out: out}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// sideTotalCPU is the row of each server's whole CPU time in a round: from
// its start (setup included) until it fell idle after the scenarios, so
// that work it put off past a timed load (lapse's applier, a compaction)
// counts. Unlike the scenarios' rates, less is better.
const sideTotalCPU = "server-cpu-total"

// settledServerCPU returns the CPU time pid has used, once it has used
// none for sideIdle (idle), or after sideSettleMax what it has used so
// far. Two seconds outlast the timers that put work off (lapse applies to
// SQLite within 100 ms of a write).
func settledServerCPU(ctx context.Context, pid int, exited <-chan struct{}) (_ time.Duration, idle bool, _ error) {
	const poll = 250 * time.Millisecond
	prev, same := time.Duration(-1), time.Duration(0)
	for waited := time.Duration(0); waited < sideSettleMax && same < sideIdle; waited += poll {
		select {
		case <-exited:
			return 0, false, errors.New("the server ended before it was stopped")
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-time.After(poll):
		}
		cur := readCPU(pid).server
		if cur < 0 {
			return 0, false, fmt.Errorf("reading the CPU time of process %d", pid)
		}
		if cur == prev {
			same += poll
		} else {
			same = 0
		}
		prev = cur
	}
	return prev, same >= sideIdle, nil
}

// sideIdle is how long a server must use no CPU to be idle, and
// sideSettleMax how long lapse-bench waits for that.
const (
	sideIdle      = 2 * time.Second
	sideSettleMax = 10 * time.Second
)

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening returns once addr takes TCP connections, or an error once
// the server has exited, ctx is done or within has passed.
func waitListening(ctx context.Context, addr string, exited <-chan struct{}, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-exited:
			return fmt.Errorf("%w on %s", errEndedEarly, addr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listened on %s within %s", addr, within)
		}
	}
}

// stopServer asks the server to stop (SIGTERM), as a service manager
// would, and kills it if it has not stopped within 10 seconds; a server
// that had to be killed is an error, since its next round could find its
// folder or port still held.
func stopServer(cmd *exec.Cmd, exited <-chan struct{}) error {
	select {
	case <-exited:
		return nil
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return nil
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return errors.New("the server did not stop within 10 s of SIGTERM and was killed")
	}
}

// tailWriter keeps the last max bytes written to it, safe for the two
// goroutines exec copies a server's stdout and stderr with.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if over := len(w.b) - w.max; over > 0 {
		w.b = append(w.b[:0], w.b[over:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.b))
}

// sideRatios compares each server of rows with each of refs (but
// itself), scenario by scenario, in the order the rows name them, over
// the rounds in which both were measured. For sideTotalCPU the ratio is
// of CPU time: below 1, the server used less.
func sideRatios(rows []sideRow, refs []string) []sideRatio {
	type key struct {
		scenario, server string
		round            int
	}
	byKey := map[key]benchResult{}
	var scenarios, servers []string
	rounds := 0
	for _, r := range rows {
		byKey[key{r.Scenario, r.Server, r.Round}] = r.benchResult
		if !slices.Contains(scenarios, r.Scenario) {
			scenarios = append(scenarios, r.Scenario)
		}
		if !slices.Contains(servers, r.Server) {
			servers = append(servers, r.Server)
		}
		rounds = max(rounds, r.Round)
	}
	var out []sideRatio
	for _, sc := range scenarios {
		for _, ref := range refs {
			for _, s := range servers {
				if s == ref {
					continue
				}
				var ratios, cpu []float64
				cpuEvery := true
				for round := 1; round <= rounds; round++ {
					a, okA := byKey[key{sc, s, round}]
					b, okB := byKey[key{sc, ref, round}]
					if !okA || !okB || a.Value == nil || b.Value == nil || *b.Value == 0 {
						continue
					}
					ratios = append(ratios, *a.Value / *b.Value)
					if a.ServerCPU != nil && b.ServerCPU != nil && *b.ServerCPU > 0 {
						cpu = append(cpu, *a.ServerCPU / *b.ServerCPU)
					} else {
						cpuEvery = false
					}
				}
				if len(ratios) == 0 {
					continue
				}
				slices.Sort(ratios)
				r := sideRatio{Scenario: sc, Server: s, Reference: ref, Rounds: len(ratios),
					Ratio: benchMedian(ratios), Min: ratios[0], Max: ratios[len(ratios)-1]}
				r.Low, r.High, r.Confidence = medianInterval(ratios)
				if cpuEvery {
					slices.Sort(cpu)
					m := benchMedian(cpu)
					r.CPURatio = &m
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// medianInterval is a confidence interval of the median of what sorted
// (ascending, not empty) was drawn from, assuming nothing of its
// distribution: the order statistics sorted[k-1] and sorted[n-k], for the
// largest k whose interval holds the median with a probability of 95% or
// more. That probability, returned as confidence, is 1 - 2 P(B < k) for B
// binomial of n and 1/2: each value is below the median with probability
// 1/2, and the interval misses it when k or more values fall on one side.
// Below 6 values no interval reaches 95%, and it is the whole range.
// (For 12 rounds it is the 3rd to the 10th value, at 96%.)
func medianInterval(sorted []float64) (low, high, confidence float64) {
	n := len(sorted)
	// term is C(n, j) / 2^n, cum is P(B < k): the binomial built a term
	// at a time.
	term := math.Pow(0.5, float64(n))
	cum := term
	k := 1
	confidence = 1 - 2*cum
	for j := 1; j < n/2; j++ {
		term *= float64(n-j+1) / float64(j)
		next := 1 - 2*(cum+term)
		if next < 0.95 {
			break
		}
		cum += term
		k, confidence = j+1, next
	}
	return sorted[k-1], sorted[n-k], confidence
}

// sideTable is the report of a side by side: each server's median result
// and CPU per operation by scenario, then the ratios.
func sideTable(rows []sideRow, ratios []sideRatio) string {
	var b strings.Builder
	type key struct{ scenario, server string }
	var keys []key
	var scenarios []string // in the order the rows name them
	results := map[key][]benchResult{}
	for _, r := range rows {
		k := key{r.Scenario, r.Server}
		if _, ok := results[k]; !ok {
			keys = append(keys, k)
		}
		if !slices.Contains(scenarios, r.Scenario) {
			scenarios = append(scenarios, r.Scenario)
		}
		results[k] = append(results[k], r.benchResult)
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		return cmp.Compare(slices.Index(scenarios, a.scenario), slices.Index(scenarios, b.scenario))
	})
	fmt.Fprintf(&b, "%-16s %-12s %6s  %-14s %s\n", "scenario", "server", "rounds", "median", "server CPU per op (median)")
	for _, k := range keys {
		rs := results[k]
		var values, cpu []float64
		for _, r := range rs {
			if r.Value != nil {
				values = append(values, *r.Value)
			}
			if r.ServerCPU != nil {
				cpu = append(cpu, *r.ServerCPU)
			}
		}
		median, cpuText := "n/a", "n/a"
		if len(values) > 0 {
			slices.Sort(values)
			m := benchMedian(values)
			median = benchValue(&m, rs[0].Unit)
		}
		if len(cpu) > 0 {
			slices.Sort(cpu)
			cpuText = strconv.FormatFloat(benchMedian(cpu), 'f', 0, 64) + " µs"
		}
		fmt.Fprintf(&b, "%-16s %-12s %6d  %-14s %s\n", k.scenario, k.server, len(rs), median, cpuText)
	}
	b.WriteString("\nratios: the median of the per-round ratios [lowest, highest], and an interval that holds\n" +
		"the median of such ratios with the probability given (order statistics, no assumption of their distribution)\n")
	fmt.Fprintf(&b, "%-16s %-24s %-20s %-22s %s\n", "scenario", "server / reference", "result", "interval", "server CPU per op")
	for _, r := range ratios {
		cpuText := "n/a"
		if r.CPURatio != nil {
			cpuText = strconv.FormatFloat(*r.CPURatio, 'f', 2, 64)
		}
		fmt.Fprintf(&b, "%-16s %-24s %-20s %-22s %s\n", r.Scenario, r.Server+" / "+r.Reference,
			fmt.Sprintf("%.2f [%.2f, %.2f]", r.Ratio, r.Min, r.Max),
			fmt.Sprintf("%.2f-%.2f at %.0f%%", r.Low, r.High, 100*r.Confidence), cpuText)
	}
	if slices.Contains(scenarios, sideTotalCPU) {
		b.WriteString("\n" + sideTotalCPU + ": the server's CPU time in a round, from its start until idle after the\n" +
			"scenarios, work it put off included; its ratio is of CPU time: below 1, the server used less.\n")
	}
	return b.String()
}
