//go:build reliability

package reliability

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/lapse-emulator/lapse/internal/control"
	amqp "github.com/rabbitmq/amqp091-go"
)

// binary is the lapse binary TestMain builds.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lapse-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, "lapse")
	if out, err := exec.Command("go", "build", "-o", binary, "../cmd/lapse").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// CosmosKey is the Cosmos DB account key lapse takes by default: the
// official emulator's well-known key.
const CosmosKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// Lapse is a running lapse binary.
type Lapse struct {
	t   testing.TB
	cmd *exec.Cmd
	// Dir is its data folder.
	Dir string
	// Addrs are its listeners' addresses as 127.0.0.1:PORT, keyed as GET
	// /api/info names them: control, amqp, amqps, cosmos, servicebusAdmin,
	// rabbitmqManagement.
	Addrs map[string]string
	// Control is a client of its control API.
	Control *control.Client
	log     *logBuffer
	done    chan struct{} // closed once the process ended
}

// Start runs the binary on the data folder dir (a new one when dir is
// empty) with every listener on a port of 127.0.0.1 the system picks, and
// returns once GET /healthz says every listener accepts. more are further
// flags. The process is killed at the end of the test if it still runs,
// and its log is checked for panics then.
func Start(t testing.TB, dir string, more ...string) *Lapse {
	t.Helper()
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "data")
	}
	args := []string{"serve", "--data", dir,
		"--amqp-addr", "127.0.0.1:0", "--amqps-addr", "127.0.0.1:0", "--cosmos-addr", "127.0.0.1:0",
		"--servicebus-admin-addr", "127.0.0.1:0", "--servicebus-websocket-addr", "127.0.0.1:0", "--rabbitmq-management-addr", "127.0.0.1:0",
		"--control-addr", "127.0.0.1:0"}
	l := &Lapse{t: t, Dir: dir, cmd: exec.Command(binary, append(args, more...)...), log: &logBuffer{}, done: make(chan struct{})}
	l.cmd.Env = append(os.Environ(), "LAPSE_LOG_LEVEL=info")
	r, err := l.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	controlAddr := make(chan string, 1)
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			l.log.add(line)
			if m := listeningControl.FindStringSubmatch(line); m != nil {
				select {
				case controlAddr <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, r)
		_ = l.cmd.Wait()
	}()
	t.Cleanup(func() {
		if l.running() {
			_ = l.cmd.Process.Kill()
			<-l.done
		}
		l.CheckLog()
	})
	select {
	case addr := <-controlAddr:
		l.Control = &control.Client{Base: "http://" + loopback(addr), HTTP: &http.Client{Timeout: 5 * time.Minute}}
	case <-l.done:
		t.Fatalf("lapse ended before it listened:\n%s", l.log)
	case <-time.After(60 * time.Second):
		t.Fatalf("lapse did not listen within 60 s:\n%s", l.log)
	}
	var info struct {
		Listeners map[string]struct {
			Addr   string `json:"addr"`
			Served bool   `json:"served"`
		} `json:"listeners"`
	}
	l.Must(l.Control.Do(context.Background(), "GET", "/api/info", nil, &info))
	l.Addrs = map[string]string{}
	for name, li := range info.Listeners {
		if li.Served {
			l.Addrs[name] = loopback(li.Addr)
		}
	}
	for _, name := range []string{"amqp", "amqps", "cosmos", "servicebusAdmin", "rabbitmqManagement", "control"} {
		if l.Addrs[name] == "" {
			t.Fatalf("GET /api/info has no %s listener: %+v", name, info)
		}
	}
	return l
}

// listeningControl matches the log line of the control listener, which
// lapse binds last (its /healthz means every other listener accepts).
var listeningControl = regexp.MustCompile(`msg=listening listener=control addr=(\S+)`)

// loopback turns a bound address into 127.0.0.1:PORT.
func loopback(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// Must fails the test on err.
func (l *Lapse) Must(err error) {
	l.t.Helper()
	if err != nil {
		l.t.Fatal(err)
	}
}

func (l *Lapse) running() bool {
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

// Pid is the process's id.
func (l *Lapse) Pid() int { return l.cmd.Process.Pid }

// Kill ends the process with SIGKILL (kill -9) and waits for it.
func (l *Lapse) Kill() {
	l.t.Helper()
	if err := l.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		l.t.Fatal(err)
	}
	<-l.done
}

// Stop ends the process with SIGTERM and fails the test unless it exits
// with code 0 within a minute.
func (l *Lapse) Stop() {
	l.t.Helper()
	if err := l.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		l.t.Fatal(err)
	}
	select {
	case <-l.done:
	case <-time.After(time.Minute):
		_ = l.cmd.Process.Kill()
		<-l.done
		l.t.Fatalf("lapse did not stop within a minute of SIGTERM")
	}
	if code := l.cmd.ProcessState.ExitCode(); code != 0 {
		l.t.Fatalf("lapse exited with code %d after SIGTERM:\n%s", code, l.log.tail(50))
	}
}

// Alive fails the test when the process ended.
func (l *Lapse) Alive() {
	l.t.Helper()
	if !l.running() {
		l.t.Fatalf("lapse ended: %v\n%s", l.cmd.ProcessState, l.log.tail(50))
	}
}

// CheckLog fails the test when lapse's log shows a panic or a data race.
func (l *Lapse) CheckLog() {
	l.t.Helper()
	for _, line := range l.log.lines() {
		if strings.Contains(line, "panic") || strings.Contains(line, "DATA RACE") || strings.HasPrefix(line, "fatal error") {
			l.t.Errorf("lapse's log shows a panic:\n%s", l.log.tail(80))
			return
		}
	}
}

// Log returns lapse's log so far (its stderr).
func (l *Lapse) Log() string { return l.log.String() }

// Metrics scrapes GET /metrics and returns each sample, keyed by its name
// and labels as the text format writes them (go_goroutines,
// lapse_connections{protocol="rabbitmq"}).
func (l *Lapse) Metrics() map[string]float64 {
	l.t.Helper()
	resp, err := l.Control.HTTP.Get(l.Control.Base + "/metrics")
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		l.t.Fatal(err)
	}
	return out
}

// Memory is what the Go runtime and the kernel say of lapse's memory.
type Memory struct {
	Goroutines int
	// HeapInuse is the heap in use right after a garbage collection.
	HeapInuse int64
	// RSS is the resident set size.
	RSS int64
}

func (m Memory) String() string {
	return fmt.Sprintf("%d goroutines, heap in use %.1f MiB, RSS %.1f MiB", m.Goroutines, mib(m.HeapInuse), mib(m.RSS))
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// Memory collects garbage in lapse (GET /debug/pprof/heap?gc=1), then
// reads its figures from /metrics.
func (l *Lapse) Memory() Memory {
	l.t.Helper()
	resp, err := l.Control.HTTP.Get(l.Control.Base + "/debug/pprof/heap?gc=1")
	if err != nil {
		l.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	m := l.Metrics()
	return Memory{Goroutines: int(m["go_goroutines"]), HeapInuse: int64(m["go_memstats_heap_inuse_bytes"]), RSS: int64(m["process_resident_memory_bytes"])}
}

// Advance moves lapse's clock forward by d and returns once everything
// due is applied (POST /api/clock/advance).
func (l *Lapse) Advance(d time.Duration) {
	l.t.Helper()
	l.Must(l.Control.Do(context.Background(), "POST", "/api/clock/advance", map[string]string{"by": d.String()}, nil))
}

// Freeze stops lapse's clock.
func (l *Lapse) Freeze() {
	l.t.Helper()
	l.Must(l.Control.Do(context.Background(), "POST", "/api/clock/freeze", nil, nil))
}

// Now is the time on lapse's clock.
func (l *Lapse) Now() time.Time {
	l.t.Helper()
	var c struct {
		Now time.Time `json:"now"`
	}
	l.Must(l.Control.Do(context.Background(), "GET", "/api/clock", nil, &c))
	return c.Now
}

// Event is an entry of GET /api/events.
type Event struct {
	ID       uint64    `json:"id"`
	Time     time.Time `json:"time"`
	Due      time.Time `json:"due"`
	Protocol string    `json:"protocol"`
	Entity   string    `json:"entity"`
	Item     uint64    `json:"item"`
	ItemKey  string    `json:"itemKey"`
	Rule     string    `json:"rule"`
	Action   string    `json:"action"`
	Reason   string    `json:"reason"`
}

// Events returns the events after id since, oldest first (at most the
// 10,000 the log keeps).
func (l *Lapse) Events(since uint64) []Event {
	l.t.Helper()
	var evs []Event
	l.Must(l.Control.Do(context.Background(), "GET", "/api/events?since="+strconv.FormatUint(since, 10)+"&limit=10000", nil, &evs))
	return evs
}

// RabbitMQURL is the AMQP 0-9-1 URL with the default user.
func (l *Lapse) RabbitMQURL() string { return "amqp://guest:guest@" + l.Addrs["amqp"] + "/" }

// RabbitMQChannel dials RabbitMQURL and opens a channel, failing the test
// if either fails. The connection closes when the test ends, or earlier
// when the caller closes it.
func (l *Lapse) RabbitMQChannel() (*amqp.Connection, *amqp.Channel) {
	l.t.Helper()
	conn, err := amqp.Dial(l.RabbitMQURL())
	l.Must(err)
	l.t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	l.Must(err)
	return conn, ch
}

// ServiceBusConnectionString is the official emulator's connection string
// with lapse's AMQP port (plain AMQP, CBS with the SAS key SAS_KEY_VALUE).
func (l *Lapse) ServiceBusConnectionString() string {
	return "Endpoint=sb://" + l.Addrs["amqp"] + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
}

// CosmosEndpoint is the Cosmos DB endpoint over HTTPS; TLS trusts its
// certificate.
func (l *Lapse) CosmosEndpoint() string { return "https://" + l.Addrs["cosmos"] + "/" }

// CosmosClient is an azcosmos client of CosmosEndpoint signing with key
// (CosmosKey, or a wrong one), over tr, which must trust lapse's
// certificate (TLS).
func (l *Lapse) CosmosClient(key string, tr *http.Transport) (*azcosmos.Client, error) {
	cred, err := azcosmos.NewKeyCredential(key)
	if err != nil {
		return nil, err
	}
	return azcosmos.NewClientWithKey(l.CosmosEndpoint(), cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: tr}}})
}

// TLS returns a client configuration that trusts lapse's certificate (GET
// /cert.pem).
func (l *Lapse) TLS() *tls.Config {
	l.t.Helper()
	resp, err := l.Control.HTTP.Get(l.Control.Base + "/cert.pem")
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	pem, err := io.ReadAll(resp.Body)
	if err != nil {
		l.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		l.t.Fatalf("GET /cert.pem: no certificate in %q", pem)
	}
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}

// logBuffer keeps lapse's stderr lines.
type logBuffer struct {
	mu sync.Mutex
	ls []string
}

func (b *logBuffer) add(line string) {
	b.mu.Lock()
	b.ls = append(b.ls, line)
	b.mu.Unlock()
}

func (b *logBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.ls...)
}

func (b *logBuffer) tail(n int) string {
	ls := b.lines()
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

func (b *logBuffer) String() string {
	var buf bytes.Buffer
	for _, l := range b.lines() {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	return buf.String()
}
