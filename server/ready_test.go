package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/dashboard"
)

// issue 16.6: a client polls /healthz and /api/info from before Run starts
// (under go test -race: nothing races with Run). Each "listening" line of
// Run waits for one of its rounds, so that it sees lapse between any two
// listeners. Once /healthz says ok, /api/info lists every listener and
// each accepts a connection.
func TestHealthzOKOnlyOnceEveryListenerAccepts(t *testing.T) {
	control := freeLoopbackAddr(t)
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags(serveArgs(filepath.Join(t.TempDir(), "data"), "--control-addr", control), noEnv); err != nil {
		t.Fatal(err)
	}
	p := &readinessPoller{base: "http://" + control, asks: make(chan chan struct{}),
		c: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	m.Logger = slog.New(gateHandler{gate: p.waitRound})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(stop)
	}()
	err := m.Run(context.Background())
	// A few rounds more against a lapse that has started.
	for range 3 {
		p.waitRound()
	}
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Error(err)
	}
	for _, f := range p.failures {
		t.Error(f)
	}
	if p.healthy == 0 {
		t.Error("/healthz never answered ok")
	}
}

// freeLoopbackAddr returns a loopback address with a port free a moment
// ago, for a listener whose address a client must know before it binds.
func freeLoopbackAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// readinessPoller asks a starting lapse for /healthz and /api/info in
// rounds, and checks that what says ok is so.
type readinessPoller struct {
	base string
	c    *http.Client
	// asks are channels to close at the end of the next round to start.
	asks chan chan struct{}
	// failures and healthy (rounds where /healthz said ok) are written
	// by run only, read after it returned.
	failures []string
	healthy  int
}

// waitRound waits for a round of p that starts after the call (at most
// 10 s, so that a stuck poller cannot hang Run).
func (p *readinessPoller) waitRound() {
	done := make(chan struct{})
	select {
	case p.asks <- done:
	case <-time.After(10 * time.Second):
		return
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

// run polls until stop is closed.
func (p *readinessPoller) run(stop chan struct{}) {
	for {
		var waiting []chan struct{}
	collect:
		for {
			select {
			case <-stop:
				return
			case d := <-p.asks:
				waiting = append(waiting, d)
			default:
				break collect
			}
		}
		p.round()
		for _, d := range waiting {
			close(d)
		}
		if len(waiting) == 0 {
			time.Sleep(time.Millisecond) // lapse is between two log lines
		}
	}
}

// round asks /api/info (always, to race with Run if anything does), then
// /healthz; when it says ok, every listener must be in the info and accept
// a connection.
func (p *readinessPoller) round() {
	info, infoErr := p.info()
	resp, err := p.c.Get(p.base + "/healthz")
	if err != nil {
		return // not listening yet
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return
	}
	p.healthy++
	if infoErr != nil {
		// /api/info was asked first: it may have found the port closed.
		if info, infoErr = p.info(); infoErr != nil {
			p.failures = append(p.failures, fmt.Sprintf("/healthz ok, /api/info: %v", infoErr))
			return
		}
	}
	var missing []string
	for _, name := range []string{"amqp", "amqps", "cosmos", "servicebusAdmin", "servicebusWebSocket", "rabbitmqManagement", "control"} {
		l, ok := info[name]
		if !ok || !l.Served {
			missing = append(missing, name)
			continue
		}
		c, err := net.DialTimeout("tcp", dialable(l.Addr), 5*time.Second)
		if err != nil {
			p.failures = append(p.failures, fmt.Sprintf("/healthz ok, %s at %s: %v", name, l.Addr, err))
			continue
		}
		c.Close()
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		p.failures = append(p.failures, fmt.Sprintf("/healthz ok, /api/info without %v", missing))
	}
}

// info is GET /api/info's listeners.
func (p *readinessPoller) info() (map[string]dashboard.Listener, error) {
	resp, err := p.c.Get(p.base + "/api/info")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var body dashboard.Info
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	return body.Listeners, nil
}

// gateHandler is a log that writes nothing and calls gate at each
// "listening" line, which Run logs once a listener is bound.
type gateHandler struct{ gate func() }

func (h gateHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h gateHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "listening" {
		h.gate()
	}
	return nil
}
func (h gateHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h gateHandler) WithGroup(string) slog.Handler      { return h }
