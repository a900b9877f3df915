package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/leakcheck"
)

func TestMain(m *testing.M) {
	// gin decides its mode at init, before the test flags exist, and would
	// print every route; the binary sets release mode in main.
	gin.SetMode(gin.TestMode)
	leakcheck.VerifyTestMain(m)
}

// noEnv is an empty environment.
func noEnv(string) string { return "" }

// freePorts are the flags that put every listener on a free port.
var freePorts = []string{
	"--amqp-addr", ":0", "--amqps-addr", ":0", "--cosmos-addr", ":0", "--servicebus-admin-addr", ":0", "--servicebus-websocket-addr", ":0",
	"--rabbitmq-management-addr", ":0", "--control-addr", ":0",
}

// serveArgs returns the flags of a lapse on free ports with its data in
// dir, followed by more.
func serveArgs(dir string, more ...string) []string {
	return append(append([]string{"--data", dir}, freePorts...), more...)
}

// MustStart runs a Main with every port ":0", its data in a fresh folder
// unless args give --data, and its log in the test's output. It is closed
// at the end of the test.
func MustStart(tb testing.TB, args ...string) *Main {
	tb.Helper()
	return MustStartWall(tb, nil, args...)
}

// MustStartWall is MustStart with wall as the wall clock (nil for the real one).
func MustStartWall(tb testing.TB, wall func() time.Time, args ...string) *Main {
	tb.Helper()
	return mustStart(tb, wall, slog.LevelDebug, args...)
}

// MustStartQuiet is MustStart logging only warnings and errors, for a test
// whose many requests would bury its failures in CI's excerpt of the log.
func MustStartQuiet(tb testing.TB, args ...string) *Main {
	tb.Helper()
	return mustStart(tb, nil, slog.LevelWarn, args...)
}

func mustStart(tb testing.TB, wall func() time.Time, level slog.Level, args ...string) *Main {
	tb.Helper()
	m := NewMain()
	m.Stderr = io.Discard
	if wall != nil {
		m.Wall = wall
	}
	if err := m.ParseFlags(serveArgs(filepath.Join(tb.TempDir(), "data"), args...), noEnv); err != nil {
		tb.Fatal(err)
	}
	m.Logger = slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: level}))
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

// controlURL is the base URL of m's control API.
func controlURL(m *Main) string {
	return "http://" + dialable(m.Control.Addr().String())
}

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

// api is a client of a running lapse's control API.
type api struct {
	tb   testing.TB
	base string
	c    *http.Client
}

// MustAPI returns a client of m's control API.
func MustAPI(tb testing.TB, m *Main) *api {
	tb.Helper()
	tr := &http.Transport{}
	tb.Cleanup(tr.CloseIdleConnections)
	return &api{tb: tb, base: controlURL(m), c: &http.Client{Transport: tr}}
}

// do sends a request and decodes the JSON answer into out (when not nil),
// returning the status.
func (a *api) do(method, path, body string, out any) int {
	a.tb.Helper()
	req, err := http.NewRequest(method, a.base+path, strings.NewReader(body))
	if err != nil {
		a.tb.Fatal(err)
	}
	resp, err := a.c.Do(req)
	if err != nil {
		a.tb.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.tb.Fatal(err)
	}
	if out != nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(out); err != nil {
			a.tb.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

func (a *api) get(path string, out any) int { a.tb.Helper(); return a.do("GET", path, "", out) }
func (a *api) post(path, body string, out any) int {
	a.tb.Helper()
	return a.do("POST", path, body, out)
}

// MustCreate creates an entity in m's engine.
func MustCreate(tb testing.TB, m *Main, en core.Entity) {
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
func MustEnqueue(tb testing.TB, m *Main, k core.EntityKey, it core.Item) core.Item {
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
