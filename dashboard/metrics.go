package dashboard

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the metrics the engine feeds as it works, where the Server
// reads the rest at scrape time: lapse_expiry_lag_seconds {protocol,
// action}, how late each change a due time makes was applied (EM-4).
//
// The engine is made before the Server, so cmd wires them in three steps,
// one registry for both:
//
//	reg := prometheus.NewRegistry()
//	metrics := dashboard.NewMetrics(reg)
//	engine := core.NewEngine(core.Config{..., ObserveLag: metrics.ObserveLag})
//	...
//	dashboard.NewServer(dashboard.Config{..., Registry: reg, Connections: ...})
type Metrics struct {
	lag *prometheus.HistogramVec
	// obs caches lag's observer of each known protocol and action
	// (protocolIndex, actionIndex), made on first use, so that an
	// observation costs no label lookup: 100 k expiries at once are 100 k
	// observations inside the engine's lock.
	obs [lagProtocols][lagActions]atomic.Pointer[lagObserver]
}

// The numbers of protocols and actions whose observers Metrics caches.
const (
	lagProtocols = 3
	lagActions   = 4
)

type lagObserver struct{ prometheus.Observer }

// NewMetrics returns Metrics registered in reg. Pass its ObserveLag to
// core.Config and reg to Config.Registry.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	m := &Metrics{lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "lapse_expiry_lag_seconds",
		Help: "How late the engine applied each change a due time makes (EM-4): an item's expiry " +
			"(action expired, or dead-lettered when the expiry dead-letters it), a lock running out (lock-lost), " +
			"an idle deletion (deleted-idle). It is the time applied less the time due: the expiry runner's delay " +
			"in real time, and the whole jump when the clock is advanced or set past the due time, or lapse was down.",
		// Fine below EM-4's 50 ms, then coarse up to an hour for jumps of
		// the clock and downtimes.
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 5, 60, 3600},
	}, []string{"protocol", "action"})}
	reg.MustRegister(m.lag)
	return m
}

// ObserveLag records that a change of protocol's entity, action, was
// applied lag after its due time; it is core.Config.ObserveLag.
func (m *Metrics) ObserveLag(protocol string, action core.Action, lag time.Duration) {
	p, a := protocolIndex(protocol), actionIndex(action)
	if p < 0 || a < 0 {
		m.lag.WithLabelValues(protocol, string(action)).Observe(lag.Seconds())
		return
	}
	o := m.obs[p][a].Load()
	if o == nil {
		o = &lagObserver{m.lag.WithLabelValues(protocol, string(action))}
		m.obs[p][a].Store(o)
	}
	o.Observe(lag.Seconds())
}

// protocolIndex is protocol's index in Metrics.obs, -1 for none.
func protocolIndex(protocol string) int {
	switch protocol {
	case core.ServiceBus:
		return 0
	case core.RabbitMQ:
		return 1
	case core.Cosmos:
		return 2
	}
	return -1
}

// actionIndex is action's index in Metrics.obs, -1 for none.
func actionIndex(action core.Action) int {
	switch action {
	case core.ActionExpired:
		return 0
	case core.ActionDeadLettered:
		return 1
	case core.ActionLockLost:
		return 2
	case core.ActionDeletedIdle:
		return 3
	}
	return -1
}

// metricsRoutes serves GET /metrics: Config.Registry (a private one when
// it is nil) in the Prometheus text format, with what NewMetrics put there
// and these, registered here and read from the engine at each scrape:
// lapse_items_received_total, lapse_items_delivered_total,
// lapse_items_expired_total and lapse_items_dead_lettered_total {protocol,
// kind, entity} (counters, core.Stats); lapse_items {protocol, kind,
// entity, state} (gauge of the items in each state); lapse_entities
// {protocol, kind} (gauge); lapse_connections {protocol} (gauge, from
// Config.Connections); and the Go runtime's and the process's collectors
// (go_*, process_*). The per-entity metrics of an entity show once it has
// held an item since lapse started: exchanges, vhosts and databases,
// which never do, would only add zeros. A registry serves one Server.
func (s *Server) metricsRoutes(r *gin.Engine) {
	reg := s.cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	for _, c := range []prometheus.Collector{
		newEngineCollector(s.cfg.Engine, s.cfg.Clock, s.cfg.Connections),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			// Only a registry already serving another Server gets here.
			s.log.Error("metrics: a collector is registered already", "err", err)
		}
	}
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      promLogger{s},
		ErrorHandling: promhttp.ContinueOnError,
	})
	r.GET("/metrics", gin.WrapH(h))
}

// promLogger writes promhttp's errors to the server's log.
type promLogger struct{ s *Server }

func (l promLogger) Println(v ...any) {
	l.s.log.Error("metrics", "err", strings.TrimSuffix(fmt.Sprintln(v...), "\n"))
}

// engineCollector reads the engine's entities, and the connections, at each
// scrape.
type engineCollector struct {
	engine *core.Engine
	clock  *core.Clock
	conns  func() map[string]int

	received, delivered, expired, deadLettered *prometheus.Desc
	items, entities, connections               *prometheus.Desc
	sessions                                   *prometheus.Desc
}

func newEngineCollector(e *core.Engine, clock *core.Clock, conns func() map[string]int) *engineCollector {
	entity := []string{"protocol", "kind", "entity"}
	counter := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(name, help+" Counted since the entity was created or lapse started.", entity, nil)
	}
	return &engineCollector{
		engine: e, clock: clock, conns: conns,
		received: counter("lapse_items_received_total",
			"Items that came into the entity: sent, published, scheduled, written, or moved in as dead letters."),
		delivered: counter("lapse_items_delivered_total",
			"Times an item of the entity was handed to a consumer (received, taken, delivered); an item handed out again counts again."),
		expired: counter("lapse_items_expired_total",
			"Expiries applied to the entity's items, whether they dropped or dead-lettered the item."),
		deadLettered: counter("lapse_items_dead_lettered_total",
			"Items dead-lettered out of the entity, for any reason: expiry, rejection, a length or delivery limit."),
		items: prometheus.NewDesc("lapse_items",
			"Items in the entity by state: active, scheduled, locked, deferred. Dead letters are the items of the dead-letter entities.",
			[]string{"protocol", "kind", "entity", "state"}, nil),
		entities: prometheus.NewDesc("lapse_entities",
			"Entities by protocol and kind.", []string{"protocol", "kind"}, nil),
		connections: prometheus.NewDesc("lapse_connections",
			"Open client connections by protocol.", []string{"protocol"}, nil),
		sessions: prometheus.NewDesc("lapse_sessions",
			"Sessions of an entity with sessions (a Service Bus queue or subscription that requires sessions), held by a receiver or free: those with messages, a holder or a state.",
			[]string{"protocol", "kind", "entity", "state"}, nil),
	}
}

// Describe sends the descriptions of every metric Collect makes.
func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.received, c.delivered, c.expired, c.deadLettered, c.items, c.entities, c.connections, c.sessions} {
		ch <- d
	}
}

// Collect reads the engine's entities at the clock's time, and the
// connections.
func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	type protocolKind struct{ protocol, kind string }
	kinds := map[protocolKind]int{}
	now := c.clock.Now()
	for _, s := range c.engine.Stats(now) {
		// A label value must be UTF-8; a RabbitMQ queue name need not be.
		p, k, name := validUTF8(s.Protocol), validUTF8(s.Kind), validUTF8(s.Name)
		kinds[protocolKind{p, k}]++
		if s.Stats == (core.Stats{}) && s.Counts.Active == 0 && s.Counts.Scheduled == 0 && s.Counts.Locked == 0 && s.Counts.Deferred == 0 {
			// Nothing to show: an entity that holds no items (an exchange,
			// a vhost, a database), or a queue unused since lapse started.
			continue
		}
		send(ch, c.received, prometheus.CounterValue, float64(s.Stats.Received), p, k, name)
		send(ch, c.delivered, prometheus.CounterValue, float64(s.Stats.Delivered), p, k, name)
		send(ch, c.expired, prometheus.CounterValue, float64(s.Stats.Expired), p, k, name)
		send(ch, c.deadLettered, prometheus.CounterValue, float64(s.Stats.DeadLettered), p, k, name)
		// Dead letters are the items of the dead-letter entities:
		// counting Counts.InDeadLetterQueue too would count them twice.
		for _, x := range [...]struct {
			st core.State
			n  int
		}{{core.Active, s.Counts.Active}, {core.Scheduled, s.Counts.Scheduled}, {core.Locked, s.Counts.Locked}, {core.Deferred, s.Counts.Deferred}} {
			send(ch, c.items, prometheus.GaugeValue, float64(x.n), p, k, name, x.st.String())
		}
		c.collectSessions(ch, now, s.EntityKey, p, k, name)
	}
	for pk, n := range kinds {
		send(ch, c.entities, prometheus.GaugeValue, float64(n), pk.protocol, pk.kind)
	}
	if c.conns != nil {
		for p, n := range c.conns() {
			send(ch, c.connections, prometheus.GaugeValue, float64(n), validUTF8(p))
		}
	}
}

// collectSessions sends the held and free sessions of entity key, when it
// has sessions.
func (c *engineCollector) collectSessions(ch chan<- prometheus.Metric, now time.Time, key core.EntityKey, p, k, name string) {
	if en, ok := c.engine.Entity(key); !ok || !en.Policy.Sessions {
		return
	}
	in, err := c.engine.Sessions(now, key)
	if err != nil {
		return
	}
	held := 0
	for _, x := range in {
		if x.Holder != "" {
			held++
		}
	}
	send(ch, c.sessions, prometheus.GaugeValue, float64(held), p, k, name, "held")
	send(ch, c.sessions, prometheus.GaugeValue, float64(len(in)-held), p, k, name, "free")
}

// send sends one metric, or one that fails the scrape's error report
// without stopping the rest of it.
func send(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	ch <- m
}

func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
