package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/leakcheck"
	"github.com/lapse-emulator/lapse/server"
)

func TestMain(m *testing.M) {
	// gin decides its mode at init, before the test flags exist, and would
	// print every route; the binary sets release mode in main.
	gin.SetMode(gin.TestMode)
	leakcheck.VerifyTestMain(m)
}

// noEnv is an empty environment.
func noEnv(string) string { return "" }

// serveArgs returns the flags of a lapse on free ports with its data in
// dir, followed by more.
func serveArgs(dir string, more ...string) []string {
	return append([]string{"--data", dir,
		"--amqp-addr", ":0", "--amqps-addr", ":0", "--cosmos-addr", ":0", "--servicebus-admin-addr", ":0", "--servicebus-websocket-addr", ":0",
		"--rabbitmq-management-addr", ":0", "--control-addr", ":0",
	}, more...)
}

// MustStart runs the server's Main with every port ":0", its data in a
// fresh folder unless args give --data, and its log in the test's output.
// It is closed at the end of the test.
func MustStart(tb testing.TB, args ...string) *server.Main {
	tb.Helper()
	m := server.NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags(serveArgs(filepath.Join(tb.TempDir(), "data"), args...), noEnv); err != nil {
		tb.Fatal(err)
	}
	m.Logger = slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
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
	return scheme + "://" + dialable(m.Addrs()[name].String())
}

// controlURL is the base URL of m's control API.
func controlURL(m *server.Main) string { return listenerURL(m, "http", "control") }

// dialable turns a listening address such as "[::]:8080" into one to
// connect to.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// orders is a Service Bus queue whose messages live 10 minutes by default.
var orders = core.Entity{
	EntityKey: core.EntityKey{Protocol: core.ServiceBus, Name: "orders"},
	Kind:      "queue",
	Durable:   true,
	Policy: core.Policy{
		DefaultTTL: core.After(10 * time.Minute),
		Rules:      core.RuleIDs{DefaultTTL: "SB-2", ItemTTL: "SB-1", Expire: "SB-8"},
	},
}

// MustCreate creates an entity in m's engine.
func MustCreate(tb testing.TB, m *server.Main, en core.Entity) {
	tb.Helper()
	_, c, err := m.Engine.Create(m.Clock.Now(), en)
	if err == nil {
		err = c.Wait(context.Background())
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// MustEnqueue enqueues an item in m's engine and waits until it is stored.
func MustEnqueue(tb testing.TB, m *server.Main, k core.EntityKey, it core.Item) core.Item {
	tb.Helper()
	out, c, err := m.Engine.Enqueue(m.Clock.Now(), k, it)
	if err == nil {
		err = c.Wait(context.Background())
	}
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
