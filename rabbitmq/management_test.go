package rabbitmq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/rabbitmq"
	amqp "github.com/rabbitmq/amqp091-go"
)

// api is a management API on a fixture's server, on a random port.
type api struct {
	tb     testing.TB
	f      *fixture
	m      *rabbitmq.Management
	base   string
	client *http.Client
}

// MustManagement starts the management API next to f's AMQP listener;
// it is closed (twice, which must be safe) at the end of the test.
func MustManagement(tb testing.TB, f *fixture) *api {
	tb.Helper()
	return mustManagementWith(tb, f, func(*rabbitmq.ManagementConfig) {})
}

// mustManagementWith is MustManagement with its config passed through set.
func mustManagementWith(tb testing.TB, f *fixture, set func(*rabbitmq.ManagementConfig)) *api {
	tb.Helper()
	// gin prints every route in its default debug mode (the binary sets
	// release mode in main); SetMode is atomic.
	gin.SetMode(gin.TestMode)
	cfg := rabbitmq.ManagementConfig{Addr: "127.0.0.1:0", Server: f.s,
		AMQPAddr: func() net.Addr { return f.ln.Addr() }}
	set(&cfg)
	m := rabbitmq.NewManagement(cfg)
	if err := m.Open(); err != nil {
		tb.Fatal(err)
	}
	tr := &http.Transport{}
	tb.Cleanup(func() {
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			tb.Errorf("closing the management API: %v", err)
		}
		if err := m.Close(ctx); err != nil {
			tb.Errorf("closing the management API twice: %v", err)
		}
	})
	return &api{tb: tb, f: f, m: m, base: "http://" + m.Addr().String(), client: &http.Client{Transport: tr}}
}

// mustChannelAs opens a channel as user on vhost vh of f's server.
func mustChannelAs(tb testing.TB, f *fixture, user, pass, vh string) *amqp.Channel {
	tb.Helper()
	conn, err := amqp.Dial("amqp://" + user + ":" + pass + "@" + f.ln.Addr().String() + "/" + url.PathEscape(vh))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatal(err)
	}
	return ch
}

// reply is an HTTP reply.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the reply's body.
func (r reply) json(tb testing.TB) any {
	tb.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("reply %d %q: %v", r.status, r.body, err)
	}
	return v
}

// do calls the API as guest; body is JSON-encoded unless it is a string.
func (a *api) do(method, path string, body any) reply {
	a.tb.Helper()
	return a.doAs("guest", "guest", method, path, body)
}

// doAs calls the API as user ("" sends no credentials).
func (a *api) doAs(user, pass, method, path string, body any) reply {
	a.tb.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			a.tb.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.tb.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.tb.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		a.tb.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: raw}
}

// must calls the API as guest and checks the status.
func (a *api) must(method, path string, body any, status int) reply {
	a.tb.Helper()
	r := a.do(method, path, body)
	if r.status != status {
		a.tb.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, status)
	}
	return r
}

// get returns the decoded JSON of a GET that must answer 200.
func (a *api) get(path string) any {
	a.tb.Helper()
	return a.must(http.MethodGet, path, nil, http.StatusOK).json(a.tb)
}

// obj picks keys of a decoded JSON object; numbers become json.Number.
func obj(tb testing.TB, v any, keys ...string) map[string]any {
	tb.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		tb.Fatalf("%v is not an object", v)
	}
	out := map[string]any{}
	for _, k := range keys {
		if x, ok := m[k]; ok {
			out[k] = x
		}
	}
	return out
}

// n is a JSON number as the replies decode.
func n(s string) json.Number { return json.Number(s) }

// errBody is an error reply's body.
func errBody(kind, reason string) map[string]any {
	return map[string]any{"error": kind, "reason": reason}
}

func TestManagementQueueDeclaredOverAMQPShowsItsCountsAtOnce(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	MustDeclare(t, ch, "orders", amqp.Table{"x-message-ttl": int32(60000), "x-dead-letter-exchange": "dlx"})
	for _, body := range []string{"a", "bb", "ccc"} {
		MustPublish(t, ch, "", "orders", amqp.Publishing{Body: []byte(body)})
	}
	if _, ok, err := ch.Get("orders", false); err != nil || !ok {
		t.Fatalf("basic.get: %v %v", ok, err)
	}
	// No statistics lag: the counts are there without waiting.
	got := obj(t, a.get("/api/queues/%2F/orders"), "name", "vhost", "type", "durable", "auto_delete", "exclusive",
		"arguments", "policy", "operator_policy", "effective_policy_definition", "messages", "messages_ready",
		"messages_unacknowledged", "message_bytes_ready", "consumers", "state", "node")
	want := map[string]any{"name": "orders", "vhost": "/", "type": "classic", "durable": false, "auto_delete": false,
		"exclusive": false, "arguments": map[string]any{"x-message-ttl": n("60000"), "x-dead-letter-exchange": "dlx"},
		"policy": nil, "operator_policy": nil, "effective_policy_definition": map[string]any{},
		"messages": n("3"), "messages_ready": n("2"), "messages_unacknowledged": n("1"),
		"message_bytes_ready": n("5"), "consumers": n("0"), "state": "running", "node": "rabbit@lapse"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET /api/queues/%%2F/orders (-want +got):\n%s", diff)
	}
	list := a.get("/api/queues/%2F?columns=name,messages").([]any)
	if diff := cmp.Diff([]any{map[string]any{"name": "orders", "messages": n("3")}}, list); diff != "" {
		t.Errorf("GET /api/queues/%%2F (-want +got):\n%s", diff)
	}
	a.must(http.MethodGet, "/api/queues/%2F/nope", nil, http.StatusNotFound)
	if diff := cmp.Diff(errBody("Object Not Found", "Not Found"), a.do(http.MethodGet, "/api/queues/nope", nil).json(t)); diff != "" {
		t.Errorf("unknown vhost (-want +got):\n%s", diff)
	}
}

func TestManagementPutQueueIsUsableOverAMQP(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	body := map[string]any{"durable": true, "auto_delete": false, "arguments": map[string]any{"x-message-ttl": 60000}}
	a.must(http.MethodPut, "/api/queues/%2F/jobs", body, http.StatusCreated)
	a.must(http.MethodPut, "/api/queues/%2F/jobs", body, http.StatusNoContent)
	for _, tc := range []struct {
		name string
		body any
		want map[string]any
	}{
		{"Inequivalent", map[string]any{"durable": true, "arguments": map[string]any{"x-message-ttl": 6000}},
			errBody("bad_request", "inequivalent arg 'x-message-ttl' for queue 'jobs' in vhost '/': received '6000' but current is '60000'")},
		{"InequivalentDurable", map[string]any{"durable": false, "arguments": map[string]any{"x-message-ttl": 60000}},
			errBody("bad_request", "inequivalent arg 'durable' for queue 'jobs' in vhost '/': received 'false' but current is 'true'")},
		{"NotBoolean", map[string]any{"durable": "yes"}, map[string]any{"error": "bad_request", "reason": []any{"not_boolean", "yes"}}},
		{"NotJSON", "nonsense", errBody("bad_request", "not_json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(http.MethodPut, "/api/queues/%2F/jobs", tc.body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d %s, want 400", r.status, r.body)
			}
			if diff := cmp.Diff(tc.want, r.json(t)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct {
		name, path string
		body       any
		status     int
		want       map[string]any
	}{
		{"InvalidArg", "/api/queues/%2F/neg", map[string]any{"arguments": map[string]any{"x-message-ttl": -1}}, 400,
			errBody("bad_request", "invalid arg 'x-message-ttl' for queue 'neg' in vhost '/': {value_negative,-1}")},
		{"StringTTL", "/api/queues/%2F/str", map[string]any{"arguments": map[string]any{"x-message-ttl": "1000"}}, 400,
			errBody("bad_request", `invalid arg 'x-message-ttl' for queue 'str' in vhost '/': "expected integer, got longstr"`)},
		{"FloatTTL", "/api/queues/%2F/flt", map[string]any{"arguments": map[string]any{"x-message-ttl": 1.5}}, 400,
			errBody("bad_request", `invalid arg 'x-message-ttl' for queue 'flt' in vhost '/': "expected integer, got double"`)},
		{"ReservedName", "/api/queues/%2F/amq.x", map[string]any{}, 401, errBody("not_authorised", "Access refused.")},
		{"NoVhost", "/api/queues/nope/q", map[string]any{}, 404, errBody("not_found", "vhost_not_found")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(http.MethodPut, tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d %s, want %d", r.status, r.body, tc.status)
			}
			if diff := cmp.Diff(tc.want, r.json(t)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	ch := f.MustChannel()
	// The JSON integer is a long: the same number of any integer width is
	// equivalent.
	if _, err := ch.QueueDeclare("jobs", true, false, false, false, amqp.Table{"x-message-ttl": int32(60000)}); err != nil {
		t.Fatalf("redeclaring over AMQP: %v", err)
	}
	MustPublish(t, ch, "", "jobs", amqp.Publishing{Body: []byte("job")})
	f.advance(59 * time.Second)
	if got := drain(t, ch, "jobs"); !cmp.Equal(got, []string{"job"}) {
		t.Errorf("got %q, want the job", got)
	}
	MustPublish(t, ch, "", "jobs", amqp.Publishing{Body: []byte("late")})
	f.advance(60 * time.Second)
	if got := drain(t, ch, "jobs"); got != nil {
		t.Errorf("got %q after the TTL of the HTTP-declared queue", got)
	}

	a.must(http.MethodDelete, "/api/queues/%2F/jobs", nil, http.StatusNoContent)
	a.must(http.MethodDelete, "/api/queues/%2F/jobs", nil, http.StatusNotFound)
	if _, err := f.MustChannel().QueueDeclarePassive("jobs", true, false, false, false, nil); err == nil {
		t.Error("the queue deleted over HTTP is still there")
	}
}

func TestManagementDeleteAndPurgeQueue(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	MustDeclare(t, ch, "q", nil)
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("m")})
	r := a.do(http.MethodDelete, "/api/queues/%2F/q?if-empty=true", nil)
	if diff := cmp.Diff(errBody("bad_request", "queue 'q' in vhost '/' not empty"), r.json(t)); r.status != 400 || diff != "" {
		t.Errorf("if-empty: %d (-want +got):\n%s", r.status, diff)
	}
	a.must(http.MethodDelete, "/api/queues/%2F/q/contents", nil, http.StatusNoContent)
	if got := count(t, ch, "q"); got != 0 {
		t.Errorf("%d messages after the purge", got)
	}
	if _, err := ch.Consume("q", "c1", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	r = a.do(http.MethodDelete, "/api/queues/%2F/q?if-unused=true", nil)
	if diff := cmp.Diff(errBody("bad_request", "queue 'q' in vhost '/' in use"), r.json(t)); r.status != 400 || diff != "" {
		t.Errorf("if-unused: %d (-want +got):\n%s", r.status, diff)
	}
	a.must(http.MethodDelete, "/api/queues/%2F/q/contents", nil, http.StatusNoContent)
	a.must(http.MethodDelete, "/api/queues/%2F/nope/contents", nil, http.StatusNotFound)
}

func TestManagementPublishAndGet(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	a.must(http.MethodPut, "/api/queues/%2F/inbox", map[string]any{}, http.StatusCreated)
	publish := func(body map[string]any) reply {
		t.Helper()
		return a.do(http.MethodPost, "/api/exchanges/%2F/amq.default/publish", body)
	}
	props := map[string]any{"content_type": "text/plain", "delivery_mode": 2, "priority": 3, "correlation_id": "c",
		"reply_to": "r", "message_id": "m", "timestamp": 1700000000, "type": "t", "user_id": "guest", "app_id": "a",
		"expiration": "60000", "headers": map[string]any{"h": 1, "s": "x", "f": 2.5, "l": []any{1, "a"}, "t": map[string]any{"a": true}}}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		want   any
	}{
		{"WithProperties", map[string]any{"properties": props, "routing_key": "inbox", "payload": "hello", "payload_encoding": "string"},
			200, map[string]any{"routed": true}},
		{"Base64", map[string]any{"properties": map[string]any{}, "routing_key": "inbox", "payload": "aGVsbG8=", "payload_encoding": "base64"},
			200, map[string]any{"routed": true}},
		{"NotUTF8", map[string]any{"properties": map[string]any{}, "routing_key": "inbox", "payload": "/w==", "payload_encoding": "base64"},
			200, map[string]any{"routed": true}},
		{"Unroutable", map[string]any{"properties": map[string]any{}, "routing_key": "nowhere", "payload": "x", "payload_encoding": "string"},
			200, map[string]any{"routed": false}},
		{"BadExpiration", map[string]any{"properties": map[string]any{"expiration": "abc"}, "routing_key": "inbox", "payload": "x", "payload_encoding": "string"},
			400, errBody("bad_request", "406 PRECONDITION_FAILED - invalid expiration 'abc': no_integer")},
		{"OtherUserID", map[string]any{"properties": map[string]any{"user_id": "bob"}, "routing_key": "inbox", "payload": "x", "payload_encoding": "string"},
			400, errBody("bad_request", "406 PRECONDITION_FAILED - user_id property set to 'bob' but authenticated user was 'guest'")},
		{"NotInt", map[string]any{"properties": map[string]any{"delivery_mode": "x"}, "routing_key": "inbox", "payload": "x", "payload_encoding": "string"},
			400, map[string]any{"error": "bad_request", "reason": []any{"not_int", "delivery_mode"}}},
		{"MissingKeys", map[string]any{"routing_key": "inbox", "payload": "x"},
			400, errBody("bad_request", "[{key_missing,properties},{key_missing,payload_encoding}]")},
		{"Encoding", map[string]any{"properties": map[string]any{}, "routing_key": "inbox", "payload": "x", "payload_encoding": "hex"},
			400, map[string]any{"error": "bad_request", "reason": []any{"unsupported_encoding", "hex"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := publish(tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d %s, want %d", r.status, r.body, tc.status)
			}
			if diff := cmp.Diff(tc.want, r.json(t)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	r := a.do(http.MethodPost, "/api/exchanges/%2F/nope/publish",
		map[string]any{"properties": map[string]any{}, "routing_key": "k", "payload": "x", "payload_encoding": "string"})
	if diff := cmp.Diff(errBody("bad_request", "404 NOT_FOUND - no exchange 'nope' in vhost '/'"), r.json(t)); r.status != 400 || diff != "" {
		t.Errorf("unknown exchange: %d (-want +got):\n%s", r.status, diff)
	}

	get := func(body map[string]any) reply {
		t.Helper()
		return a.do(http.MethodPost, "/api/queues/%2F/inbox/get", body)
	}
	r = get(map[string]any{"count": 5, "ackmode": "ack_requeue_true", "encoding": "auto", "truncate": 50000})
	wantProps := map[string]any{"content_type": "text/plain", "delivery_mode": n("2"), "priority": n("3"),
		"correlation_id": "c", "reply_to": "r", "message_id": "m", "timestamp": n("1700000000"), "type": "t",
		"user_id": "guest", "app_id": "a", "expiration": "60000",
		"headers": map[string]any{"h": n("1"), "s": "x", "f": n("2.5"), "l": []any{n("1"), "a"}, "t": map[string]any{"a": true}}}
	want := []any{
		map[string]any{"payload_bytes": n("5"), "redelivered": false, "exchange": "", "routing_key": "inbox",
			"message_count": n("2"), "properties": wantProps, "payload": "hello", "payload_encoding": "string"},
		map[string]any{"payload_bytes": n("5"), "redelivered": false, "exchange": "", "routing_key": "inbox",
			"message_count": n("1"), "properties": []any{}, "payload": "hello", "payload_encoding": "string"},
		map[string]any{"payload_bytes": n("1"), "redelivered": false, "exchange": "", "routing_key": "inbox",
			"message_count": n("0"), "properties": []any{}, "payload": "/w==", "payload_encoding": "base64"},
	}
	if diff := cmp.Diff(want, r.json(t)); r.status != 200 || diff != "" {
		t.Fatalf("get: %d (-want +got):\n%s", r.status, diff)
	}
	// ack_requeue_true put them back, redelivered.
	r = get(map[string]any{"count": 1, "ackmode": "reject_requeue_true", "encoding": "base64", "truncate": 3})
	got := obj(t, r.json(t).([]any)[0], "payload", "payload_encoding", "payload_bytes", "redelivered", "message_count")
	if diff := cmp.Diff(map[string]any{"payload": "aGVs", "payload_encoding": "base64", "payload_bytes": n("5"),
		"redelivered": true, "message_count": n("2")}, got); diff != "" {
		t.Errorf("get base64, truncated (-want +got):\n%s", diff)
	}
	r = get(map[string]any{"count": -1, "ackmode": "ack_requeue_false", "encoding": "auto"})
	if l := r.json(t).([]any); len(l) != 3 {
		t.Errorf("a negative count got %d messages, want all 3", len(l))
	}
	if l := get(map[string]any{"count": 1, "ackmode": "ack_requeue_false", "encoding": "auto"}).json(t).([]any); len(l) != 0 {
		t.Errorf("got %d messages from the emptied queue", len(l))
	}
	for _, tc := range []struct {
		name   string
		path   string
		body   map[string]any
		status int
		want   any
	}{
		{"GetEncoding", "inbox", map[string]any{"count": 1, "ackmode": "ack_requeue_true", "encoding": "x"}, 400,
			errBody("bad_request", "Unsupported encoding. Please use auto or base64.")},
		{"Missing", "inbox", map[string]any{"ackmode": "ack_requeue_true", "encoding": "auto"}, 400,
			errBody("bad_request", "[{key_missing,count}]")},
		{"NoQueue", "nope", map[string]any{"count": 1, "ackmode": "ack_requeue_true", "encoding": "auto"}, 404,
			errBody("not_found", "NOT_FOUND - no queue 'nope' in vhost '/'")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(http.MethodPost, "/api/queues/%2F/"+tc.path+"/get", tc.body)
			if diff := cmp.Diff(tc.want, r.json(t)); r.status != tc.status || diff != "" {
				t.Errorf("status %d, want %d (-want +got):\n%s", r.status, tc.status, diff)
			}
		})
	}
}

func TestManagementGetRejectDeadLetters(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	dlq := withDLQ(t, ch, "work", nil)
	MustPublish(t, ch, "", "work", amqp.Publishing{Body: []byte("m")})
	a.must(http.MethodPost, "/api/queues/%2F/work/get",
		map[string]any{"count": 1, "ackmode": "reject_requeue_false", "encoding": "auto"}, http.StatusOK)
	if got := drain(t, ch, dlq); !cmp.Equal(got, []string{"m"}) {
		t.Errorf("dead-lettered %q, want the rejected message", got)
	}
}

// issue 31.6: a get that requeues (ack_requeue_true) is a return, as a
// client's requeue is: a quorum queue with x-delivery-limit 0 drops the
// message after it, as RabbitMQ 3.10.8 did when tried (its second get came
// back empty), and a get of it first shows x-delivery-count 0.
func TestManagementGetRequeueCountsTowardsDeliveryLimit(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	if _, err := ch.QueueDeclare("limited", true, false, false, false,
		amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(0)}); err != nil {
		t.Fatal(err)
	}
	MustPublish(t, ch, "", "limited", amqp.Publishing{Body: []byte("m")})
	get := map[string]any{"count": 1, "ackmode": "ack_requeue_true", "encoding": "auto"}
	first := a.do(http.MethodPost, "/api/queues/%2F/limited/get", get).json(t).([]any)
	if len(first) != 1 {
		t.Fatalf("first get: %v", first)
	}
	headers := first[0].(map[string]any)["properties"].(map[string]any)["headers"]
	if diff := cmp.Diff(map[string]any{"x-delivery-count": n("0")}, headers); diff != "" {
		t.Errorf("first get's headers (-want +got):\n%s", diff)
	}
	if again := a.do(http.MethodPost, "/api/queues/%2F/limited/get", get).json(t).([]any); len(again) != 0 {
		t.Errorf("second get: %v, want none: the requeue passed the delivery limit", again)
	}
}

func TestManagementPolicyAppliesToQueues(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	MustDeclare(t, ch, "p.q", nil)
	MustDeclare(t, ch, "other", nil)
	pol := map[string]any{"pattern": "^p\\.", "definition": map[string]any{"message-ttl": 60000, "dead-letter-exchange": "dlx"},
		"priority": 1, "apply-to": "queues"}
	a.must(http.MethodPut, "/api/policies/%2F/ttl", pol, http.StatusCreated)
	a.must(http.MethodPut, "/api/policies/%2F/ttl", pol, http.StatusNoContent)
	a.must(http.MethodPut, "/api/operator-policies/%2F/cap",
		map[string]any{"pattern": ".*", "definition": map[string]any{"message-ttl": 30000}, "apply-to": "queues"}, http.StatusCreated)

	got := obj(t, a.get("/api/queues/%2F/p.q"), "policy", "operator_policy", "effective_policy_definition")
	want := map[string]any{"policy": "ttl", "operator_policy": "cap",
		"effective_policy_definition": map[string]any{"message-ttl": n("30000"), "dead-letter-exchange": "dlx"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("p.q under the policies (-want +got):\n%s", diff)
	}
	wantList := []any{map[string]any{"vhost": "/", "name": "ttl", "pattern": "^p\\.", "apply-to": "queues",
		"definition": map[string]any{"message-ttl": n("60000"), "dead-letter-exchange": "dlx"}, "priority": n("1")}}
	if diff := cmp.Diff(wantList, a.get("/api/policies/%2F")); diff != "" {
		t.Errorf("GET /api/policies/%%2F (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(obj(t, wantList[0], "name", "pattern"), obj(t, a.get("/api/policies/%2F/ttl"), "name", "pattern")); diff != "" {
		t.Errorf("GET one policy (-want +got):\n%s", diff)
	}

	// The operator policy's lower TTL wins: messages published now expire
	// after 30 s.
	MustPublish(t, ch, "", "p.q", amqp.Publishing{Body: []byte("m")})
	MustPublish(t, ch, "", "other", amqp.Publishing{Body: []byte("m")})
	f.advance(30*time.Second - time.Millisecond)
	if got := obj(t, a.get("/api/queues/%2F/p.q"), "messages"); !cmp.Equal(got, map[string]any{"messages": n("1")}) {
		t.Errorf("1 ms before the TTL: %v", got)
	}
	f.advance(time.Millisecond)
	if got := count(t, ch, "p.q"); got != 0 {
		t.Errorf("%d messages in p.q after its policy TTL", got)
	}
	if got := count(t, ch, "other"); got != 0 {
		t.Errorf("%d messages in other after the operator policy TTL", got)
	}

	for _, tc := range []struct {
		name, path string
		body       any
		want       map[string]any
	}{
		{"NegativeTTL", "/api/policies/%2F/bad", map[string]any{"pattern": ".*", "definition": map[string]any{"message-ttl": -5}},
			errBody("bad_request", "Validation failed\n\n-5 is not a valid message TTL\n")},
		{"ZeroExpires", "/api/policies/%2F/bad", map[string]any{"pattern": ".*", "definition": map[string]any{"expires": 0}},
			errBody("bad_request", "Validation failed\n\n0 is not a valid queue expiry\n")},
		{"Unknown", "/api/policies/%2F/bad", map[string]any{"pattern": ".*", "definition": map[string]any{"foo": "x"}},
			errBody("bad_request", "Validation failed\n\n[{&lt;&lt;\"foo\"&gt;&gt;,&lt;&lt;\"x\"&gt;&gt;}] are not recognised policy settings\n")},
		{"OperatorDLX", "/api/operator-policies/%2F/bad", map[string]any{"pattern": ".*", "definition": map[string]any{"dead-letter-exchange": "x"}},
			errBody("bad_request", "Validation failed\n\n[{<<\"dead-letter-exchange\">>,<<\"x\">>}] are not recognised policy settings\n")},
		{"MissingPattern", "/api/policies/%2F/bad", map[string]any{"definition": map[string]any{"message-ttl": 5}},
			errBody("bad_request", "[{key_missing,pattern}]")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(http.MethodPut, tc.path, tc.body)
			if diff := cmp.Diff(tc.want, r.json(t)); r.status != 400 || diff != "" {
				t.Errorf("status %d (-want +got):\n%s", r.status, diff)
			}
		})
	}

	a.must(http.MethodDelete, "/api/policies/%2F/ttl", nil, http.StatusNoContent)
	a.must(http.MethodDelete, "/api/operator-policies/%2F/cap", nil, http.StatusNoContent)
	a.must(http.MethodGet, "/api/policies/%2F/ttl", nil, http.StatusNotFound)
	a.must(http.MethodDelete, "/api/policies/%2F/ttl", nil, http.StatusNotFound)
	got = obj(t, a.get("/api/queues/%2F/p.q"), "policy", "operator_policy", "effective_policy_definition")
	want = map[string]any{"policy": nil, "operator_policy": nil, "effective_policy_definition": map[string]any{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the policies went (-want +got):\n%s", diff)
	}
}

func TestManagementAuthentication(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	a.must(http.MethodPut, "/api/users/nobody", map[string]any{"password": "pw", "tags": ""}, http.StatusCreated)
	a.must(http.MethodPut, "/api/users/viewer", map[string]any{"password": "pw", "tags": "management"}, http.StatusCreated)
	a.must(http.MethodPut, "/api/users/maker", map[string]any{"password": "pw", "tags": []string{"policymaker"}}, http.StatusCreated)
	a.must(http.MethodPut, "/api/permissions/%2F/maker", map[string]any{"configure": ".*", "write": ".*", "read": ".*"}, http.StatusCreated)
	a.must(http.MethodPut, "/api/vhosts/other", nil, http.StatusCreated)

	t.Run("NoCredentials", func(t *testing.T) {
		r := a.doAs("", "", http.MethodGet, "/api/overview", nil)
		if r.status != 401 || len(r.body) != 0 || r.header.Get("WWW-Authenticate") != `Basic realm="RabbitMQ Management"` {
			t.Errorf("got %d %q %q", r.status, r.body, r.header.Get("WWW-Authenticate"))
		}
	})
	for _, tc := range []struct {
		name, user, pass, method, path string
		status                         int
		want                           map[string]any
	}{
		{"WrongPassword", "guest", "nope", "GET", "/api/overview", 401, errBody("not_authorized", "Login failed")},
		{"UnknownUser", "ghost", "pw", "GET", "/api/overview", 401, errBody("not_authorized", "Login failed")},
		{"NoTags", "nobody", "pw", "GET", "/api/overview", 401, errBody("not_authorised", "Not management user")},
		{"NotAdministrator", "viewer", "pw", "GET", "/api/users", 401, errBody("not_authorised", "Not administrator user")},
		{"NoVhostAccess", "viewer", "pw", "GET", "/api/queues/%2F", 401, errBody("not_authorised", "User not authorised to access virtual host")},
		{"PolicymakerElsewhere", "maker", "pw", "PUT", "/api/policies/other/p", 401, errBody("not_authorised", "User not authorised to access object")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.method == "PUT" {
				body = map[string]any{"pattern": ".*", "definition": map[string]any{"message-ttl": 5}}
			}
			r := a.doAs(tc.user, tc.pass, tc.method, tc.path, body)
			if diff := cmp.Diff(tc.want, r.json(t)); r.status != tc.status || diff != "" {
				t.Errorf("status %d (-want +got):\n%s", r.status, diff)
			}
			if got := r.header.Get("WWW-Authenticate") != ""; got != (tc.want["error"] == "not_authorized") {
				t.Errorf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	if r := a.doAs("maker", "pw", "PUT", "/api/policies/%2F/p",
		map[string]any{"pattern": ".*", "definition": map[string]any{"message-ttl": 5}}); r.status != 201 {
		t.Errorf("a policymaker's policy: %d %s", r.status, r.body)
	}
	if diff := cmp.Diff(map[string]any{"name": "maker", "tags": []any{"policymaker"}},
		a.doAs("maker", "pw", "GET", "/api/whoami", nil).json(t)); diff != "" {
		t.Errorf("whoami (-want +got):\n%s", diff)
	}
	// A management user sees only the vhosts it may use.
	if got := a.doAs("viewer", "pw", "GET", "/api/vhosts", nil).json(t); !cmp.Equal(got, []any{}) {
		t.Errorf("viewer's vhosts: %v", got)
	}
	// The users made over HTTP log in over AMQP too.
	conn, err := amqp.Dial(strings.Replace(f.url, "guest:guest", "maker:pw", 1))
	if err != nil {
		t.Fatalf("maker over AMQP: %v", err)
	}
	conn.Close()
}

func TestManagementLifecycle(t *testing.T) {
	f := MustServer(t)
	ctx := context.Background()
	idle := rabbitmq.NewManagement(rabbitmq.ManagementConfig{Addr: "127.0.0.1:0", Server: f.s})
	if err := idle.Close(ctx); err != nil {
		t.Errorf("Close before Open: %v", err)
	}
	if idle.Addr() != nil {
		t.Errorf("Addr before Open: %v", idle.Addr())
	}
	a := MustManagement(t, f)
	if err := a.m.Open(); err == nil {
		t.Error("a second Open succeeded")
	}
	taken := rabbitmq.NewManagement(rabbitmq.ManagementConfig{Addr: a.m.Addr().String(), Server: f.s})
	if err := taken.Open(); err == nil {
		taken.Close(ctx)
		t.Error("Open on a taken port succeeded")
	}
	r := a.do(http.MethodPatch, "/api/queues", nil)
	if r.status != http.StatusMethodNotAllowed || len(r.body) != 0 {
		t.Errorf("PATCH: %d %q", r.status, r.body)
	}
	// The handler serves without a listener too.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/whoami", nil)
	req.SetBasicAuth("guest", "guest")
	a.m.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("Handler: %d %s", rec.Code, rec.Body)
	}
}

// issue 31.6: a single-active-consumer queue names its active consumer,
// the oldest, and shows the others waiting, with the fields and values
// RabbitMQ 3.10.8's management API gives (read from the real broker:
// single_active_consumer_tag, active, activity_status "single_active" or
// "waiting"); when the active one is cancelled the next one takes over.
func TestManagementSingleActiveConsumer(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	MustDeclare(t, ch, "sac", amqp.Table{"x-single-active-consumer": true})
	for _, tag := range []string{"first", "second"} {
		if _, err := ch.Consume("sac", tag, false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	status := func() map[string]any {
		q := a.get("/api/queues/%2F/sac").(map[string]any)
		out := map[string]any{"tag": q["single_active_consumer_tag"]}
		for _, c := range q["consumer_details"].([]any) {
			c := c.(map[string]any)
			out[c["consumer_tag"].(string)] = fmt.Sprint(c["active"], " ", c["activity_status"])
		}
		return out
	}
	want := map[string]any{"tag": "first", "first": "true single_active", "second": "false waiting"}
	if diff := cmp.Diff(want, status()); diff != "" {
		t.Errorf("two consumers (-want +got):\n%s", diff)
	}
	if err := ch.Cancel("first", false); err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"tag": "second", "second": "true single_active"}
	if diff := cmp.Diff(want, status()); diff != "" {
		t.Errorf("after the first is cancelled (-want +got):\n%s", diff)
	}
}
