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
	return out
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

// connDetails is a connection's name and peer, as *_details show them.
func connDetails(cn *conn) map[string]any {
	host, port := splitAddr(cn.nc.RemoteAddr().String())
	return map[string]any{"name": cn.name(), "peer_host": host, "peer_port": port}
}

// connectionJSON is a connection as GET /api/connections shows it. lapse
// keeps neither the client's properties, its authentication mechanism
// (shown as PLAIN) nor its byte counts.
func connectionJSON(cn *conn) map[string]any {
	host, port := splitAddr(cn.nc.LocalAddr().String())
	peerHost, peerPort := splitAddr(cn.nc.RemoteAddr().String())
	return map[string]any{
		"name":                      cn.name(),
		"node":                      mgmtNode,
		"vhost":                     cn.vhost,
		"user":                      cn.user.Name,
		"user_who_performed_action": cn.user.Name,
		"state":                     "running",
		"type":                      "network",
		"protocol":                  "AMQP 0-9-1",
		"host":                      host,
		"port":                      port,
		"peer_host":                 peerHost,
		"peer_port":                 peerPort,
		"ssl":                       false,
		"ssl_protocol":              nil,
		"ssl_key_exchange":          nil,
		"ssl_cipher":                nil,
		"ssl_hash":                  nil,
		"peer_cert_subject":         nil,
		"peer_cert_issuer":          nil,
		"peer_cert_validity":        nil,
		"auth_mechanism":            "PLAIN",
		"channels":                  len(cn.channelsCopy()),
		"channel_max":               cn.channelMax,
		"frame_max":                 cn.frameMax,
		"timeout":                   int(cn.heartbeat.Seconds()),
		"client_properties":         map[string]any{},
	}
}

// visibleConns returns the open connections of the path's vhost (every
// vhost without one) that the user may see.
func (m *Management) visibleConns(c *gin.Context) ([]*conn, bool) {
	vh, ok := m.vhostParam(c)
	if !ok {
		return nil, false
	}
	u := m.user(c)
	var out []*conn
	for _, cn := range m.s.openConns() {
		if (vh == "" || cn.vhost == vh) && u.seesUser(cn.user.Name) {
			out = append(out, cn)
		}
	}
	return out, true
}

// GET /api/connections and /api/vhosts/{vhost}/connections
func (m *Management) listConnections(c *gin.Context) {
	conns, ok := m.visibleConns(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	items := []map[string]any{}
	for _, cn := range conns {
		items = append(items, connectionJSON(cn))
	}
	m.replyList(c, items, []string{"vhost", "name"}, true)
}

// pathConn returns the connection the path names, if the user may see it.
func (m *Management) pathConn(c *gin.Context) *conn {
	conns, _ := m.visibleConns(c)
	name := m.param(c, "conn")
	for _, cn := range conns {
		if cn.name() == name {
			return cn
		}
	}
	return nil
}

// GET /api/connections/{name}
func (m *Management) getConnection(c *gin.Context) {
	cn := m.pathConn(c)
	if cn == nil {
		m.writeError(c, errObjectNotFound)
		return
	}
	m.reply(c, connectionJSON(cn))
}

// DELETE /api/connections/{name}: closes it with 320 CONNECTION_FORCED and
// the X-Reason header's reason.
func (m *Management) deleteConnection(c *gin.Context) {
	cn := m.pathConn(c)
	if cn == nil {
		m.writeError(c, errObjectNotFound)
		return
	}
	reason := c.GetHeader("X-Reason")
	if reason == "" {
		reason = "Closed via management plugin"
	}
	cn.forceClose(reason)
	noContent(c)
}

// channelJSON is a channel as GET /api/channels shows it.
func channelJSON(cn *conn, ch *channel) map[string]any {
	ch.mu.Lock()
	consumers, unacked := len(ch.consumers), 0
	// The channel's basic.qos count belongs to its reader goroutine; its
	// consumers keep the count they were made with.
	prefetch := int64(0)
	for _, cs := range ch.consumers {
		prefetch = max(prefetch, cs.prefetch)
	}
	for _, d := range ch.pending[ch.head:] {
		if !d.settled {
			unacked++
		}
	}
	ch.mu.Unlock()
	return map[string]any{
		"name":                      cn.name() + " (" + strconv.Itoa(int(ch.id)) + ")",
		"number":                    ch.id,
		"node":                      mgmtNode,
		"vhost":                     cn.vhost,
		"user":                      cn.user.Name,
		"user_who_performed_action": cn.user.Name,
		"connection_details":        connDetails(cn),
		"consumer_count":            consumers,
		"messages_unacknowledged":   unacked,
		"messages_unconfirmed":      0,
		"messages_uncommitted":      0,
		"acks_uncommitted":          0,
		"pending_raft_commands":     0,
		"prefetch_count":            prefetch,
		"global_prefetch_count":     ch.globalPrefetch.Load(),
		"state":                     "running",
		"transactional":             false,
		"confirm":                   false,
	}
}

// GET /api/channels and /api/vhosts/{vhost}/channels
func (m *Management) listChannels(c *gin.Context) {
	conns, ok := m.visibleConns(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	items := []map[string]any{}
	for _, cn := range conns {
		for _, ch := range cn.channelsCopy() {
			items = append(items, channelJSON(cn, ch))
		}
	}
	m.replyList(c, items, []string{"vhost", "name"}, true)
}

// consumerJSON is a consumer as GET /api/consumers shows it. Its channel
// and connection are read after the queue's lock, which orders the
// connection's handshake before.
func consumerJSON(cs *consumer) map[string]any {
	cn := cs.ch.c
	host, port := splitAddr(cn.nc.RemoteAddr().String())
	return map[string]any{
		"consumer_tag":    cs.tag,
		"exclusive":       cs.exclusive,
		"ack_required":    !cs.noAck,
		"prefetch_count":  cs.prefetch,
		"active":          true,
		"activity_status": "up",
		"arguments":       map[string]any{},
		"queue":           map[string]any{"name": cs.q.name, "vhost": cs.q.vhost},
		"channel_details": map[string]any{
			"name":            cn.name() + " (" + strconv.Itoa(int(cs.ch.id)) + ")",
			"number":          cs.ch.id,
			"connection_name": cn.name(),
			"peer_host":       host,
			"peer_port":       port,
			"node":            mgmtNode,
			"user":            cn.user.Name,
		},
	}
}

// GET /api/consumers[/{vhost}]
func (m *Management) listConsumers(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	u := m.user(c)
	items := []map[string]any{}
	for _, q := range m.s.queuesIn(vh) {
		if !u.seesVhost(q.vhost) {
			continue
		}
		for _, cs := range q.consumersCopy() {
			items = append(items, consumerJSON(cs))
		}
	}
	m.replyList(c, items, []string{"queue.vhost", "queue.name", "consumer_tag"}, false)
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
