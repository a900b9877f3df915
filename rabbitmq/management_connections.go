package rabbitmq

import (
	"crypto/tls"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// This file is the management API's connections, channels and consumers
// (rabbit_mgmt_wm_connection*, _channel*, _consumers), with the fields
// RabbitMQ 3.10.8 shows for them except Erlang's own (garbage_collection,
// reductions) and rates, which lapse does not keep (every *_details.rate
// is 0). RabbitMQ fills these lists from its statistics, up to 5 s late;
// lapse shows a connection, its channels and consumers as they are now.

// connDetails is a connection's name and peer, as *_details show them.
func connDetails(cn *conn) map[string]any {
	host, port := splitAddr(cn.nc.RemoteAddr().String())
	return map[string]any{"name": cn.name(), "peer_host": host, "peer_port": port}
}

// connectionJSON is a connection as GET /api/connections shows it. A
// listing shows the TLS fields of a plain connection as null, the
// connection's own page as "" (single), as RabbitMQ does.
func connectionJSON(cn *conn, single bool) map[string]any {
	host, port := splitAddr(cn.nc.LocalAddr().String())
	peerHost, peerPort := splitAddr(cn.nc.RemoteAddr().String())
	var noTLS any
	if single {
		noTLS = ""
	}
	mechanism := cn.mechanism
	if mechanism == "" {
		mechanism = "PLAIN"
	}
	obj := map[string]any{
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
		"ssl_protocol":              noTLS,
		"ssl_key_exchange":          noTLS,
		"ssl_cipher":                noTLS,
		"ssl_hash":                  noTLS,
		"peer_cert_subject":         noTLS,
		"peer_cert_issuer":          noTLS,
		"peer_cert_validity":        noTLS,
		"auth_mechanism":            mechanism,
		"channels":                  len(cn.channelsCopy()),
		"channel_max":               cn.channelMax,
		"frame_max":                 cn.frameMax,
		"timeout":                   int(cn.heartbeat.Seconds()),
		"connected_at":              cn.connectedAt.UnixMilli(),
		"client_properties":         tableJSON(cn.clientProps),
		"recv_cnt":                  cn.framesRead.Load(),
		"recv_oct":                  cn.octetsRead.Load(),
		"recv_oct_details":          rate(),
		"send_cnt":                  cn.w.written.Load(),
		"send_oct":                  cn.w.octets.Load(),
		"send_oct_details":          rate(),
		"send_pend":                 0,
	}
	if tc, ok := cn.nc.(interface{ ConnectionState() tls.ConnectionState }); ok {
		st := tc.ConnectionState()
		kx, cipher, hash := tlsSuiteParts(st.Version, st.CipherSuite)
		obj["ssl"] = true
		obj["ssl_protocol"] = tlsProtocolName(st.Version)
		obj["ssl_key_exchange"], obj["ssl_cipher"], obj["ssl_hash"] = kx, cipher, hash
	}
	// RabbitMQ shows the connection_name a client gave as
	// user_provided_name too, and only then.
	if name, ok := cn.clientProps["connection_name"].(string); ok {
		obj["user_provided_name"] = name
	}
	return obj
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
		items = append(items, connectionJSON(cn, false))
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
	m.reply(c, connectionJSON(cn, true))
}

// defaultCloseReason is the explanation of DELETE /api/connections/{name}
// without an X-Reason header.
const defaultCloseReason = "Closed via management plugin"

// DELETE /api/connections/{name}: closes it with 320 CONNECTION_FORCED and
// the X-Reason header's text, or RabbitMQ's default text.
func (m *Management) deleteConnection(c *gin.Context) {
	cn := m.pathConn(c)
	if cn == nil {
		m.writeError(c, errObjectNotFound)
		return
	}
	reason := c.GetHeader("X-Reason")
	if reason == "" {
		reason = defaultCloseReason
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
		"transactional":             ch.txMode.Load(),
		"confirm":                   ch.confirmMode.Load(),
	}
}

// GET /api/channels and /api/vhosts/{vhost}/channels
func (m *Management) listChannels(c *gin.Context) {
	conns, ok := m.visibleConns(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	m.replyChannels(c, conns)
}

// GET /api/connections/{name}/channels. RabbitMQ answers 500 for a
// connection it does not know; lapse answers 404.
func (m *Management) listConnectionChannels(c *gin.Context) {
	cn := m.pathConn(c)
	if cn == nil {
		m.writeError(c, errObjectNotFound)
		return
	}
	m.replyChannels(c, []*conn{cn})
}

// replyChannels lists the channels of conns.
func (m *Management) replyChannels(c *gin.Context, conns []*conn) {
	items := []map[string]any{}
	for _, cn := range conns {
		for _, ch := range cn.channelsCopy() {
			items = append(items, channelJSON(cn, ch))
		}
	}
	m.replyList(c, items, []string{"vhost", "name"}, true)
}

// consumerJSON is a consumer as GET /api/consumers shows it; i is its
// place among its queue's consumers, the oldest first. Its channel and
// connection are read after the queue's lock, which orders the
// connection's handshake before. Of a single-active-consumer queue's
// consumers only the oldest is active, as RabbitMQ 3.10 shows them.
func consumerJSON(cs *consumer, i int) map[string]any {
	cn := cs.ch.c
	active, status := true, "up"
	if cs.q.singleActive {
		active, status = i == 0, "single_active"
		if !active {
			status = "waiting"
		}
	}
	host, port := splitAddr(cn.nc.RemoteAddr().String())
	return map[string]any{
		"consumer_tag":    cs.tag,
		"exclusive":       cs.exclusive,
		"ack_required":    !cs.noAck,
		"prefetch_count":  cs.prefetch,
		"active":          active,
		"activity_status": status,
		"arguments":       tableJSON(cs.args),
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
		for i, cs := range q.consumersCopy() {
			items = append(items, consumerJSON(cs, i))
		}
	}
	m.replyList(c, items, []string{"queue.vhost", "queue.name", "consumer_tag"}, false)
}

// tlsProtocolName is a TLS version as Erlang's ssl names it ("tlsv1.3").
func tlsProtocolName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "tlsv1.3"
	case tls.VersionTLS12:
		return "tlsv1.2"
	case tls.VersionTLS11:
		return "tlsv1.1"
	}
	return "tlsv1"
}

// tlsSuiteParts splits a cipher suite into the key exchange, cipher and
// hash Erlang's ssl reports for it: TLS_AES_128_GCM_SHA256 (TLS 1.3) is
// any, aes_128_gcm, sha256; TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 is
// ecdhe_rsa, aes_256_gcm, sha384.
func tlsSuiteParts(version, suite uint16) (kx, cipher, hash string) {
	name := strings.ToLower(strings.TrimPrefix(tls.CipherSuiteName(suite), "TLS_"))
	kx = "any"
	if i := strings.Index(name, "_with_"); i >= 0 {
		kx, name = name[:i], name[i+len("_with_"):]
	}
	if i := strings.LastIndexByte(name, '_'); i >= 0 {
		cipher, hash = name[:i], name[i+1:]
	}
	if version == tls.VersionTLS13 {
		kx = "any"
	}
	return kx, cipher, hash
}
