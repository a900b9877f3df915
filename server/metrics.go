package server

import (
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/dashboard"
	"github.com/prometheus/client_golang/prometheus"
)

// newMetrics returns the one Prometheus registry of lapse, which GET
// /metrics on the control port serves, and the metrics the engine feeds
// in it (its core.Config.ObserveLag).
func newMetrics() (*prometheus.Registry, *dashboard.Metrics) {
	reg := prometheus.NewRegistry()
	return reg, dashboard.NewMetrics(reg)
}

// connections returns the open client connections of each protocol, for
// the metrics.
func (m *Main) connections() map[string]int {
	out := map[string]int{}
	if m.SB != nil {
		out[core.ServiceBus] = m.SB.Connections()
	}
	if m.Rabbit != nil {
		out[core.RabbitMQ] = m.Rabbit.Connections()
	}
	if m.Cosmos != nil {
		out[core.Cosmos] = m.Cosmos.Connections()
	}
	return out
}

// registerSandboxMetrics adds lapse_sandboxes, the number of live
// sandboxes, to reg.
func registerSandboxMetrics(reg *prometheus.Registry, s *sandboxes) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "lapse_sandboxes",
		Help: "Sandboxes alive: worlds of their own, with their own clock, beside the default one.",
	}, func() float64 { return float64(s.count.Load()) }))
}
