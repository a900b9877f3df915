package rabbitmq_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

// MustDialNamed opens an amqp091-go connection that gives its name in the
// connection_name client property, closed at the end of the test.
func (f *fixture) MustDialNamed(name string) *amqp.Connection {
	f.tb.Helper()
	cfg := amqp.Config{Properties: amqp.NewConnectionProperties()}
	cfg.Properties.SetClientConnectionName(name)
	conn, err := amqp.DialConfig(f.url, cfg)
	if err != nil {
		f.tb.Fatal(err)
	}
	f.tb.Cleanup(func() { conn.Close() })
	return conn
}

// connectionNamed returns the connection of GET /api/connections whose
// client gave connection_name name.
func (a *api) connectionNamed(name string) map[string]any {
	a.tb.Helper()
	for _, c := range a.get("/api/connections").([]any) {
		cp, _ := c.(map[string]any)["client_properties"].(map[string]any)
		if cp["connection_name"] == name {
			return c.(map[string]any)
		}
	}
	a.tb.Fatalf("no connection named %q", name)
	return nil
}

// issue 13.7: GET /api/connections shows a connection as RabbitMQ 3.10 does,
// with the client's properties (connection_name, product, version,
// capabilities), the user, vhost, both ends, its channels and when it
// connected; the connection's own page shows the TLS fields as "" where
// the listing has null.
func TestManagementConnectionShowsClientProperties(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	conn := f.MustDialNamed("orders-service")
	for range 2 {
		if _, err := conn.Channel(); err != nil {
			t.Fatal(err)
		}
	}
	got := a.connectionNamed("orders-service")
	host, port, _ := splitHostPort(f.ln.Addr().String())
	peerHost, peerPort, _ := splitHostPort(conn.LocalAddr().String())
	want := map[string]any{
		"name": peerHost + ":" + peerPort + " -> " + host + ":" + port, "user": "guest", "vhost": "/",
		"user_who_performed_action": "guest", "user_provided_name": "orders-service", "state": "running",
		"type": "network", "protocol": "AMQP 0-9-1", "auth_mechanism": "PLAIN", "host": host, "port": n(port),
		"peer_host": peerHost, "peer_port": n(peerPort), "channels": n("2"), "ssl": false, "ssl_protocol": nil,
		"peer_cert_subject": nil, "frame_max": n("131072"), "channel_max": n("2047"), "timeout": n("10"),
		"connected_at": n(strconv.FormatInt(t0.UnixMilli(), 10)),
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	if diff := cmp.Diff(want, obj(t, got, keys...)); diff != "" {
		t.Errorf("connection (-want +got):\n%s", diff)
	}
	cp := got["client_properties"].(map[string]any)
	caps, _ := cp["capabilities"].(map[string]any)
	if cp["product"] != "AMQP 0.9.1 Client" || cp["platform"] != "golang" || cp["version"] == nil ||
		caps["consumer_cancel_notify"] != true || caps["connection.blocked"] != true {
		t.Errorf("client_properties %v", cp)
	}
	for _, k := range []string{"recv_cnt", "recv_oct", "send_cnt", "send_oct"} {
		if v, _ := got[k].(json.Number).Int64(); v <= 0 {
			t.Errorf("%s = %v, want a count above 0", k, got[k])
		}
	}
	one := a.get("/api/connections/" + url.PathEscape(got["name"].(string))).(map[string]any)
	if diff := cmp.Diff(map[string]any{"name": got["name"], "ssl_protocol": "", "peer_cert_subject": "",
		"user_provided_name": "orders-service"}, obj(t, one, "name", "ssl_protocol", "peer_cert_subject", "user_provided_name")); diff != "" {
		t.Errorf("the connection's page (-want +got):\n%s", diff)
	}
	// A connection without a name has no user_provided_name.
	f.MustDial()
	for _, c := range a.get("/api/connections").([]any) {
		m := c.(map[string]any)
		if _, named := m["client_properties"].(map[string]any)["connection_name"]; !named {
			if _, ok := m["user_provided_name"]; ok {
				t.Errorf("an unnamed connection shows user_provided_name: %v", m)
			}
		}
	}
}

// issue 13.7: a connection's channels, all channels and the consumers show
// RabbitMQ's fields: the channel's confirm and transactional modes, the
// consumer's arguments.
func TestManagementChannelsAndConsumers(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	conn := f.MustDialNamed("worker")
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, ch, "jobs", nil)
	if _, err := ch.Consume("jobs", "c1", false, false, false, false, amqp.Table{"x-priority": int32(5)}); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Tx(); err != nil {
		t.Fatal(err)
	}
	name := a.connectionNamed("worker")["name"].(string)
	chans := a.get("/api/connections/" + url.PathEscape(name) + "/channels").([]any)
	if len(chans) != 2 {
		t.Fatalf("channels of the connection: %v", chans)
	}
	for i, want := range []map[string]any{
		{"number": n("1"), "confirm": true, "transactional": false, "consumer_count": n("1"), "name": name + " (1)",
			"connection_details": map[string]any{"name": name, "peer_host": "127.0.0.1", "peer_port": chans[0].(map[string]any)["connection_details"].(map[string]any)["peer_port"]}},
		{"number": n("2"), "confirm": false, "transactional": true, "consumer_count": n("0"), "name": name + " (2)"},
	} {
		keys := []string{"number", "confirm", "transactional", "consumer_count", "name"}
		if _, ok := want["connection_details"]; ok {
			keys = append(keys, "connection_details")
		}
		if diff := cmp.Diff(want, obj(t, chans[i], keys...)); diff != "" {
			t.Errorf("channel %d (-want +got):\n%s", i+1, diff)
		}
	}
	if all := a.get("/api/channels").([]any); len(all) != 2 {
		t.Errorf("GET /api/channels: %v", all)
	}
	cons := a.get("/api/consumers").([]any)
	if diff := cmp.Diff(map[string]any{"consumer_tag": "c1", "arguments": map[string]any{"x-priority": n("5")},
		"active": true, "activity_status": "up", "exclusive": false}, obj(t, cons[0], "consumer_tag", "arguments", "active",
		"activity_status", "exclusive")); len(cons) != 1 || diff != "" {
		t.Errorf("consumers %v (-want +got):\n%s", cons, diff)
	}
	a.must(http.MethodGet, "/api/connections/nope/channels", nil, http.StatusNotFound)
}

// issue 13.7: a path with a trailing slash is served as the path without
// it, as RabbitMQ serves it, not redirected.
func TestManagementTrailingSlashServedNotRedirected(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	conn := f.MustDialNamed("slash")
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, ch, "q", nil)
	if _, err := ch.Consume("q", "c1", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	name := url.PathEscape(a.connectionNamed("slash")["name"].(string))
	a.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, p := range []string{"/api/connections", "/api/connections/" + name, "/api/connections/" + name + "/channels",
		"/api/vhosts/%2F/connections", "/api/channels", "/api/consumers", "/api/consumers/%2F", "/api/queues/%2F",
		"/api/queues/%2F/q", "/api/overview"} {
		plain := a.must(http.MethodGet, p, nil, http.StatusOK)
		slash := a.do(http.MethodGet, p+"/", nil)
		if slash.status != http.StatusOK {
			t.Errorf("GET %s/: %d %s, want 200", p, slash.status, slash.body)
			continue
		}
		if p == "/api/overview" {
			continue // its totals are the same, but not worth comparing field by field
		}
		if diff := cmp.Diff(plain.json(t), slash.json(t)); diff != "" {
			t.Errorf("GET %s/ differs from GET %s (-plain +slash):\n%s", p, p, diff)
		}
	}
}

// deleteConnection calls DELETE /api/connections/{name}, with an X-Reason
// header when reason is not "".
func (a *api) deleteConnection(name, reason string) {
	a.tb.Helper()
	req, err := http.NewRequest(http.MethodDelete, a.base+"/api/connections/"+url.PathEscape(name), nil)
	if err != nil {
		a.tb.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	if reason != "" {
		req.Header.Set("X-Reason", reason)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		a.tb.Fatalf("DELETE connection %q: %d, want 204", name, resp.StatusCode)
	}
}

// issue 13.7: DELETE /api/connections/{name} closes the connection with 320
// CONNECTION_FORCED and the text of X-Reason, or RabbitMQ's default text.
func TestManagementDeleteConnectionWithAndWithoutReason(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	for i, c := range []struct{ reason, want string }{
		{"", "CONNECTION_FORCED - Closed via management plugin"},
		{"maintenance window", "CONNECTION_FORCED - maintenance window"},
	} {
		name := "doomed-" + strconv.Itoa(i)
		conn := f.MustDialNamed(name)
		closed := conn.NotifyClose(make(chan *amqp.Error, 1))
		a.deleteConnection(a.connectionNamed(name)["name"].(string), c.reason)
		select {
		case e := <-closed:
			if e == nil || e.Code != 320 || e.Reason != c.want || !e.Server {
				t.Errorf("X-Reason %q: closed with %+v, want 320 %q from the server", c.reason, e, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("X-Reason %q: the connection was not closed", c.reason)
		}
	}
}

// issue 13.7: deleting a vhost closes its connections with 320
// CONNECTION_FORCED - vhost '<name>' is down, RabbitMQ 3.10's text.
func TestManagementDeleteVhostClosesItsConnections(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	a.must(http.MethodPut, "/api/vhosts/shop", nil, http.StatusCreated)
	a.must(http.MethodPut, "/api/permissions/shop/guest", map[string]string{"configure": ".*", "write": ".*", "read": ".*"},
		http.StatusNoContent)
	conn, err := amqp.Dial(f.url + "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	a.must(http.MethodDelete, "/api/vhosts/shop", nil, http.StatusNoContent)
	select {
	case e := <-closed:
		if e == nil || e.Code != 320 || e.Reason != "CONNECTION_FORCED - vhost 'shop' is down" {
			t.Errorf("closed with %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the connection was not closed")
	}
}
