package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
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

// MustLapseAsComposed builds lapse and starts it as docker-compose.yml's
// lapse service is: with the service's environment, its mounted files read
// from the repository, every listener on 127.0.0.1 and a free port. It
// returns the app's environment for that lapse.
func MustLapseAsComposed(t *testing.T) map[string]string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs lapse")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "lapse")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/lapse-emulator/lapse/cmd/lapse").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	lapse := MustCompose(t).Services["lapse"]
	mounts := lapse.bindMounts(t)
	env := []string{"LAPSE_DATA=" + filepath.Join(dir, "data")}
	for k, v := range lapse.Environment {
		if m, ok := mounts[v]; ok { // a path inside the container
			v = filepath.Join(root, m.source)
		}
		env = append(env, k+"="+v)
	}
	control := freeAddr(t)
	env = append(env, "LAPSE_CONTROL_ADDR="+control)
	for _, l := range []string{"AMQP", "AMQPS", "COSMOS", "SERVICEBUS_ADMIN", "RABBITMQ_MANAGEMENT"} {
		env = append(env, "LAPSE_"+l+"_ADDR=127.0.0.1:0")
	}
	cmd := exec.Command(bin)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-exited
		if t.Failed() {
			t.Logf("lapse's stderr:\n%s", stderr.String())
		}
	})

	// Wait until it answers, as compose's service_healthy does.
	base := "http://" + control
	var info struct {
		Listeners map[string]struct{ Addr string } `json:"listeners"`
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("lapse exited: %s", stderr.String())
		default:
		}
		if getJSON(base+"/api/info", &info) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lapse did not answer on %s: %s", control, stderr.String())
		}
	}
	port := func(name string) string {
		_, p, err := net.SplitHostPort(info.Listeners[name].Addr)
		if err != nil {
			t.Fatalf("/api/info: listener %s: %v", name, err)
		}
		return p
	}
	_, controlPort, _ := net.SplitHostPort(control)
	return map[string]string{
		"LAPSE_HOST":         "127.0.0.1",
		"LAPSE_AMQP_PORT":    port("amqp"),
		"LAPSE_COSMOS_PORT":  port("cosmos"),
		"LAPSE_CONTROL_PORT": controlPort,
	}
}

// freeAddr returns an address on 127.0.0.1 with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func getJSON(url string, out any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// issue 15.7: the compose example's app, run against lapse started as
// docker-compose.yml starts it, sends one item per protocol, advances the
// clock and finds each expired as the mounted files say: the Service Bus
// message dead-lettered (SB-8), the RabbitMQ message in orders.expired
// with its x-death (RB-1, RB-9, RB-12), the Cosmos DB item gone (CO-4,
// CO-6). A second run finds its own items among the first run's.
func TestAppFindsOneExpiredItemPerProtocol(t *testing.T) {
	env := MustLapseAsComposed(t)
	getenv := func(k string) string { return env[k] }

	// The certificate the app trusts covers the compose service's name.
	resp, err := http.Get("http://127.0.0.1:" + env["LAPSE_CONTROL_PORT"] + "/cert.pem")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("GET /cert.pem: %q", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.VerifyHostname("lapse"); err != nil {
		t.Errorf("lapse's certificate does not cover the service name: %v", err)
	}

	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^expired: Service Bus message (app-\w+) is in orders/\$deadletterqueue \(DeadLetterReason TTLExpiredException\)$`),
		regexp.MustCompile(`(?m)^expired: RabbitMQ message (app-\w+) is in orders.expired \(x-death reason expired\)$`),
		regexp.MustCompile(`(?m)^expired: Cosmos DB item (app-\w+) is gone from shop/carts \(404\)$`),
		regexp.MustCompile(`(?m)^event \d+: servicebus orders dead-lettered by rule SB-8: `),
		regexp.MustCompile(`(?m)^event \d+: rabbitmq \S*orders dead-lettered by rule RB-\d+: `),
		regexp.MustCompile(`(?m)^event \d+: cosmos shop/carts expired by rule CO-\d+: `),
	}
	for i := 1; i <= 2; i++ {
		var out strings.Builder
		if err := runApp(t, getenv, &out); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out.String())
		}
		for _, re := range want {
			if !re.MatchString(out.String()) {
				t.Errorf("run %d: no line %s in:\n%s", i, re, out.String())
			}
		}
		t.Logf("run %d:\n%s", i, out.String())
	}
}

// runApp runs the app with a deadline.
func runApp(t *testing.T, getenv func(string) string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	return run(ctx, getenv, out)
}
