package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/internal/leakcheck"
	"github.com/lapse-emulator/lapse/server"
)

func TestMain(m *testing.M) {
	// gin decides its mode at init, before the test flags exist, and would
	// print every route.
	gin.SetMode(gin.TestMode)
	if os.Getenv(childEnv) == "1" {
		os.Exit(runChild(os.Args[1:]))
	}
	leakcheck.VerifyTestMain(m)
}

// childEnv, set to 1, makes the test binary a command that the side by
// side tests start as a --server ({self}): runChild instead of the tests.
const childEnv = "LAPSE_BENCH_TEST_CHILD"

// runChild runs args as lapse does (`lapse serve` and its flags) when they
// start with lapse, or else as lapse-bench does, until SIGTERM.
func runChild(args []string) int {
	if len(args) > 1 && args[0] == "busy-once" {
		// busy-once MARKER ARGS...: the first start (no file MARKER yet)
		// ends as a server whose port was taken does; later ones run ARGS.
		if _, err := os.Stat(args[1]); errors.Is(err, fs.ErrNotExist) {
			if err := os.WriteFile(args[1], nil, 0o600); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Fprintln(os.Stderr, "lapse: cannot listen on 127.0.0.1:1 (Cosmos DB, --cosmos-addr): address already in use")
			return 1
		}
		args = args[2:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 || args[0] != "lapse" {
		return runBench(ctx, args, os.Stdout, os.Stderr)
	}
	m := server.NewMain()
	if err := m.ParseFlags(args[1:], os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	<-ctx.Done()
	if err := m.Close(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// MustStart runs lapse in-process (the server package's Main, as the lapse
// binary does) with every port ":0", its data in a fresh folder and a
// running clock, which sb-ttl-deadletter-realtime needs, and args. It is
// closed at the end of the test.
func MustStart(tb testing.TB, args ...string) *server.Main {
	tb.Helper()
	m := server.NewMain()
	m.Stderr = io.Discard
	all := append([]string{"--data", filepath.Join(tb.TempDir(), "data"),
		"--amqp-addr", ":0", "--amqps-addr", ":0", "--cosmos-addr", ":0", "--servicebus-admin-addr", ":0", "--servicebus-websocket-addr", ":0",
		"--rabbitmq-management-addr", ":0", "--control-addr", ":0",
	}, args...)
	if err := m.ParseFlags(all, func(string) string { return "" }); err != nil {
		tb.Fatal(err)
	}
	m.Logger = slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: m.Config.LogLevel}))
	if err := m.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := m.Close(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	return m
}

// listenerURL is scheme://host:port of m's listener name (as GET /api/info
// names it), on an address to connect to.
func listenerURL(m *server.Main, scheme, name string) string {
	addr := m.Addrs()[name].String()
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
	}
	return scheme + "://" + addr
}

// controlURL is the base URL of m's control API.
func controlURL(m *server.Main) string { return listenerURL(m, "http", "control") }

// mustGetJSON decodes the JSON answer of GET path on m's control API into out.
func mustGetJSON(tb testing.TB, m *server.Main, path string, out any) {
	tb.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(controlURL(m) + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
}
