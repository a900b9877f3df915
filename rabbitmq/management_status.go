package rabbitmq

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// This file is the management API's overview, connections, channels,
// consumers and health checks (rabbit_mgmt_wm_overview, _connection*,
// _channel*, _consumers, _aliveness_test, _health_check_*).

// rabbitVersion is the RabbitMQ version lapse speaks as.
const rabbitVersion = "3.10.8"

// exchangeTypesJSON are the exchange types of GET /api/overview.
func exchangeTypesJSON() []map[string]any {
	out := []map[string]any{}
	for _, t := range []string{"direct", "fanout", "headers", "topic"} {
		out = append(out, map[string]any{"name": t,
			"description": "AMQP " + t + " exchange, as per the AMQP specification", "enabled": true})
	}
	// The delayed-message exchange plugin's type (RB-15).
	return append(out, map[string]any{"name": delayedType, "description": "Delayed Message Exchange.", "enabled": true})
}

// listenerJSON is one listener of GET /api/overview.
func listenerJSON(protocol string, addr net.Addr) map[string]any {
	host, port := splitAddr(addr.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "::"
	}
	return map[string]any{"node": mgmtNode, "protocol": protocol, "ip_address": host, "port": port,
		"socket_opts": map[string]any{}}
}

// splitAddr splits "host:port".
func splitAddr(s string) (string, int) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return s, 0
	}
	port, _ := strconv.Atoi(p)
	return host, port
}

// listeners returns lapse's listeners this API knows of, by protocol.
func (m *Management) listeners() map[string]net.Addr {
	out := map[string]net.Addr{}
	if m.cfg.AMQPAddr != nil {
		if a := m.cfg.AMQPAddr(); a != nil {
			out["amqp"] = a
		}
	}
	if a := m.Addr(); a != nil {
		out["http"] = a
	}
	return out
}

// GET /api/overview. lapse keeps no message rates: message_stats is
// empty, and the counts are exact at once.
func (m *Management) getOverview(c *gin.Context) {
	u := m.user(c)
	now := m.s.now()
	ready, unacked, consumers, queues, exchanges := 0, 0, 0, 0, 0
	for _, q := range m.s.queuesIn("") {
		if !u.seesVhost(q.vhost) {
			continue
		}
		queues++
		if cnt, _, err := m.s.e.Counts(now, q.key); err == nil {
			ready += cnt.Active
			unacked += cnt.Locked
		}
		consumers += q.consumerCount()
	}
	for _, x := range m.s.exchangesIn("") {
		if u.seesVhost(x.vhost) {
			exchanges++
		}
	}
	conns, chans := 0, 0
	for _, cn := range m.s.openConns() {
		if u.seesUser(cn.user.Name) {
			conns++
			chans += len(cn.channelsCopy())
		}
	}
	ls := m.listeners()
	listeners := []map[string]any{}
	for _, p := range []string{"amqp", "http"} {
		if a := ls[p]; a != nil {
			listeners = append(listeners, listenerJSON(p, a))
		}
	}
	contexts := []map[string]any{}
	if a := ls["http"]; a != nil {
		_, port := splitAddr(a.String())
		contexts = append(contexts, map[string]any{"node": mgmtNode, "description": "RabbitMQ Management",
			"path": "/", "port": strconv.Itoa(port), "ssl_opts": []any{}})
	}
	m.reply(c, map[string]any{
		"management_version":  rabbitVersion,
		"rates_mode":          "none",
		"exchange_types":      exchangeTypesJSON(),
		"product_version":     rabbitVersion,
		"product_name":        "RabbitMQ",
		"rabbitmq_version":    rabbitVersion,
		"cluster_name":        mgmtNode,
		"erlang_version":      "lapse " + m.s.cfg.Version,
		"erlang_full_version": "lapse " + m.s.cfg.Version + ", a local emulator of RabbitMQ " + rabbitVersion + " written in Go",
		"disable_stats":       false,
		"enable_queue_totals": false,
		"message_stats":       map[string]any{},
		"queue_totals": map[string]any{
			"messages": ready + unacked, "messages_ready": ready, "messages_unacknowledged": unacked,
			"messages_details": rate(), "messages_ready_details": rate(), "messages_unacknowledged_details": rate(),
		},
		"object_totals": map[string]any{"channels": chans, "connections": conns, "consumers": consumers,
			"exchanges": exchanges, "queues": queues},
		"statistics_db_event_queue": 0,
		"node":                      mgmtNode,
		"listeners":                 listeners,
		"contexts":                  contexts,
	})
}

// GET /api/cluster-name
func (m *Management) getClusterName(c *gin.Context) {
	m.reply(c, map[string]any{"name": mgmtNode})
}

// alivenessQueue is the queue GET /api/aliveness-test declares.
const alivenessQueue = "aliveness-test"

// GET /api/aliveness-test/{vhost}: declares the queue aliveness-test,
// publishes a message to it and gets it back, as RabbitMQ does.
func (m *Management) alivenessTest(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	if _, _, _, err := m.s.queueDeclare(nil, vh, &wire.QueueDeclare{Queue: alivenessQueue}); err != nil {
		m.writeError(c, channelReplyError(err))
		return
	}
	if _, err := m.s.publish(vh, newAPIMessage("", alivenessQueue, wire.Properties{}, []byte("test_message"))); err != nil {
		m.writeError(c, channelReplyError(err))
		return
	}
	q := m.s.findQueue(vh, alivenessQueue)
	if q == nil {
		m.writeJSON(c, http.StatusServiceUnavailable, map[string]any{"status": "failed", "reason": "aliveness-test queue is empty"})
		return
	}
	if _, found, _, err := m.s.e.Take(m.s.now(), q.key); err != nil || !found {
		m.writeJSON(c, http.StatusServiceUnavailable, map[string]any{"status": "failed", "reason": "aliveness-test queue is empty"})
		return
	}
	m.reply(c, map[string]any{"status": "ok"})
}

// GET /api/health/checks/alarms, local-alarms and virtual-hosts: lapse has
// no memory or disk alarms, and its vhosts are always up.
func (m *Management) healthOK(c *gin.Context) { m.reply(c, map[string]any{"status": "ok"}) }

// GET /api/health/checks/port-listener/{port}
func (m *Management) healthPort(c *gin.Context) {
	port, err := strconv.Atoi(c.Param("port"))
	if err != nil {
		m.writeError(c, badRequest("Invalid port"))
		return
	}
	ports := []int{}
	for _, p := range []string{"amqp", "http"} {
		if a := m.listeners()[p]; a != nil {
			_, n := splitAddr(a.String())
			ports = append(ports, n)
			if n == port {
				m.reply(c, map[string]any{"status": "ok", "port": port})
				return
			}
		}
	}
	m.writeJSON(c, http.StatusServiceUnavailable, map[string]any{"status": "failed", "reason": "No active listener",
		"missing": port, "ports": ports})
}

// GET /api/health/checks/protocol-listener/{protocol}: lapse serves AMQP
// (0-9-1 here, 1.0 for Service Bus) and this HTTP API.
func (m *Management) healthProtocol(c *gin.Context) {
	proto := strings.ToLower(unescapeSegment(c.Param("proto")))
	switch proto {
	case "amqp091", "amqp0.9.1", "amqp0-9-1", "amqp0_9_1", "amqp10", "amqp1.0", "amqp1-0", "amqp1_0":
		proto = "amqp"
	case "http1", "http1.1", "http_api", "management", "management_ui", "ui":
		proto = "http"
	}
	if proto == "amqp" || proto == "http" {
		m.reply(c, map[string]any{"status": "ok", "protocol": proto})
		return
	}
	m.writeJSON(c, http.StatusServiceUnavailable, map[string]any{"status": "failed", "reason": "No active listener",
		"missing": proto, "protocols": []string{"amqp", "http"}})
}
