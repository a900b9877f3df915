package examples

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// binDir holds the lapse binary that TestMain builds from ./cmd/lapse, as
// the README's `go install ./cmd/lapse` does; the sessions' commands find
// it first on their PATH.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lapse-examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "lapse"), "./cmd/lapse")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/lapse: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// instance is a lapse process started for one session.
type instance struct {
	ip string
	// addrs are the bound addresses (host:port) by listener name, as GET
	// /api/info says them: amqp, amqps, cosmos, servicebusAdmin,
	// rabbitmqManagement, control.
	addrs map[string]string
	// amqps5671 is true when AMQPS listens on port 5671 of ip, the port
	// azure-servicebus before 7.9 dials whatever its endpoint says.
	amqps5671 bool
}

// defaultPorts map the README's default addresses to the listeners that
// serve them.
var defaultPorts = map[string]string{
	"5672": "amqp", "5671": "amqps", "8081": "cosmos", "5300": "servicebusAdmin",
	"15672": "rabbitmqManagement", "8080": "control",
}

// startLapse runs the built lapse with args, on a loopback address of its
// own and free ports (the README's defaults would collide with a lapse the
// user runs, and with other tests), AMQPS on port 5671 when it is free
// there, and data in a temporary folder unless args say where. It stops
// when the test ends.
func startLapse(t *testing.T, args ...string) *instance {
	t.Helper()
	var errs []string
	for range 10 {
		ip := fmt.Sprintf("127.%d.%d.%d", rand.IntN(256), rand.IntN(256), 2+rand.IntN(253))
		// A lapse or a broker listening on *:5671 takes the port on
		// every address.
		amqps, on5671 := ip+":5671", true
		if l, err := net.Listen("tcp", amqps); err != nil {
			amqps, on5671 = ip+":0", false
		} else {
			l.Close()
		}
		control, err := freePort(ip)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		all := append([]string{"--data", filepath.Join(t.TempDir(), "data")}, args...)
		all = append(all, "--amqp-addr", ip+":0", "--amqps-addr", amqps, "--cosmos-addr", ip+":0",
			"--servicebus-admin-addr", ip+":0", "--servicebus-websocket-addr", ip+":0", "--rabbitmq-management-addr", ip+":0",
			"--control-addr", control, "--cert-hosts", ip)
		in, err := run(t, ip, control, all)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		in.amqps5671 = on5671
		return in
	}
	t.Fatalf("lapse did not start: %s", strings.Join(errs, "; "))
	return nil
}

// freePort returns ip:port with a port free a moment ago.
func freePort(ip string) (string, error) {
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// run starts lapse and waits until its control API answers; it returns an
// error when lapse exits first.
func run(t *testing.T, ip, control string, args []string) (*instance, error) {
	cmd := exec.Command(filepath.Join(binDir, "lapse"), args...)
	cmd.Dir = repoRoot
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("lapse %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
		default:
		}
		var info struct {
			Listeners map[string]struct {
				Addr   string
				Served bool
			} `json:"listeners"`
		}
		// The control API answers before every listener is bound: wait
		// until each says its port.
		ready := getJSON("http://"+control+"/api/info", &info) == nil && len(info.Listeners) > 0
		for _, l := range info.Listeners {
			_, port, _ := net.SplitHostPort(l.Addr)
			ready = ready && l.Served && port != "0" && port != ""
		}
		if ready {
			in := &instance{ip: ip, addrs: map[string]string{}}
			for name, l := range info.Listeners {
				_, port, _ := net.SplitHostPort(l.Addr)
				in.addrs[name] = net.JoinHostPort(ip, port)
			}
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("lapse's output:\n%s", out.String())
				}
			})
			return in, nil
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("lapse did not answer on %s in 30 s: %s", control, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getJSON(url string, v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// controlURL is the control API's base URL.
func (in *instance) controlURL() string { return "http://" + in.addrs["control"] }

// localize rewrites the README's default addresses in a command
// (localhost:8080, ...) to the instance's.
func (in *instance) localize(cmd string) string {
	return localhostPort.ReplaceAllStringFunc(cmd, func(m string) string {
		if addr, ok := in.addrs[defaultPorts[strings.TrimPrefix(m, "localhost:")]]; ok {
			return addr
		}
		return m
	})
}

var localhostPort = regexp.MustCompile(`localhost:\d+`)

// env is the environment of a session's commands: lapse first on the
// PATH, and the variables the examples and the CLI read their endpoints
// from, pointing at the instance. python says whether the command runs
// azure-servicebus for Python, whose connection string is the service's
// (AMQPS, no port) rather than the emulator's.
func (in *instance) env(python bool) []string {
	sb := "Endpoint=sb://" + in.addrs["amqp"] + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
	if python {
		sb = "Endpoint=sb://" + in.ip + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;"
	}
	return append(os.Environ(),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LAPSE_CONTROL_URL="+in.controlURL(),
		"SERVICEBUS_CONNECTION_STRING="+sb,
		"RABBITMQ_URL=amqp://guest:guest@"+in.addrs["amqp"]+"/",
		"COSMOS_ENDPOINT=http://"+in.addrs["cosmos"]+"/",
	)
}
