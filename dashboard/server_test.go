package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// gin decides its mode at init, before the test flags exist, and would
	// print every route; the binary sets release mode in main.
	gin.SetMode(gin.TestMode)
	goleak.VerifyTestMain(m)
}

// t0 is the wall time of every test clock; the wall never moves, so only
// the control API moves the clock.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type fixture struct {
	engine *core.Engine
	clock  *core.Clock
	server *Server
	resets int
	// resetErr is what the OnReset hook returns.
	resetErr error
	info     func() Info
}

// MustFixture returns a control API over an empty engine and a clock whose
// wall stands at t0.
func MustFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := &fixture{
		engine: core.NewEngine(core.Config{}),
		clock:  core.NewClock(func() time.Time { return t0 }),
	}
	f.server = NewServer(Config{
		Addr:   ":0",
		Engine: f.engine,
		Clock:  f.clock,
		Info: func() Info {
			if f.info != nil {
				return f.info()
			}
			return Info{}
		},
		OnReset: func(context.Context) error {
			f.resets++
			return f.resetErr
		},
	})
	return f
}

// do sends one request to the handler and returns the status and the body
// decoded from JSON.
func (f *fixture) do(tb testing.TB, method, path, body string) (int, any) {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	f.server.Handler().ServeHTTP(w, req)
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		tb.Fatalf("%s %s: Content-Type %q, body %q", method, path, ct, w.Body.String())
	}
	var v any
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		tb.Fatalf("%s %s: body is not JSON: %v: %q", method, path, err, w.Body.String())
	}
	return w.Code, v
}

// MustCreate creates an entity in the fixture's engine.
func (f *fixture) MustCreate(tb testing.TB, en core.Entity) {
	tb.Helper()
	if _, _, err := f.engine.Create(f.clock.Now(), en); err != nil {
		tb.Fatal(err)
	}
}

// MustEnqueue enqueues an item in the fixture's engine.
func (f *fixture) MustEnqueue(tb testing.TB, k core.EntityKey, it core.Item) core.Item {
	tb.Helper()
	out, _, err := f.engine.Enqueue(f.clock.Now(), k, it)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// mustJSON decodes a JSON literal of a test table.
func mustJSON(tb testing.TB, s string) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		tb.Fatalf("bad JSON in test: %v: %s", err, s)
	}
	return v
}

// call is one request and the answer it must get.
type call struct {
	method, path, body string
	status             int
	want               string // JSON
}

func (f *fixture) check(t *testing.T, c call) {
	t.Helper()
	status, got := f.do(t, c.method, c.path, c.body)
	if status != c.status {
		t.Errorf("%s %s %s: status %d, want %d (body %v)", c.method, c.path, c.body, status, c.status, got)
	}
	if diff := cmp.Diff(mustJSON(t, c.want), got); diff != "" {
		t.Errorf("%s %s %s: body (-want +got):\n%s", c.method, c.path, c.body, diff)
	}
}

func TestHealthz(t *testing.T) {
	f := MustFixture(t)
	f.check(t, call{"GET", "/healthz", "", 200, `{"status":"ok"}`})
}

func TestInfo(t *testing.T) {
	f := MustFixture(t)
	f.check(t, call{"GET", "/api/info", "", 200, `{"version":"","listeners":{}}`})
	f.info = func() Info {
		return Info{Version: "v1", Listeners: map[string]Listener{
			"control": {Addr: "127.0.0.1:8080", Served: true},
			"amqp":    {Addr: ":5672"},
		}}
	}
	f.check(t, call{"GET", "/api/info", "", 200, `{"version":"v1","listeners":{
		"control":{"addr":"127.0.0.1:8080","served":true},
		"amqp":{"addr":":5672","served":false}}}`})
}

// Each step runs on the clock the steps before it left.
func TestClockCalls(t *testing.T) {
	f := MustFixture(t)
	for _, c := range []call{
		{"GET", "/api/clock", "", 200, `{"now":"2026-01-02T03:04:05Z","mode":"real"}`},
		{"POST", "/api/clock/advance", `{"by":"15m"}`, 200, `{"now":"2026-01-02T03:19:05Z","mode":"offset","applied":0}`},
		{"POST", "/api/clock/advance", `{"by":"P14D"}`, 200, `{"now":"2026-01-16T03:19:05Z","mode":"offset","applied":0}`},
		{"POST", "/api/clock/advance", `{"by":"PT0.5S"}`, 200, `{"now":"2026-01-16T03:19:05.5Z","mode":"offset","applied":0}`},
		{"POST", "/api/clock/freeze", "", 200, `{"now":"2026-01-16T03:19:05.5Z","mode":"frozen"}`},
		{"GET", "/api/clock", "", 200, `{"now":"2026-01-16T03:19:05.5Z","mode":"frozen"}`},
		{"POST", "/api/clock/advance", `{"by":"1h"}`, 200, `{"now":"2026-01-16T04:19:05.5Z","mode":"frozen","applied":0}`},
		{"POST", "/api/clock/set", `{"now":"2026-02-01T00:00:00Z"}`, 200, `{"now":"2026-02-01T00:00:00Z","mode":"frozen","applied":0}`},
		{"POST", "/api/clock/set", `{"now":"2026-02-01T00:00:00Z"}`, 200, `{"now":"2026-02-01T00:00:00Z","mode":"frozen","applied":0}`},
		{"POST", "/api/clock/resume", "", 200, `{"now":"2026-02-01T00:00:00Z","mode":"offset"}`},
		{"POST", "/api/clock/set", `{"now":"2026-02-01T01:00:00+01:00"}`, 200, `{"now":"2026-02-01T00:00:00Z","mode":"offset","applied":0}`},
	} {
		f.check(t, c)
	}
}

// rule: EM-1 — when advance returns, what fell due is applied; EM-2 — and
// recorded as events.
func TestAdvanceAppliesEverythingDue_EM1_EM2(t *testing.T) {
	f := MustFixture(t)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "orders"}
	f.MustCreate(t, core.Entity{EntityKey: k, Kind: "queue", Policy: core.Policy{
		DefaultTTL: core.After(10 * time.Minute),
		Rules:      core.RuleIDs{DefaultTTL: "SB-2", ItemTTL: "SB-1", Expire: "SB-8"},
	}})
	f.MustEnqueue(t, k, core.Item{Body: []byte("a")})
	f.MustEnqueue(t, k, core.Item{Body: []byte("b"), TTL: core.After(time.Hour)})

	f.check(t, call{"POST", "/api/clock/advance", `{"by":"9m"}`, 200, `{"now":"2026-01-02T03:13:05Z","mode":"offset","applied":0}`})
	f.check(t, call{"POST", "/api/clock/advance", `{"by":"1m"}`, 200, `{"now":"2026-01-02T03:14:05Z","mode":"offset","applied":1}`})
	f.check(t, call{"GET", "/api/events", "", 200, `[{"id":1,"time":"2026-01-02T03:14:05Z","due":"2026-01-02T03:14:05Z",
		"protocol":"servicebus","entity":"orders","item":1,"rule":"SB-8","action":"expired",
		"reason":"TTL ran out (entity default TTL 10m)"}]`})
	f.check(t, call{"POST", "/api/clock/set", `{"now":"2026-01-02T05:00:00Z"}`, 200, `{"now":"2026-01-02T05:00:00Z","mode":"offset","applied":1}`})
	f.check(t, call{"GET", "/api/events?since=1", "", 200, `[{"id":2,"time":"2026-01-02T05:00:00Z","due":"2026-01-02T04:04:05Z",
		"protocol":"servicebus","entity":"orders","item":2,"rule":"SB-8","action":"expired",
		"reason":"TTL ran out (own TTL 1h), applied 55m55s after it was due"}]`})
}

// rule: EM-2 — the event log with its filters.
func TestEventsFilters_EM2(t *testing.T) {
	f := MustFixture(t)
	// Item i expires i seconds from now, so the event IDs follow the order
	// of the enqueues.
	ttl := time.Duration(0)
	for _, k := range []core.EntityKey{{Protocol: "rabbitmq", Name: "/q1"}, {Protocol: "rabbitmq", Name: "/q2"}, {Protocol: "cosmos", Name: "db/c"}} {
		f.MustCreate(t, core.Entity{EntityKey: k})
		for range 2 {
			ttl += time.Second
			f.MustEnqueue(t, k, core.Item{TTL: core.After(ttl)})
		}
	}
	f.check(t, call{"POST", "/api/clock/advance", `{"by":"6s"}`, 200, `{"now":"2026-01-02T03:04:11Z","mode":"offset","applied":6}`})

	ids := func(evs any) []float64 {
		var out []float64
		for _, e := range evs.([]any) {
			out = append(out, e.(map[string]any)["id"].(float64))
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []float64
	}{
		{"", []float64{1, 2, 3, 4, 5, 6}},
		{"?since=0", []float64{1, 2, 3, 4, 5, 6}},
		{"?since=4", []float64{5, 6}},
		{"?since=6", nil},
		{"?limit=2", []float64{1, 2}},
		{"?limit=0", []float64{1, 2, 3, 4, 5, 6}},
		{"?protocol=cosmos", []float64{5, 6}},
		{"?protocol=rabbitmq&entity=/q2", []float64{3, 4}},
		{"?entity=%2Fq1&since=1", []float64{2}},
		{"?protocol=servicebus", nil},
		{"?protocol=rabbitmq&since=1&limit=2", []float64{2, 3}},
	} {
		status, got := f.do(t, "GET", "/api/events"+tc.query, "")
		if status != 200 {
			t.Errorf("%s: status %d", tc.query, status)
			continue
		}
		if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
			t.Errorf("events%s (-want +got):\n%s", tc.query, diff)
		}
	}
}

func TestEntities(t *testing.T) {
	f := MustFixture(t)
	f.check(t, call{"GET", "/api/entities", "", 200, `[]`})
	q := core.EntityKey{Protocol: core.RabbitMQ, Name: "/orders"}
	f.MustCreate(t, core.Entity{EntityKey: q, Kind: "queue", Durable: true,
		Settings: []core.Setting{{Key: "x-message-ttl", Value: "60000"}},
		Policy: core.Policy{
			DefaultTTL: core.After(time.Minute), MaxTTL: core.After(time.Minute), HeadOnly: true,
			OnExpire: core.DeadLetter, IdleTTL: core.After(30 * time.Minute),
			IdleUses: core.UseReceive | core.UseDeclare | core.UseConsume, IdleOnlyWithoutConsumers: true,
			Rules: core.RuleIDs{DefaultTTL: "RB-1", ItemTTL: "RB-5", Expire: "RB-9", Idle: "RB-8"},
		}})
	c := core.EntityKey{Protocol: core.Cosmos, Name: "db/items"}
	f.MustCreate(t, core.Entity{EntityKey: c, Kind: "container", Parent: "db", Policy: core.Policy{
		DefaultTTL: core.Forever, Base: core.FromModified, Retroactive: true,
	}})
	f.MustEnqueue(t, q, core.Item{})
	f.MustEnqueue(t, q, core.Item{State: core.Scheduled, ScheduledAt: t0.Add(time.Hour)})
	f.MustEnqueue(t, c, core.Item{Key: "k"})

	f.check(t, call{"GET", "/api/entities", "", 200, `[
	{"protocol":"cosmos","name":"db/items","kind":"container","parent":"db","durable":false,
	 "created":"2026-01-02T03:04:05Z",
	 "policy":{"defaultTtl":"forever","maxTtl":"none","ignoreItemTtl":false,"base":"modified","onExpire":"drop",
	   "retroactive":true,"headOnly":false,"idleTtl":"none","idleUses":[],"idleOnlyWithoutConsumers":false,"rules":{}},
	 "counts":{"active":1,"scheduled":0,"locked":0,"deferred":0,"inDeadLetterQueue":0,"activeBytes":0},
	 "stats":{"received":1,"delivered":0,"expired":0,"deadLettered":0},
	 "consumers":0,"lastUsed":"2026-01-02T03:04:05Z"},
	{"protocol":"rabbitmq","name":"/orders","kind":"queue","durable":true,
	 "created":"2026-01-02T03:04:05Z",
	 "policy":{"defaultTtl":"1m","maxTtl":"1m","ignoreItemTtl":false,"base":"enqueue","onExpire":"dead-letter",
	   "retroactive":false,"headOnly":true,"idleTtl":"30m","idleUses":["receive","declare","consume"],
	   "idleOnlyWithoutConsumers":true,
	   "rules":{"defaultTtl":"RB-1","itemTtl":"RB-5","expire":"RB-9","idle":"RB-8"}},
	 "settings":[{"key":"x-message-ttl","value":"60000"}],
	 "counts":{"active":1,"scheduled":1,"locked":0,"deferred":0,"inDeadLetterQueue":0,"activeBytes":0},
	 "stats":{"received":2,"delivered":0,"expired":0,"deadLettered":0},
	 "consumers":0,"lastUsed":"2026-01-02T03:04:05Z",
	 "nextDue":"2026-01-02T03:05:05Z","idleDeadline":"2026-01-02T03:34:05Z"}]`})
	status, got := f.do(t, "GET", "/api/entities?protocol=cosmos", "")
	if status != 200 || len(got.([]any)) != 1 {
		t.Errorf("entities?protocol=cosmos: %d %v", status, got)
	}
}

func TestItems(t *testing.T) {
	f := MustFixture(t)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "topic/Subscriptions/sub"}
	f.MustCreate(t, core.Entity{EntityKey: k, Kind: "subscription", Policy: core.Policy{
		DefaultTTL: core.After(10 * time.Minute),
		Rules:      core.RuleIDs{DefaultTTL: "SB-2", ItemTTL: "SB-1", Scheduled: "SB-4", Never: "SB-3"},
	}})
	f.MustEnqueue(t, k, core.Item{Body: []byte("hello"), Meta: []byte{1, 2}})
	f.MustEnqueue(t, k, core.Item{Body: []byte{0xff, 0x00}, TTL: core.After(time.Minute), Persistent: true})
	f.MustEnqueue(t, k, core.Item{State: core.Scheduled, ScheduledAt: t0.Add(5 * time.Minute)})
	f.MustEnqueue(t, k, core.Item{TTL: core.Forever, Key: "k4", Body: []byte(strings.Repeat("é", 250))})

	want := `[
	{"seq":1,"state":"active","enqueuedAt":"2026-01-02T03:04:05Z","modifiedAt":"2026-01-02T03:04:05Z",
	 "ttl":"none","effectiveTtl":"10m","dueAt":"2026-01-02T03:14:05Z","rule":"SB-2","reason":"entity default TTL 10m",
	 "deliveryCount":0,"persistent":false,"bodySize":5,"body":"aGVsbG8=","bodyText":"hello","meta":"AQI="},
	{"seq":2,"state":"active","enqueuedAt":"2026-01-02T03:04:05Z","modifiedAt":"2026-01-02T03:04:05Z",
	 "ttl":"1m","effectiveTtl":"1m","dueAt":"2026-01-02T03:05:05Z","rule":"SB-1","reason":"own TTL 1m",
	 "deliveryCount":0,"persistent":true,"bodySize":2,"body":"/wA="},
	{"seq":3,"state":"scheduled","enqueuedAt":"2026-01-02T03:09:05Z","modifiedAt":"2026-01-02T03:04:05Z",
	 "scheduledAt":"2026-01-02T03:09:05Z",
	 "ttl":"none","effectiveTtl":"10m","dueAt":"2026-01-02T03:19:05Z","rule":"SB-4",
	 "reason":"entity default TTL 10m, counted from the scheduled enqueue time 2026-01-02T03:09:05Z",
	 "deliveryCount":0,"persistent":false,"bodySize":0,"body":"","bodyText":""},
	{"seq":4,"key":"k4","state":"active","enqueuedAt":"2026-01-02T03:04:05Z","modifiedAt":"2026-01-02T03:04:05Z",
	 "ttl":"forever","effectiveTtl":"forever","rule":"SB-3","reason":"never expires: own TTL is infinite",
	 "deliveryCount":0,"persistent":false,"bodySize":500,"body":"` + b64(strings.Repeat("é", 250)) + `",
	 "bodyText":"` + strings.Repeat("é", 200) + `"}]`
	f.check(t, call{"GET", "/api/entities/servicebus/topic/Subscriptions/sub/items", "", 200, want})

	status, got := f.do(t, "GET", "/api/entities/servicebus/topic/Subscriptions/sub/items?limit=2", "")
	if status != 200 || len(got.([]any)) != 2 {
		t.Errorf("items?limit=2: %d, %d items", status, len(got.([]any)))
	}
	// The name may be percent-encoded too, and RabbitMQ's default vhost
	// makes names that start with a slash.
	f.check(t, call{"GET", "/api/entities/servicebus/topic%2FSubscriptions%2Fsub/items?limit=1", "", 200, `[` + strings.SplitN(want[1:], "},\n", 2)[0] + `}]`})
	r := core.EntityKey{Protocol: core.RabbitMQ, Name: "//q"}
	f.MustCreate(t, core.Entity{EntityKey: r})
	f.check(t, call{"GET", "/api/entities/rabbitmq///q/items", "", 200, `[]`})
}

func b64(s string) string {
	v, _ := json.Marshal([]byte(s))
	return strings.Trim(string(v), `"`)
}

func TestReset(t *testing.T) {
	f := MustFixture(t)
	f.MustCreate(t, core.Entity{EntityKey: core.EntityKey{Protocol: "p", Name: "e"}})
	f.check(t, call{"POST", "/api/reset", "", 200, `{"status":"reset"}`})
	f.check(t, call{"GET", "/api/entities", "", 200, `[]`})
	if f.resets != 1 {
		t.Errorf("OnReset ran %d times, want 1", f.resets)
	}

	f.resetErr = core.Errorf(core.EINVALID, "servicebus config: queue name missing")
	f.check(t, call{"POST", "/api/reset", "", 400, `{"error":"servicebus config: queue name missing"}`})
	f.resetErr = errors.New("open /secret/path: permission denied")
	f.check(t, call{"POST", "/api/reset", "", 500, `{"error":"internal error"}`})
}

func TestErrors(t *testing.T) {
	f := MustFixture(t)
	f.MustCreate(t, core.Entity{EntityKey: core.EntityKey{Protocol: "servicebus", Name: "q"}})
	for _, c := range []call{
		// Bad durations and bodies: 400.
		{"POST", "/api/clock/advance", `{"by":"soon"}`, 400, `{"error":"invalid duration \"soon\": use a Go duration like 15m or an ISO 8601 one like P14D"}`},
		{"POST", "/api/clock/advance", `{"by":"-5m"}`, 400, `{"error":"invalid duration \"-5m\": must not be negative"}`},
		{"POST", "/api/clock/advance", `{"by":"P1Y"}`, 400, `{"error":"invalid duration \"P1Y\": use a Go duration like 15m or an ISO 8601 one like P14D"}`},
		{"POST", "/api/clock/advance", `{"by":""}`, 400, `{"error":"advance needs {\"by\": \"15m\"} (a Go duration or an ISO 8601 one like P14D)"}`},
		{"POST", "/api/clock/advance", ``, 400, `{"error":"advance needs {\"by\": \"15m\"} (a Go duration or an ISO 8601 one like P14D)"}`},
		{"POST", "/api/clock/advance", `{"by":15}`, 400, `{"error":"invalid JSON body: json: cannot unmarshal number into Go struct field .by of type string"}`},
		{"POST", "/api/clock/advance", `{"duration":"15m"}`, 400, `{"error":"invalid JSON body: json: unknown field \"duration\""}`},
		{"POST", "/api/clock/advance", `{"by":"15m"`, 400, `{"error":"invalid JSON body: unexpected EOF"}`},
		{"POST", "/api/clock/advance", `{"by":"15m"} {}`, 400, `{"error":"invalid JSON body: more than one value"}`},
		{"POST", "/api/clock/advance", `{"by":"` + strings.Repeat("1", maxBody) + `"}`, 413, `{"error":"request body over 1048576 bytes"}`},
		{"POST", "/api/clock/set", `{"now":"tomorrow"}`, 400, `{"error":"set needs {\"now\": \"2006-01-02T15:04:05Z\"} (RFC 3339), got \"tomorrow\""}`},
		{"POST", "/api/clock/set", `{}`, 400, `{"error":"set needs {\"now\": \"2006-01-02T15:04:05Z\"} (RFC 3339), got \"\""}`},
		// Never backwards: 400.
		{"POST", "/api/clock/set", `{"now":"2026-01-02T03:04:04Z"}`, 400, `{"error":"cannot set the clock back from 2026-01-02T03:04:05Z to 2026-01-02T03:04:04Z"}`},
		{"GET", "/api/events?since=abc", "", 400, `{"error":"since must be a non-negative integer, got \"abc\""}`},
		{"GET", "/api/events?limit=-1", "", 400, `{"error":"limit must be a non-negative integer, got \"-1\""}`},
		{"GET", "/api/entities/servicebus/q/items?limit=x", "", 400, `{"error":"limit must be a non-negative integer, got \"x\""}`},
		// Unknown entities and paths: 404.
		{"GET", "/api/entities/servicebus/nope/items", "", 404, `{"error":"entity \"nope\" not found"}`},
		{"GET", "/api/entities/rabbitmq/q/items", "", 404, `{"error":"entity \"q\" not found"}`},
		{"GET", "/api/entities/servicebus/q", "", 404, `{"error":"no such endpoint: GET /api/entities/servicebus/q (use /api/entities/{protocol}/{name}/items)"}`},
		{"GET", "/api/entities/servicebus//items", "", 404, `{"error":"no such endpoint: GET /api/entities/servicebus//items (use /api/entities/{protocol}/{name}/items)"}`},
		{"GET", "/api/nothing", "", 404, `{"error":"no such endpoint: GET /api/nothing"}`},
		// A known path with another method: 405.
		{"GET", "/api/clock/advance", "", 405, `{"error":"method not allowed"}`},
		{"DELETE", "/api/entities", "", 405, `{"error":"method not allowed"}`},
	} {
		f.check(t, c)
	}
	// Nothing above moved the clock.
	f.check(t, call{"GET", "/api/clock", "", 200, `{"now":"2026-01-02T03:04:05Z","mode":"real"}`})
}

func TestPanicIsAnInternalError(t *testing.T) {
	f := MustFixture(t)
	f.info = func() Info { panic("secret detail") }
	f.check(t, call{"GET", "/api/info", "", 500, `{"error":"internal error"}`})
	f.check(t, call{"GET", "/healthz", "", 200, `{"status":"ok"}`})
}

func TestHTTPStatusTable(t *testing.T) {
	got := map[string]int{}
	for _, code := range []string{core.EINVALID, core.EUNAUTHORIZED, core.ENOTFOUND, core.ECONFLICT, core.ELOCKLOST,
		core.EPRECONDITION, core.ETOOLARGE, core.ERESOURCELOCKED, core.EUNAVAILABLE, core.EINTERNAL, "something-new"} {
		got[code] = httpStatus(code)
	}
	want := map[string]int{
		core.EINVALID: 400, core.EUNAUTHORIZED: 401, core.ENOTFOUND: 404, core.ECONFLICT: 409, core.ELOCKLOST: 410,
		core.EPRECONDITION: 412, core.ETOOLARGE: 413, core.ERESOURCELOCKED: 423, core.EUNAVAILABLE: 503,
		core.EINTERNAL: 500, "something-new": 500,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("httpStatus (-want +got):\n%s", diff)
	}
}

func TestServerLifecycle(t *testing.T) {
	f := MustFixture(t)
	if f.server.Addr() != nil {
		t.Errorf("Addr before Open = %v, want nil", f.server.Addr())
	}
	if err := f.server.Open(); err != nil {
		t.Fatal(err)
	}
	addr := f.server.Addr().String()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /healthz: %d", resp.StatusCode)
	}

	// A taken port fails in Open, at once.
	other := NewServer(Config{Addr: addr, Engine: f.engine, Clock: f.clock})
	if err := other.Open(); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Errorf("Open on a taken port: %v, want an %s error", err, core.EUNAVAILABLE)
	}
	if err := other.Close(context.Background()); err != nil {
		t.Errorf("Close of a server that never opened: %v", err)
	}

	if err := f.server.Open(); core.ErrorCode(err) != core.ECONFLICT {
		t.Errorf("second Open: %v, want %s", err, core.ECONFLICT)
	}
	for i := range 2 {
		if err := f.server.Close(context.Background()); err != nil {
			t.Errorf("Close #%d: %v", i+1, err)
		}
	}
	if err := f.server.Open(); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Errorf("Open after Close: %v, want %s", err, core.EUNAVAILABLE)
	}
}
