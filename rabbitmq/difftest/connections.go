package difftest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
)

// What the connection scenarios read of GET /api/connections, /channels
// and /consumers. RabbitMQ fills these lists from its statistics, up to
// about 5 s after the fact, so the helpers ask again until what the
// scenario waits for is there (at most infoTimeout of real time); lapse
// shows it at once. They record the values that do not change from run to
// run and, for the rest (addresses, ports, times, counters), whether they
// are what they must be.

// erlangOnly are the fields of RabbitMQ's replies that only an Erlang
// broker has, which lapse leaves out: its processes' memory and work.
var erlangOnly = []string{"garbage_collection", "reductions", "reductions_details"}

// getJSON GETs path (already escaped) and decodes the body; a transport
// error fails the scenario.
func (s *S) getJSON(path string) (int, any) {
	s.tb.Helper()
	status, body := s.mgmt(http.MethodGet, path, nil)
	var v any
	if status == http.StatusOK {
		if err := json.Unmarshal(body, &v); err != nil {
			s.tb.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
	return status, v
}

// awaitItem GETs the list at path until one of its objects satisfies
// match, and returns it, or nil after infoTimeout.
func (s *S) awaitItem(path string, match func(map[string]any) bool) map[string]any {
	s.tb.Helper()
	deadline := time.Now().Add(infoTimeout)
	for {
		if status, v := s.getJSON(path); status == http.StatusOK {
			items, _ := v.([]any)
			for _, it := range items {
				if m, ok := it.(map[string]any); ok && match(m) {
					return m
				}
			}
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// listed returns the connections of GET /api/connections whose client
// gave connection_name name.
func (s *S) listed(name string) []map[string]any {
	s.tb.Helper()
	_, v := s.getJSON("/api/connections")
	var out []map[string]any
	for _, it := range v.([]any) {
		if m := it.(map[string]any); clientName(m) == name {
			out = append(out, m)
		}
	}
	return out
}

// clientName is the connection_name a listed connection's client gave.
func clientName(conn map[string]any) string {
	cp, _ := conn["client_properties"].(map[string]any)
	name, _ := cp["connection_name"].(string)
	return name
}

// fieldNames writes an object's field names, sorted, without those only
// Erlang has and without skip.
func fieldNames(obj map[string]any, skip ...string) string {
	var names []string
	for k := range obj {
		if !slices.Contains(erlangOnly, k) && !slices.Contains(skip, k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return "[" + strings.Join(names, " ") + "]"
}

// jsonFields writes the named fields of obj as name=JSON, in the order
// given; an absent one as name=<absent>.
func jsonFields(obj map[string]any, names ...string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		v, ok := obj[n]
		if !ok {
			parts[i] = n + "=<absent>"
			continue
		}
		b, _ := json.Marshal(v) // maps marshal with sorted keys
		parts[i] = n + "=" + string(b)
	}
	return strings.Join(parts, " ")
}

// isNumber reports whether a decoded JSON value is a number.
func isNumber(v any) bool {
	_, ok := v.(float64)
	return ok
}

// brokerAddr is the host and port of the target's AMQP URL.
func (s *S) brokerAddr() (string, float64) {
	u, err := url.Parse(s.target.URL)
	if err != nil {
		s.tb.Fatalf("AMQP URL: %v", err)
	}
	var port float64
	fmt.Sscan(u.Port(), &port)
	return u.Hostname(), port
}

// Info records the connection as GET /api/connections lists it, once it
// shows channels channels and its counters: its fields, the values that are the same from
// run to run, and whether its name, ends, start time and counters are
// what they must be.
func (c *Conn) Info(channels int) map[string]any {
	s := c.s
	s.tb.Helper()
	conn := s.awaitItem("/api/connections", func(m map[string]any) bool {
		// RabbitMQ lists a connection before its first statistics, which
		// bring the octet counters.
		_, counted := m["recv_oct"]
		return clientName(m) == c.name && m["channels"] == float64(channels) && counted
	})
	if conn == nil {
		s.Note("GET /api/connections %q with %d channels: not listed", c.name, channels)
		return nil
	}
	s.Note("GET /api/connections %q: fields=%s", c.name, fieldNames(conn))
	s.Note("GET /api/connections %q: %s", c.name, jsonFields(conn, "user", "user_who_performed_action", "vhost",
		"state", "type", "protocol", "auth_mechanism", "channels", "channel_max", "frame_max", "timeout", "ssl",
		"ssl_protocol", "ssl_cipher", "ssl_hash", "ssl_key_exchange", "peer_cert_subject", "peer_cert_issuer",
		"peer_cert_validity", "user_provided_name", "client_properties", "send_pend"))
	c.checkEnds(conn)
	return conn
}

// checkEnds records whether a listed connection's name, ends, start time
// and counters are those of c.
func (c *Conn) checkEnds(conn map[string]any) {
	s := c.s
	local := c.conn.LocalAddr().String()
	peerHost, peerPortText, _ := net.SplitHostPort(local)
	var peerPort float64
	fmt.Sscan(peerPortText, &peerPort)
	host, port := s.brokerAddr()
	counters := true
	for _, k := range []string{"recv_cnt", "recv_oct", "send_cnt", "send_oct"} {
		counters = counters && isNumber(conn[k])
	}
	s.Note("connection %q: name is client -> broker: %t, peer is the client: %t, host and port are the broker's: %t, "+
		"connected_at is a number: %t, counters are numbers: %t", c.name,
		conn["name"] == local+" -> "+net.JoinHostPort(host, fmt.Sprint(port)),
		conn["peer_host"] == peerHost && conn["peer_port"] == peerPort,
		conn["host"] == host && conn["port"] == port, isNumber(conn["connected_at"]), counters)
}

// apiName is the connection's name in the management API: "client ->
// broker".
func (c *Conn) apiName() string {
	host, port := c.s.brokerAddr()
	return c.conn.LocalAddr().String() + " -> " + net.JoinHostPort(host, fmt.Sprint(port))
}

// Page records GET /api/connections/{name}: the TLS fields of the
// connection's own page and whether it is c.
func (c *Conn) Page() {
	s := c.s
	s.tb.Helper()
	status, v := s.getJSON("/api/connections/" + url.PathEscape(c.apiName()))
	if status != http.StatusOK {
		s.Note("GET /api/connections/{%s}: %d", c.name, status)
		return
	}
	conn := v.(map[string]any)
	s.Note("GET /api/connections/{%s}: %d fields=%s %s", c.name, status, fieldNames(conn),
		jsonFields(conn, "ssl_protocol", "ssl_cipher", "ssl_hash", "ssl_key_exchange", "peer_cert_subject",
			"peer_cert_issuer", "peer_cert_validity", "user_provided_name"))
	c.checkEnds(conn)
}

// Channels records GET /api/connections/{name}/channels once it lists a
// channel for each number of consumers in consumers (in channel order).
func (c *Conn) Channels(consumers ...int) {
	s := c.s
	s.tb.Helper()
	path := "/api/connections/" + url.PathEscape(c.apiName()) + "/channels"
	var items []any
	deadline := time.Now().Add(infoTimeout)
	for {
		status, v := s.getJSON(path)
		items, _ = v.([]any)
		if status == http.StatusOK && len(items) == len(consumers) {
			counts := make([]int, len(items))
			for i, it := range items {
				n, _ := it.(map[string]any)["consumer_count"].(float64)
				counts[i] = int(n)
			}
			if slices.Equal(counts, consumers) {
				break
			}
		}
		if time.Now().After(deadline) {
			s.Note("GET /api/connections/{%s}/channels: %d channels, not the %d awaited", c.name, len(items), len(consumers))
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, it := range items {
		ch := it.(map[string]any)
		details, _ := ch["connection_details"].(map[string]any)
		// idle_since shows only while the channel is idle by RabbitMQ's
		// reckoning, which lapse has none of.
		s.Note("channel %v of %q: fields=%s %s; named after the connection: %t, connection_details are the connection's: %t",
			ch["number"], c.name, fieldNames(ch, "idle_since"), jsonFields(ch, "number", "user", "user_who_performed_action",
				"vhost", "state", "consumer_count", "prefetch_count", "global_prefetch_count", "confirm", "transactional",
				"messages_unacknowledged", "messages_unconfirmed", "messages_uncommitted", "acks_uncommitted",
				"pending_raft_commands"),
			ch["name"] == fmt.Sprintf("%s (%v)", c.apiName(), ch["number"]),
			details["name"] == c.apiName() && fieldNames(details) == "[name peer_host peer_port]")
	}
}

// Consumer records the consumer tag on a queue of the scenario's, as GET
// /api/consumers/%2F lists it, once it is there: its fields and whether its channel_details are those of c.
func (c *Conn) Consumer(tag string) {
	s := c.s
	s.tb.Helper()
	cs := s.awaitItem("/api/consumers/%2F", func(m map[string]any) bool {
		q, _ := m["queue"].(map[string]any)
		name, _ := q["name"].(string)
		return m["consumer_tag"] == tag && strings.HasPrefix(name, s.prefix)
	})
	if cs == nil {
		s.Note("GET /api/consumers/%%2F %q: not listed", tag)
		return
	}
	details, _ := cs["channel_details"].(map[string]any)
	s.Note("GET /api/consumers/%%2F %q: fields=%s %s; channel_details fields=%s %s, the connection's: %t", tag,
		fieldNames(cs), jsonFields(cs, "consumer_tag", "queue", "arguments", "ack_required", "exclusive",
			"prefetch_count", "active", "activity_status"),
		fieldNames(details), jsonFields(details, "number", "user"),
		details["connection_name"] == c.apiName() && strings.HasPrefix(fmt.Sprint(details["name"]), c.apiName()+" ("))
}

// Delete records DELETE /api/connections/{name} of c, with an X-Reason
// header unless reason is "", and the close the client then gets.
func (c *Conn) Delete(reason string) {
	s := c.s
	s.tb.Helper()
	status, body := s.mgmtWith(http.MethodDelete, "/api/connections/"+url.PathEscape(c.apiName()), reason)
	line := fmt.Sprintf("DELETE /api/connections/{%s} X-Reason=%q: %d", c.name, reason, status)
	if status >= 300 {
		line += " " + errorReason(body)
	}
	s.Note("%s", line)
	select {
	case e, ok := <-c.closes:
		if !ok || e == nil {
			s.Note("connection %q: closed without an error", c.name)
			return
		}
		s.Note("connection %q: closed by the server %t: %d %s", c.name, e.Server, e.Code, e.Reason)
	case <-time.After(arrivalTimeout):
		s.Note("connection %q: still open", c.name)
	}
}

// CountListed records how many connections of GET /api/connections have
// connection_name name once there are want of them (RabbitMQ drops a
// closed connection from its statistics a little later).
func (s *S) CountListed(name string, want int) {
	s.tb.Helper()
	deadline := time.Now().Add(infoTimeout)
	for {
		got := len(s.listed(name))
		if got == want || time.Now().After(deadline) {
			s.Note("GET /api/connections: %d named %q", got, name)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// mgmtWith is mgmt with an X-Reason header when reason is not "".
func (s *S) mgmtWith(method, path, reason string) (int, []byte) {
	s.tb.Helper()
	var header http.Header
	if reason != "" {
		header = http.Header{"X-Reason": {reason}}
	}
	status, b, err := s.mgmtDo(method, path, nil, header)
	if err != nil {
		s.tb.Fatal(err)
	}
	return status, b
}

// Slash records, for each path, the status of GET path and of GET path/,
// how many of the scenario's objects the first shows and whether the
// second shows the same (by name, or by consumer tag). A
// path's "{name}" stands for the connection's escaped name.
func (c *Conn) Slash(paths ...string) {
	s := c.s
	s.tb.Helper()
	for _, label := range paths {
		p := strings.ReplaceAll(label, "{name}", url.PathEscape(c.apiName()))
		st1, v1 := s.getJSON(p)
		st2, v2 := s.getJSON(p + "/")
		mine := func(v any) []string { return objectKeys(v, s.prefix, c.apiName()) }
		s.Note("GET %s: %d, GET %s/: %d, the scenario's objects: %d, the same: %t", label, st1, label, st2,
			len(mine(v1)), slices.Equal(mine(v1), mine(v2)))
	}
}

// objectKeys names the objects of a reply: a list's names (or consumer
// tags), sorted, or an object's name. A list keeps only the objects that
// mention one of marks (the scenario's names, its connection's name): other
// tests may have connections of their own on the broker.
func objectKeys(v any, marks ...string) []string {
	key := func(m map[string]any) string {
		if t, ok := m["consumer_tag"]; ok {
			return fmt.Sprint(t)
		}
		return fmt.Sprint(m["name"])
	}
	ours := func(m map[string]any) bool {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // a connection's name has a ">"
		enc.Encode(m)
		for _, mark := range marks {
			if strings.Contains(b.String(), mark) {
				return true
			}
		}
		return false
	}
	switch v := v.(type) {
	case []any:
		out := []string{}
		for _, it := range v {
			if m, ok := it.(map[string]any); ok && ours(m) {
				out = append(out, key(m))
			}
		}
		sort.Strings(out)
		return out
	case map[string]any:
		return []string{key(v)}
	}
	return nil
}
