package rabbitmq_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestManagementExchanges(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	x := map[string]any{"type": "topic", "durable": true, "arguments": map[string]any{"alternate-exchange": "ae"}}
	a.must(http.MethodPut, "/api/exchanges/%2F/logs", x, http.StatusCreated)
	a.must(http.MethodPut, "/api/exchanges/%2F/logs", x, http.StatusNoContent)
	for _, tc := range []struct {
		name, path string
		body       any
		status     int
		want       map[string]any
	}{
		{"Inequivalent", "/api/exchanges/%2F/logs", map[string]any{"type": "direct", "durable": true}, 400,
			errBody("bad_request", "inequivalent arg 'type' for exchange 'logs' in vhost '/': received 'direct' but current is 'topic'")},
		{"BadType", "/api/exchanges/%2F/x", map[string]any{"type": "bogus"}, 400, errBody("bad_request", "unknown exchange type 'bogus'")},
		{"Reserved", "/api/exchanges/%2F/amq.y", map[string]any{"type": "direct"}, 401, errBody("not_authorised", "Access refused.")},
		{"Default", "/api/exchanges/%2F/amq.default", map[string]any{"type": "direct"}, 401, errBody("not_authorised", "Access refused.")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(http.MethodPut, tc.path, tc.body)
			if diff := cmp.Diff(tc.want, r.json(t)); r.status != tc.status || diff != "" {
				t.Errorf("status %d, want %d (-want +got):\n%s", r.status, tc.status, diff)
			}
		})
	}
	want := map[string]any{"name": "logs", "vhost": "/", "type": "topic", "durable": true, "auto_delete": false,
		"internal": false, "arguments": map[string]any{"alternate-exchange": "ae"}, "incoming": []any{}, "outgoing": []any{}}
	if diff := cmp.Diff(want, a.get("/api/exchanges/%2F/logs")); diff != "" {
		t.Errorf("GET logs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"name": "", "type": "direct"}, obj(t, a.get("/api/exchanges/%2F/amq.default"), "name", "type")); diff != "" {
		t.Errorf("GET amq.default (-want +got):\n%s", diff)
	}
	var names []any
	for _, x := range a.get("/api/exchanges/%2F?columns=name").([]any) {
		names = append(names, x.(map[string]any)["name"])
	}
	wantNames := []any{"", "amq.direct", "amq.fanout", "amq.headers", "amq.match", "amq.rabbitmq.trace", "amq.topic", "logs"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("exchanges of / (-want +got):\n%s", diff)
	}
	r := a.do(http.MethodPost, "/api/exchanges/%2F/amq.rabbitmq.trace/publish",
		map[string]any{"properties": map[string]any{}, "routing_key": "k", "payload": "x", "payload_encoding": "string"})
	if diff := cmp.Diff(errBody("bad_request", "403 ACCESS_REFUSED - cannot publish to internal exchange 'amq.rabbitmq.trace' in vhost '/'"),
		r.json(t)); r.status != 400 || diff != "" {
		t.Errorf("publish to an internal exchange: %d (-want +got):\n%s", r.status, diff)
	}
	a.must(http.MethodDelete, "/api/exchanges/%2F/amq.direct", nil, http.StatusUnauthorized)
	a.must(http.MethodDelete, "/api/exchanges/%2F/logs", nil, http.StatusNoContent)
	a.must(http.MethodDelete, "/api/exchanges/%2F/logs", nil, http.StatusNotFound)
	a.must(http.MethodGet, "/api/exchanges/%2F/logs", nil, http.StatusNotFound)
}

func TestManagementBindings(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	if err := ch.ExchangeDeclare("events", "topic", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, ch, "audit", nil)
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		location   string
	}{
		{"Pattern", "/api/bindings/%2F/e/events/q/audit", map[string]any{"routing_key": "a.#"}, "audit/a.%2523"},
		{"Args", "/api/bindings/%2F/e/events/q/audit", map[string]any{"routing_key": "b", "arguments": map[string]any{"x": 1}}, ""},
		{"Empty", "/api/bindings/%2F/e/events/q/audit", map[string]any{}, "audit/~"},
		{"ToExchange", "/api/bindings/%2F/e/events/e/amq.fanout", map[string]any{"routing_key": "c"}, "amq.fanout/c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.must(http.MethodPost, tc.path, tc.body, http.StatusCreated)
			if tc.location != "" && r.header.Get("Location") != tc.location {
				t.Errorf("Location %q, want %q", r.header.Get("Location"), tc.location)
			}
		})
	}
	for _, tc := range []struct {
		name, path string
		status     int
		want       map[string]any
	}{
		{"DefaultExchange", "/api/bindings/%2F/e/amq.default/q/audit", 401, errBody("not_authorised", "Access refused.")},
		{"NoSource", "/api/bindings/%2F/e/nope/q/audit", 404, errBody("not_found", "no exchange 'nope' in vhost '/'")},
		{"NoQueue", "/api/bindings/%2F/e/events/q/nope", 404, errBody("not_found", "no queue 'nope' in vhost '/'")},
		{"NoVhost", "/api/bindings/nope/e/events/q/audit", 404, errBody("not_found", "vhost_not_found")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(http.MethodPost, tc.path, map[string]any{"routing_key": "z"})
			if diff := cmp.Diff(tc.want, r.json(t)); r.status != tc.status || diff != "" {
				t.Errorf("status %d, want %d (-want +got):\n%s", r.status, tc.status, diff)
			}
		})
	}
	list := a.get("/api/bindings/%2F").([]any)
	if len(list) != 5 {
		t.Fatalf("%d bindings, want 5: %v", len(list), list)
	}
	// The default exchange's implicit binding comes first, as RabbitMQ
	// lists it.
	wantFirst := map[string]any{"source": "", "vhost": "/", "destination": "audit", "destination_type": "queue",
		"routing_key": "audit", "arguments": map[string]any{}, "properties_key": "audit"}
	if diff := cmp.Diff(wantFirst, list[0]); diff != "" {
		t.Errorf("first binding (-want +got):\n%s", diff)
	}
	var keys []string
	var argsKey string
	for _, b := range a.get("/api/bindings/%2F/e/events/q/audit").([]any) {
		k := b.(map[string]any)["properties_key"].(string)
		keys = append(keys, k)
		if b.(map[string]any)["routing_key"] == "b" {
			argsKey = k
		}
	}
	if diff := cmp.Diff([]string{"~", "a.%23", argsKey}, keys); diff != "" || len(argsKey) != len("b~")+6 {
		t.Errorf("properties keys %q (-want +got):\n%s", argsKey, diff)
	}
	got := a.get("/api/bindings/%2F/e/events/q/audit/" + url.PathEscape(argsKey))
	if diff := cmp.Diff(map[string]any{"routing_key": "b", "arguments": map[string]any{"x": n("1")}},
		obj(t, got, "routing_key", "arguments")); diff != "" {
		t.Errorf("GET by properties key (-want +got):\n%s", diff)
	}

	MustPublish(t, ch, "events", "a.b.c", amqp.Publishing{Body: []byte("m")})
	if got := count(t, ch, "audit"); got != 1 {
		t.Fatalf("%d messages routed through the HTTP binding", got)
	}
	a.must(http.MethodDelete, "/api/bindings/%2F/e/events/q/audit/"+url.PathEscape("a.%23"), nil, http.StatusNoContent)
	a.must(http.MethodDelete, "/api/bindings/%2F/e/events/q/audit/"+url.PathEscape("a.%23"), nil, http.StatusNotFound)
	a.must(http.MethodDelete, "/api/bindings/%2F/e/events/q/audit/"+url.PathEscape(argsKey), nil, http.StatusNoContent)
	MustPublish(t, ch, "events", "a.b.c", amqp.Publishing{Body: []byte("m")})
	if got := count(t, ch, "audit"); got != 1 {
		t.Errorf("%d messages after the unbind, want still 1", got)
	}
	if got := a.get("/api/queues/%2F/audit/bindings").([]any); len(got) != 2 {
		t.Errorf("the queue's bindings: %v", got)
	}
	if got := a.get("/api/exchanges/%2F/events/bindings/source").([]any); len(got) != 2 {
		t.Errorf("the exchange's bindings: %v", got)
	}
}

func TestManagementListsPageSortAndPickColumns(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	for i := 1; i <= 7; i++ {
		MustDeclare(t, ch, fmt.Sprintf("q%d", i), amqp.Table{"x-max-length": int32(i)})
		for j := 0; j < i%3; j++ {
			MustPublish(t, ch, "", fmt.Sprintf("q%d", i), amqp.Publishing{Body: []byte("m")})
		}
	}
	names := func(v any) []string {
		var out []string
		for _, it := range v.([]any) {
			out = append(out, it.(map[string]any)["name"].(string))
		}
		return out
	}
	paged := a.get("/api/queues/%2F?page=2&page_size=3&columns=name").(map[string]any)
	want := map[string]any{"filtered_count": n("7"), "item_count": n("3"), "page": n("2"), "page_count": n("3"),
		"page_size": n("3"), "total_count": n("7"),
		"items": []any{map[string]any{"name": "q4"}, map[string]any{"name": "q5"}, map[string]any{"name": "q6"}}}
	if diff := cmp.Diff(want, paged); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"SortReverse", "sort=name&sort_reverse=true", []string{"q7", "q6", "q5", "q4", "q3", "q2", "q1"}},
		{"SortByMessages", "sort=messages", []string{"q3", "q6", "q1", "q4", "q7", "q2", "q5"}},
		{"SortByNested", "sort=arguments.x-max-length&sort_reverse=true", []string{"q7", "q6", "q5", "q4", "q3", "q2", "q1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, names(a.get("/api/queues?"+tc.query))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct {
		name, query string
		want        []string
		filtered    string
	}{
		{"Name", "page=1&name=Q1", []string{"q1"}, "1"},
		{"Regex", "page=1&name=^q[2-3]$&use_regex=true", []string{"q2", "q3"}, "2"},
		{"LastPage", "page=3&page_size=3", []string{"q7"}, "7"},
		{"EmptyPage", "page=2&page_size=7", nil, "7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := a.get("/api/queues/%2F?" + tc.query).(map[string]any)
			var gotNames []string
			if items := got["items"].([]any); len(items) > 0 {
				gotNames = names(items)
			}
			if diff := cmp.Diff(tc.want, gotNames); diff != "" || got["filtered_count"] != n(tc.filtered) {
				t.Errorf("filtered %v (-want +got):\n%s", got["filtered_count"], diff)
			}
		})
	}
	cols := a.get("/api/queues/%2F/q2?columns=name,arguments.x-max-length,messages")
	if diff := cmp.Diff(map[string]any{"name": "q2", "messages": n("2"), "arguments": map[string]any{"x-max-length": n("2")}}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name, query string
		want        map[string]any
	}{
		{"PageSizeTooLarge", "page=1&page_size=501",
			map[string]any{"error": "invalid_pagination_parameters", "reason": "Invalid pagination parameters: page number 1, page size 501"}},
		{"PageZero", "page=0",
			map[string]any{"error": "invalid_pagination_parameters", "reason": "Invalid pagination parameters: page number 0, page size undefined"}},
		{"NotANumber", "page=x", errBody("bad_request", "Pagination parameters are invalid")},
		{"OutOfRange", "page=3&page_size=5", map[string]any{"error": "page_out_of_range", "reason": "Page out of range, page: 3 page size: 5, len: 7"}},
		{"BadRegex", "page=1&name=(&use_regex=true", errBody("bad_request", "Pagination parameters are invalid")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(http.MethodGet, "/api/queues/%2F?"+tc.query, nil)
			if diff := cmp.Diff(tc.want, r.json(t)); r.status != 400 || diff != "" {
				t.Errorf("status %d (-want +got):\n%s", r.status, diff)
			}
		})
	}
	if got := obj(t, a.get("/api/queues/%2F/q1?disable_stats=true"), "state", "messages"); !cmp.Equal(got, map[string]any{"state": "live"}) {
		t.Errorf("disable_stats: %v", got)
	}
}

func TestManagementUsersVhostsAndPermissions(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	a.must(http.MethodPut, "/api/vhosts/dev", nil, http.StatusCreated)
	a.must(http.MethodPut, "/api/vhosts/dev", nil, http.StatusNoContent)
	// The vhost's maker gets every permission on it.
	want := map[string]any{"user": "guest", "vhost": "dev", "configure": ".*", "write": ".*", "read": ".*"}
	if diff := cmp.Diff(want, a.get("/api/permissions/dev/guest")); diff != "" {
		t.Errorf("guest on dev (-want +got):\n%s", diff)
	}
	a.must(http.MethodPut, "/api/users/app", map[string]any{"password": "secret", "tags": "management, monitoring"}, http.StatusCreated)
	a.must(http.MethodPut, "/api/users/app", map[string]any{"password": "x"}, http.StatusBadRequest)
	a.must(http.MethodPut, "/api/users/app", map[string]any{"password": "s3", "password_hash": "x", "tags": ""}, http.StatusBadRequest)
	user := obj(t, a.get("/api/users/app"), "name", "tags", "hashing_algorithm", "limits")
	if diff := cmp.Diff(map[string]any{"name": "app", "tags": []any{"management", "monitoring"},
		"hashing_algorithm": "rabbit_password_hashing_sha256", "limits": map[string]any{}}, user); diff != "" {
		t.Errorf("GET user (-want +got):\n%s", diff)
	}
	r := a.do(http.MethodPut, "/api/permissions/dev/app", map[string]any{"configure": "^app\\.", "write": ".*"})
	if diff := cmp.Diff(errBody("bad_request", "[{key_missing,read}]"), r.json(t)); diff != "" {
		t.Errorf("missing read (-want +got):\n%s", diff)
	}
	r = a.do(http.MethodPut, "/api/permissions/nope/app", map[string]any{"configure": ".*", "write": ".*", "read": ".*"})
	if diff := cmp.Diff(errBody("bad_request", "vhost_or_user_not_found"), r.json(t)); diff != "" {
		t.Errorf("missing vhost (-want +got):\n%s", diff)
	}
	a.must(http.MethodPut, "/api/permissions/dev/app", map[string]any{"configure": "^app\\.", "write": ".*", "read": ".*"}, http.StatusCreated)
	a.must(http.MethodPut, "/api/permissions/dev/app", map[string]any{"configure": "^app\\.", "write": ".*", "read": ".*"}, http.StatusNoContent)

	// The user's permissions hold over AMQP and over HTTP.
	ch := mustChannelAs(t, f, "app", "secret", "dev")
	MustDeclare(t, ch, "app.jobs", nil)
	if _, err := ch.QueueDeclare("other", false, false, false, false, nil); err == nil {
		t.Error("declared a queue outside the configure pattern")
	}
	r = a.doAs("app", "secret", http.MethodPut, "/api/queues/dev/other", map[string]any{})
	if diff := cmp.Diff(errBody("not_authorised", "Access refused."), r.json(t)); r.status != 401 || diff != "" {
		t.Errorf("PUT outside the pattern: %d (-want +got):\n%s", r.status, diff)
	}
	a.must(http.MethodGet, "/api/queues/dev/app.jobs", nil, http.StatusOK)
	if got := a.doAs("app", "secret", http.MethodGet, "/api/queues/dev?columns=name", nil).json(t); !cmp.Equal(got, []any{map[string]any{"name": "app.jobs"}}) {
		t.Errorf("app's queues: %v", got)
	}

	perms := a.get("/api/vhosts/dev/permissions").([]any)
	if len(perms) != 2 {
		t.Errorf("permissions on dev: %v", perms)
	}
	if diff := cmp.Diff(map[string]any{"name": "dev", "messages": n("0")}, obj(t, a.get("/api/vhosts/dev"), "name", "messages")); diff != "" {
		t.Errorf("GET vhost (-want +got):\n%s", diff)
	}
	a.must(http.MethodDelete, "/api/permissions/dev/app", nil, http.StatusNoContent)
	a.must(http.MethodDelete, "/api/permissions/dev/app", nil, http.StatusNotFound)
	a.must(http.MethodDelete, "/api/vhosts/dev", nil, http.StatusNoContent)
	a.must(http.MethodDelete, "/api/vhosts/dev", nil, http.StatusNotFound)
	a.must(http.MethodGet, "/api/permissions/dev/guest", nil, http.StatusNotFound)
	if got := a.get("/api/vhosts?columns=name"); !cmp.Equal(got, []any{map[string]any{"name": "/"}}) {
		t.Errorf("vhosts after the delete: %v", got)
	}
	a.must(http.MethodDelete, "/api/users/app", nil, http.StatusNoContent)
	a.must(http.MethodDelete, "/api/users/app", nil, http.StatusNotFound)
	if got := a.get("/api/users?columns=name"); !cmp.Equal(got, []any{map[string]any{"name": "guest"}}) {
		t.Errorf("users: %v", got)
	}
}

func TestManagementOverviewConnectionsAndHealth(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	ch := f.MustChannel()
	if err := ch.Qos(7, 0, false); err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, ch, "work", nil)
	if _, err := ch.Consume("work", "ctag1", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	sync(t, ch)

	ov := a.get("/api/overview").(map[string]any)
	if diff := cmp.Diff(map[string]any{"rabbitmq_version": "3.10.8", "product_name": "RabbitMQ", "management_version": "3.10.8",
		"object_totals": map[string]any{"channels": n("1"), "connections": n("1"), "consumers": n("1"), "exchanges": n("7"), "queues": n("1")},
	}, obj(t, ov, "rabbitmq_version", "product_name", "management_version", "object_totals")); diff != "" {
		t.Errorf("overview (-want +got):\n%s", diff)
	}
	if l := ov["listeners"].([]any); len(l) != 2 {
		t.Errorf("listeners %v", l)
	}

	conns := a.get("/api/connections").([]any)
	if len(conns) != 1 {
		t.Fatalf("connections %v", conns)
	}
	if diff := cmp.Diff(map[string]any{"user": "guest", "vhost": "/", "protocol": "AMQP 0-9-1", "channels": n("1"), "state": "running"},
		obj(t, conns[0], "user", "vhost", "protocol", "channels", "state")); diff != "" {
		t.Errorf("connection (-want +got):\n%s", diff)
	}
	chans := a.get("/api/channels").([]any)
	if diff := cmp.Diff(map[string]any{"number": n("1"), "consumer_count": n("1"), "user": "guest"},
		obj(t, chans[0], "number", "consumer_count", "user")); len(chans) != 1 || diff != "" {
		t.Errorf("channels %v (-want +got):\n%s", chans, diff)
	}
	cons := a.get("/api/consumers/%2F").([]any)
	if diff := cmp.Diff(map[string]any{"consumer_tag": "ctag1", "ack_required": true, "prefetch_count": n("7"),
		"queue": map[string]any{"name": "work", "vhost": "/"}},
		obj(t, cons[0], "consumer_tag", "ack_required", "prefetch_count", "queue")); len(cons) != 1 || diff != "" {
		t.Errorf("consumers %v (-want +got):\n%s", cons, diff)
	}
	if got := obj(t, a.get("/api/queues/%2F/work"), "consumers", "consumer_details"); len(got["consumer_details"].([]any)) != 1 {
		t.Errorf("the queue's consumers: %v", got)
	}

	ok := map[string]any{"status": "ok"}
	for _, path := range []string{"/api/health/checks/alarms", "/api/health/checks/local-alarms",
		"/api/health/checks/virtual-hosts", "/api/aliveness-test/%2F"} {
		if diff := cmp.Diff(ok, a.get(path)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}
	_, port, _ := splitHostPort(f.ln.Addr().String())
	if diff := cmp.Diff(map[string]any{"status": "ok", "port": n(port)}, a.get("/api/health/checks/port-listener/"+port)); diff != "" {
		t.Errorf("port listener (-want +got):\n%s", diff)
	}
	a.must(http.MethodGet, "/api/health/checks/port-listener/1", nil, http.StatusServiceUnavailable)
	if diff := cmp.Diff(map[string]any{"status": "ok", "protocol": "amqp"}, a.get("/api/health/checks/protocol-listener/amqp091")); diff != "" {
		t.Errorf("protocol listener (-want +got):\n%s", diff)
	}
	a.must(http.MethodGet, "/api/health/checks/protocol-listener/mqtt", nil, http.StatusServiceUnavailable)

	name := conns[0].(map[string]any)["name"].(string)
	a.must(http.MethodDelete, "/api/connections/"+url.PathEscape(name), nil, http.StatusNoContent)
	if err := ch.Qos(1, 0, false); err == nil {
		t.Error("the channel of a closed connection still works")
	}
}

// splitHostPort splits an address without importing net in every test.
func splitHostPort(s string) (string, string, error) {
	u, err := url.Parse("tcp://" + s)
	if err != nil {
		return "", "", err
	}
	return u.Hostname(), u.Port(), nil
}
