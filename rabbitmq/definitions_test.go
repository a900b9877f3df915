package rabbitmq_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

// mustTopology builds, through the API and AMQP, a bit of everything
// definitions carry.
func mustTopology(t *testing.T, f *fixture, a *api) {
	t.Helper()
	a.must(http.MethodPut, "/api/vhosts/dev", nil, http.StatusCreated)
	a.must(http.MethodPut, "/api/users/app", map[string]any{"password": "secret", "tags": "management"}, http.StatusCreated)
	a.must(http.MethodPut, "/api/permissions/dev/app", map[string]any{"configure": "^app", "write": ".*", "read": ".*"}, http.StatusCreated)
	a.must(http.MethodPut, "/api/exchanges/%2F/events", map[string]any{"type": "topic", "durable": true,
		"arguments": map[string]any{"alternate-exchange": "ae"}}, http.StatusCreated)
	a.must(http.MethodPut, "/api/exchanges/dev/logs", map[string]any{"type": "fanout"}, http.StatusCreated)
	a.must(http.MethodPut, "/api/queues/%2F/orders", map[string]any{"durable": true,
		"arguments": map[string]any{"x-message-ttl": 60000, "x-dead-letter-exchange": "dlx", "x-weight": 1.5}}, http.StatusCreated)
	a.must(http.MethodPut, "/api/queues/%2F/tmp", map[string]any{"auto_delete": true}, http.StatusCreated)
	a.must(http.MethodPut, "/api/queues/dev/app.q", map[string]any{}, http.StatusCreated)
	a.must(http.MethodPost, "/api/bindings/%2F/e/events/q/orders", map[string]any{"routing_key": "a.#"}, http.StatusCreated)
	a.must(http.MethodPost, "/api/bindings/%2F/e/events/q/orders", map[string]any{"routing_key": "b",
		"arguments": map[string]any{"x": 1}}, http.StatusCreated)
	a.must(http.MethodPost, "/api/bindings/%2F/e/events/e/amq.fanout", map[string]any{"routing_key": "c"}, http.StatusCreated)
	a.must(http.MethodPost, "/api/bindings/dev/e/logs/q/app.q", map[string]any{}, http.StatusCreated)
	a.must(http.MethodPut, "/api/policies/%2F/ttl", map[string]any{"pattern": "^orders$",
		"definition": map[string]any{"message-ttl": 30000}, "priority": 2, "apply-to": "queues"}, http.StatusCreated)
	a.must(http.MethodPut, "/api/operator-policies/%2F/cap", map[string]any{"pattern": ".*",
		"definition": map[string]any{"expires": 3600000}}, http.StatusCreated)
	// An exclusive queue is no definition.
	ch := f.MustChannel()
	if _, err := ch.QueueDeclare("mine", false, false, true, false, nil); err != nil {
		t.Fatal(err)
	}
}

func TestDefinitionsExportShape(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	mustTopology(t, f, a)
	d := a.get("/api/definitions").(map[string]any)
	for _, k := range []string{"rabbit_version", "rabbitmq_version", "product_name", "product_version", "users", "vhosts",
		"permissions", "topic_permissions", "parameters", "global_parameters", "policies", "queues", "exchanges", "bindings"} {
		if _, ok := d[k]; !ok {
			t.Errorf("no %q in the export", k)
		}
	}
	want := map[string]any{
		"vhosts": []any{map[string]any{"name": "/"}, map[string]any{"name": "dev"}},
		"parameters": []any{map[string]any{"vhost": "/", "component": "operator_policy", "name": "cap",
			"value": map[string]any{"pattern": ".*", "definition": map[string]any{"expires": n("3600000")},
				"priority": n("0"), "apply-to": "all"}}},
		"policies": []any{map[string]any{"vhost": "/", "name": "ttl", "pattern": "^orders$", "apply-to": "queues",
			"definition": map[string]any{"message-ttl": n("30000")}, "priority": n("2")}},
		"queues": []any{
			map[string]any{"name": "orders", "vhost": "/", "durable": true, "auto_delete": false,
				"arguments": map[string]any{"x-message-ttl": n("60000"), "x-dead-letter-exchange": "dlx", "x-weight": n("1.5")}},
			map[string]any{"name": "tmp", "vhost": "/", "durable": false, "auto_delete": true, "arguments": map[string]any{}},
			map[string]any{"name": "app.q", "vhost": "dev", "durable": false, "auto_delete": false, "arguments": map[string]any{}},
		},
		"exchanges": []any{
			map[string]any{"name": "events", "vhost": "/", "type": "topic", "durable": true, "auto_delete": false,
				"internal": false, "arguments": map[string]any{"alternate-exchange": "ae"}},
			map[string]any{"name": "logs", "vhost": "dev", "type": "fanout", "durable": false, "auto_delete": false,
				"internal": false, "arguments": map[string]any{}},
		},
		"bindings": []any{
			map[string]any{"source": "events", "vhost": "/", "destination": "amq.fanout", "destination_type": "exchange",
				"routing_key": "c", "arguments": map[string]any{}},
			map[string]any{"source": "events", "vhost": "/", "destination": "orders", "destination_type": "queue",
				"routing_key": "a.#", "arguments": map[string]any{}},
			map[string]any{"source": "events", "vhost": "/", "destination": "orders", "destination_type": "queue",
				"routing_key": "b", "arguments": map[string]any{"x": n("1")}},
			map[string]any{"source": "logs", "vhost": "dev", "destination": "app.q", "destination_type": "queue",
				"routing_key": "", "arguments": map[string]any{}},
		},
	}
	if diff := cmp.Diff(want, obj(t, d, "vhosts", "parameters", "policies", "queues", "exchanges", "bindings")); diff != "" {
		t.Errorf("export (-want +got):\n%s", diff)
	}
	// One vhost's export has no users and no vhost in its objects, but
	// keeps it in its policies.
	dev := a.get("/api/definitions/dev").(map[string]any)
	var keys []string
	for k := range dev {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"bindings", "exchanges", "parameters", "policies", "queues", "rabbit_version"}, keys); diff != "" {
		t.Errorf("keys of a vhost's export (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{map[string]any{"name": "app.q", "durable": false, "auto_delete": false, "arguments": map[string]any{}}},
		dev["queues"]); diff != "" {
		t.Errorf("a vhost's queues (-want +got):\n%s", diff)
	}
	r := a.do(http.MethodGet, "/api/definitions/nope", nil)
	if diff := cmp.Diff(errBody("bad_request", "vhost_not_found"), r.json(t)); r.status != 400 || diff != "" {
		t.Errorf("unknown vhost: %d (-want +got):\n%s", r.status, diff)
	}
}

func TestDefinitionsRoundTrip(t *testing.T) {
	src := MustServer(t)
	a := MustManagement(t, src)
	mustTopology(t, src, a)
	exported := a.must(http.MethodGet, "/api/definitions", nil, http.StatusOK)

	// A fresh server takes the export over HTTP and exports the same.
	dst := MustServer(t)
	b := MustManagement(t, dst)
	b.must(http.MethodPost, "/api/definitions", string(exported.body), http.StatusNoContent)
	if diff := cmp.Diff(exported.json(t), b.get("/api/definitions")); diff != "" {
		t.Errorf("export after import (-want +got):\n%s", diff)
	}
	// The password hash came along: app logs in with its password.
	ch := mustChannelAs(t, dst, "app", "secret", "dev")
	MustPublish(t, ch, "logs", "", amqp.Publishing{Body: []byte("m")})
	if got := count(t, ch, "app.q"); got != 1 {
		t.Errorf("%d messages routed through the imported binding", got)
	}
	// The imported policies apply.
	got := obj(t, b.get("/api/queues/%2F/orders"), "policy", "operator_policy")
	if diff := cmp.Diff(map[string]any{"policy": "ttl", "operator_policy": "cap"}, got); diff != "" {
		t.Errorf("imported policies on orders (-want +got):\n%s", diff)
	}

	// So does a server that loads it from a file, and a vhost's export
	// imports into another vhost.
	third := MustServer(t)
	if err := third.s.LoadDefinitions(bytes.NewReader(exported.body)); err != nil {
		t.Fatal(err)
	}
	d, err := third.s.Definitions("")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(d)
	if diff := cmp.Diff(exported.json(t), reply{body: raw}.json(t)); diff != "" {
		t.Errorf("LoadDefinitions then Definitions (-want +got):\n%s", diff)
	}
	devExport := a.must(http.MethodGet, "/api/definitions/dev", nil, http.StatusOK)
	b.must(http.MethodPut, "/api/vhosts/copy", nil, http.StatusCreated)
	b.must(http.MethodPost, "/api/definitions/copy", string(devExport.body), http.StatusNoContent)
	if diff := cmp.Diff(devExport.json(t), b.get("/api/definitions/copy")); diff != "" {
		t.Errorf("a vhost's export imported into another (-want +got):\n%s", diff)
	}
}

func TestDefinitionsImportKeepsWhatExists(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	MustDeclare(t, ch, "orders", amqp.Table{"x-message-ttl": int32(1000)})
	defs := `{"users": [{"name": "dev", "password": "pw", "tags": "administrator"}],
		"vhosts": [{"name": "/"}],
		"permissions": [{"user": "dev", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"}],
		"queues": [{"name": "orders", "vhost": "/", "durable": true, "auto_delete": false, "arguments": {"x-message-ttl": 5}},
			{"name": "amq.skipped", "vhost": "/", "durable": true, "auto_delete": false, "arguments": {}},
			{"name": "fresh", "vhost": "/", "durable": true, "auto_delete": false, "arguments": {}}],
		"bindings": [{"source": "amq.direct", "vhost": "/", "destination": "fresh", "destination_type": "queue", "routing_key": "k", "arguments": {}},
			{"source": "amq.direct", "vhost": "/", "destination": "gone", "destination_type": "queue", "routing_key": "k", "arguments": {}}],
		"parameters": [{"vhost": "/", "component": "shovel", "name": "s", "value": {}}]}`
	if err := f.s.LoadDefinitions(strings.NewReader(defs)); err != nil {
		t.Fatal(err)
	}
	got := obj(t, a.get("/api/queues/%2F/orders"), "durable", "arguments")
	if diff := cmp.Diff(map[string]any{"durable": false, "arguments": map[string]any{"x-message-ttl": n("1000")}}, got); diff != "" {
		t.Errorf("the existing queue (-want +got):\n%s", diff)
	}
	a.must(http.MethodGet, "/api/queues/%2F/amq.skipped", nil, http.StatusNotFound)
	if got := a.get("/api/bindings/%2F/e/amq.direct/q/fresh").([]any); len(got) != 1 {
		t.Errorf("bindings to fresh: %v", got)
	}
	// "password" in clear is a lapse convenience.
	if r := a.doAs("dev", "pw", http.MethodGet, "/api/whoami", nil); r.status != 200 {
		t.Errorf("dev's login: %d %s", r.status, r.body)
	}

	for _, tc := range []struct {
		name, path, body string
		status           int
		want             map[string]any
	}{
		{"NotJSON", "/api/definitions", "{", 400, errBody("bad_request", "failed_to_parse_json")},
		{"NoVhost", "/api/definitions/nope", "{}", 404, errBody("not_found", "vhost_not_found")},
		{"QueueInUnknownVhost", "/api/definitions",
			`{"queues": [{"name": "q", "vhost": "nope", "durable": true, "auto_delete": false, "arguments": {}}]}`, 400,
			errBody("bad_request", `Please create virtual host "nope" prior to importing definitions.`)},
		{"BadPolicy", "/api/definitions",
			`{"policies": [{"vhost": "/", "name": "p", "pattern": ".*", "definition": {"message-ttl": -5}}]}`, 400,
			errBody("bad_request", "Validation failed\n\n-5 is not a valid message TTL\n (//p)")},
		{"BadArgument", "/api/definitions",
			`{"queues": [{"name": "q", "vhost": "/", "durable": true, "auto_delete": false, "arguments": {"x-expires": 0}}]}`, 400,
			errBody("bad_request", "precondition_failed: invalid arg 'x-expires' for queue 'q' in vhost '/': {value_zero,0}")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(http.MethodPost, tc.path, tc.body)
			if diff := cmp.Diff(tc.want, r.json(t)); r.status != tc.status || diff != "" {
				t.Errorf("status %d, want %d (-want +got):\n%s", r.status, tc.status, diff)
			}
		})
	}
}
