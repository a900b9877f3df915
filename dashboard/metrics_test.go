package dashboard

import (
	"bufio"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/prometheus/client_golang/prometheus"
)

// MustMetricsFixture returns a control API whose engine feeds a Metrics,
// both on one registry, with conns as the open connections.
func MustMetricsFixture(tb testing.TB, conns map[string]int) *fixture {
	tb.Helper()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	f := &fixture{
		engine: core.NewEngine(core.Config{ObserveLag: m.ObserveLag}),
		clock:  core.NewClock(func() time.Time { return t0 }),
	}
	f.server = NewServer(Config{
		Addr:        ":0",
		Engine:      f.engine,
		Clock:       f.clock,
		Registry:    reg,
		Connections: func() map[string]int { return conns },
	})
	return f
}

// scrape gets GET /metrics and returns its samples whose names start with
// prefix, one "name{labels} value" line each, sorted, and the TYPE of each
// of their families.
func (f *fixture) scrape(tb testing.TB, prefix string) (samples []string, types map[string]string) {
	tb.Helper()
	w := httptest.NewRecorder()
	f.server.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 200 {
		tb.Fatalf("GET /metrics: status %d: %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		tb.Fatalf("GET /metrics: Content-Type %q", ct)
	}
	types = map[string]string{}
	sc := bufio.NewScanner(w.Body)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			if strings.HasPrefix(name, prefix) {
				types[name] = typ
			}
			continue
		}
		if strings.HasPrefix(line, prefix) {
			samples = append(samples, line)
		}
	}
	slices.Sort(samples)
	return samples, types
}

// lines splits a test table's block of samples into sorted lines.
func lines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// rule: EM-4 — the lag histogram shows an expiry applied on time, and one
// applied late by a jump of the clock.
func TestMetrics_EM4(t *testing.T) {
	f := MustMetricsFixture(t, map[string]int{core.ServiceBus: 2, core.RabbitMQ: 0, core.Cosmos: 1})
	f.check(t, call{"POST", "/api/clock/freeze", "", 200, `{"now":"2026-01-02T03:04:05Z","mode":"frozen"}`})
	q := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	dlq := core.EntityKey{Protocol: core.ServiceBus, Name: "q/$DeadLetterQueue"}
	f.engine.Register(core.ServiceBus, core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		if _, err := tx.Enqueue(core.EntityKey{Protocol: from.Protocol, Name: from.DeadLetterQueue}, it); err != nil {
			t.Error(err)
		}
	}})
	f.MustCreate(t, core.Entity{EntityKey: q, Kind: "queue", DeadLetterQueue: dlq.Name, Policy: core.Policy{
		DefaultTTL: core.After(time.Minute), OnExpire: core.DeadLetter}})
	f.MustCreate(t, core.Entity{EntityKey: dlq, Kind: "deadletterqueue", Parent: q.Name})
	db := core.EntityKey{Protocol: core.Cosmos, Name: "db"}
	c := core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}
	f.MustCreate(t, core.Entity{EntityKey: db, Kind: "database"})
	f.MustCreate(t, core.Entity{EntityKey: c, Kind: "container", Parent: db.Name, Policy: core.Policy{
		DefaultTTL: core.After(10 * time.Second), Base: core.FromModified}})

	for range 3 {
		f.MustEnqueue(t, q, core.Item{Body: []byte("m")})
	}
	f.MustEnqueue(t, q, core.Item{State: core.Scheduled, ScheduledAt: t0.Add(time.Hour)})
	if _, ok, err := f.engine.Receive(f.clock.Now(), q, time.Time{}); !ok || err != nil {
		t.Fatalf("Receive = %v %v", ok, err)
	}
	for _, key := range []string{"a", "b"} {
		if _, _, err := f.engine.Put(f.clock.Now(), c, core.Item{Key: key}); err != nil {
			t.Fatal(err)
		}
	}
	// The documents expire on time; the clock then jumps 30s past the
	// messages' due time.
	f.check(t, call{"POST", "/api/clock/advance", `{"by":"10s"}`, 200, `{"now":"2026-01-02T03:04:15Z","mode":"frozen","applied":2}`})
	f.check(t, call{"POST", "/api/clock/advance", `{"by":"80s"}`, 200, `{"now":"2026-01-02T03:05:35Z","mode":"frozen","applied":2}`})

	// The database holds no items: it counts as an entity and shows
	// nothing more.

	got, types := f.scrape(t, "lapse_")
	want := lines(`
lapse_connections{protocol="cosmos"} 1
lapse_connections{protocol="rabbitmq"} 0
lapse_connections{protocol="servicebus"} 2
lapse_entities{kind="container",protocol="cosmos"} 1
lapse_entities{kind="database",protocol="cosmos"} 1
lapse_entities{kind="deadletterqueue",protocol="servicebus"} 1
lapse_entities{kind="queue",protocol="servicebus"} 1
lapse_items_received_total{entity="db/c",kind="container",protocol="cosmos"} 2
lapse_items_received_total{entity="q",kind="queue",protocol="servicebus"} 4
lapse_items_received_total{entity="q/$DeadLetterQueue",kind="deadletterqueue",protocol="servicebus"} 2
lapse_items_delivered_total{entity="db/c",kind="container",protocol="cosmos"} 0
lapse_items_delivered_total{entity="q",kind="queue",protocol="servicebus"} 1
lapse_items_delivered_total{entity="q/$DeadLetterQueue",kind="deadletterqueue",protocol="servicebus"} 0
lapse_items_expired_total{entity="db/c",kind="container",protocol="cosmos"} 2
lapse_items_expired_total{entity="q",kind="queue",protocol="servicebus"} 2
lapse_items_expired_total{entity="q/$DeadLetterQueue",kind="deadletterqueue",protocol="servicebus"} 0
lapse_items_dead_lettered_total{entity="db/c",kind="container",protocol="cosmos"} 0
lapse_items_dead_lettered_total{entity="q",kind="queue",protocol="servicebus"} 2
lapse_items_dead_lettered_total{entity="q/$DeadLetterQueue",kind="deadletterqueue",protocol="servicebus"} 0
lapse_items{entity="db/c",kind="container",protocol="cosmos",state="active"} 0
lapse_items{entity="db/c",kind="container",protocol="cosmos",state="deferred"} 0
lapse_items{entity="db/c",kind="container",protocol="cosmos",state="locked"} 0
lapse_items{entity="db/c",kind="container",protocol="cosmos",state="scheduled"} 0
lapse_items{entity="q",kind="queue",protocol="servicebus",state="active"} 0
lapse_items{entity="q",kind="queue",protocol="servicebus",state="deferred"} 0
lapse_items{entity="q",kind="queue",protocol="servicebus",state="locked"} 1
lapse_items{entity="q",kind="queue",protocol="servicebus",state="scheduled"} 1
lapse_items{entity="q/$DeadLetterQueue",kind="deadletterqueue",protocol="servicebus",state="active"} 2
lapse_items{entity="q/$DeadLetterQueue",kind="deadletterqueue",protocol="servicebus",state="deferred"} 0
lapse_items{entity="q/$DeadLetterQueue",kind="deadletterqueue",protocol="servicebus",state="locked"} 0
lapse_items{entity="q/$DeadLetterQueue",kind="deadletterqueue",protocol="servicebus",state="scheduled"} 0
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="0.001"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="0.005"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="0.01"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="0.025"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="0.05"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="0.1"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="0.25"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="0.5"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="1"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="5"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="60"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="3600"} 2
lapse_expiry_lag_seconds_bucket{action="expired",protocol="cosmos",le="+Inf"} 2
lapse_expiry_lag_seconds_sum{action="expired",protocol="cosmos"} 0
lapse_expiry_lag_seconds_count{action="expired",protocol="cosmos"} 2
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="0.001"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="0.005"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="0.01"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="0.025"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="0.05"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="0.1"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="0.25"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="0.5"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="1"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="5"} 0
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="60"} 2
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="3600"} 2
lapse_expiry_lag_seconds_bucket{action="dead-lettered",protocol="servicebus",le="+Inf"} 2
lapse_expiry_lag_seconds_sum{action="dead-lettered",protocol="servicebus"} 60
lapse_expiry_lag_seconds_count{action="dead-lettered",protocol="servicebus"} 2
`)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GET /metrics (-want +got):\n%s", d)
	}
	wantTypes := map[string]string{
		"lapse_connections":               "gauge",
		"lapse_entities":                  "gauge",
		"lapse_items":                     "gauge",
		"lapse_items_received_total":      "counter",
		"lapse_items_delivered_total":     "counter",
		"lapse_items_expired_total":       "counter",
		"lapse_items_dead_lettered_total": "counter",
		"lapse_expiry_lag_seconds":        "histogram",
	}
	if d := cmp.Diff(wantTypes, types); d != "" {
		t.Errorf("metric types (-want +got):\n%s", d)
	}
	if goSamples, _ := f.scrape(t, "go_goroutines"); len(goSamples) != 1 {
		t.Errorf("go_goroutines: %q, want the Go collector's gauge", goSamples)
	}
}

// A protocol or action the Metrics keep no observer at hand for is
// observed all the same.
func TestMetricsObserveLagOfAnyProtocol(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.ObserveLag("other", "gone", 3*time.Millisecond)
	m.ObserveLag(core.RabbitMQ, core.ActionDeletedIdle, 2*time.Hour)
	m.ObserveLag(core.RabbitMQ, core.ActionDeletedIdle, 0)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			var labels []string
			for _, l := range mt.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			got[strings.Join(labels, ",")] = mt.GetHistogram().GetSampleCount()
		}
	}
	want := map[string]uint64{"action=gone,protocol=other": 1, "action=deleted-idle,protocol=rabbitmq": 2}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("observations (-want +got):\n%s", d)
	}
}

// A server without a registry serves a private one: no lapse_ samples for
// an engine without entities nor connections, the Go runtime's all the
// same.
func TestMetricsOfAnEmptyEngineOnAPrivateRegistry(t *testing.T) {
	f := MustFixture(t)
	if samples, _ := f.scrape(t, "lapse_"); len(samples) != 0 {
		t.Errorf("lapse_ samples of an empty engine: %q", samples)
	}
	if samples, _ := f.scrape(t, "go_goroutines"); len(samples) != 1 {
		t.Errorf("go_goroutines: %q, want the Go collector's gauge", samples)
	}
}

// BenchmarkObserveLag is the cost ObserveLag adds to each expiry the engine
// applies, inside its lock.
func BenchmarkObserveLag(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry())
	for b.Loop() {
		m.ObserveLag(core.ServiceBus, core.ActionDeadLettered, 3*time.Millisecond)
	}
}
