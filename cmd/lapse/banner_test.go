package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/dashboard"
)

// MustServe runs `lapse serve args` as the binary does until the end of
// the test and returns its start-up banner: the rows by label, a row's
// continuation lines after it.
func MustServe(tb testing.TB, args ...string) map[string][]string {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &clienttest.Buffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"serve"}, args...), noEnv, io.Discard, stderr) }()
	tb.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			tb.Errorf("lapse serve: exit %d: %s", code, stderr.String())
		}
	})
	// Start-up takes milliseconds; the deadline is for a loaded machine.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "\n  Clock ") {
		select {
		case code := <-done:
			tb.Fatalf("lapse serve: exit %d: %s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no banner after 30 s: %s", stderr.String())
		}
	}
	_, banner, _ := strings.Cut(stderr.String(), " is ready (Ctrl-C stops it).\n\n")
	rows := map[string][]string{}
	last := ""
	for _, line := range strings.Split(banner, "\n") {
		if len(line) < 17 || !strings.HasPrefix(line, "  ") {
			continue
		}
		if label := strings.TrimSpace(line[2:15]); label != "" {
			last = label
		}
		rows[last] = append(rows[last], line[16:])
	}
	tb.Logf("banner:\n%s", banner)
	return rows
}

// issue 15.4: lapse serve prints its start-up banner on stderr once every
// listener is bound: the ports it shows are those bound (every port here
// is :0), the dashboard answers at the URL shown, and the clock's command
// as printed moves the clock. Main.Banner's test (package server) drives
// every protocol through the endpoints it shows.
func TestServePrintsTheBannerOnceListening(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	rows := MustServe(t, append(serveArgs(data), "--clock", "frozen")...)
	for _, label := range []string{"Dashboard", "Service Bus", "RabbitMQ", "Cosmos DB", "Data", "Clock"} {
		if len(rows[label]) == 0 {
			t.Errorf("the banner has no %s row: %q", label, rows)
		}
	}
	if len(rows["Dashboard"]) == 0 || len(rows["Clock"]) == 0 {
		t.FailNow()
	}
	dashboardURL := rows["Dashboard"][0]
	resp, err := http.Get(dashboardURL + "api/info")
	if err != nil {
		t.Fatal(err)
	}
	var info dashboard.Info
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := portOf(t, dashboardURL), portOf(t, info.Listeners["control"].Addr); got != want {
		t.Errorf("Dashboard %s: bound port %s", dashboardURL, want)
	}
	if got, want := rows["RabbitMQ"][0], "amqp://guest:guest@localhost:"+portOf(t, info.Listeners["amqp"].Addr)+"/"; got != want {
		t.Errorf("RabbitMQ: %q, want %q", got, want)
	}
	if got := rows["Data"][0]; got != data {
		t.Errorf("Data: %q, want %q", got, data)
	}
	advance, ok := strings.CutPrefix(rows["Clock"][0], "frozen; move it with: ")
	if !ok {
		t.Fatalf("Clock: %q", rows["Clock"][0])
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), strings.Fields(advance)[1:], noEnv, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), " frozen (") {
		t.Errorf("%s: exit %d, %q %q", advance, code, stdout.String(), stderr.String())
	}
}

// portOf is the port of a host:port or of a URL.
func portOf(tb testing.TB, s string) string {
	tb.Helper()
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		s = u.Host
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		tb.Fatalf("%q: %v", s, err)
	}
	return port
}
