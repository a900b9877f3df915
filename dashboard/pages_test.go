package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// page fetches a page or fragment and returns its status and body.
func (f *fixture) page(tb testing.TB, path string) (int, string) {
	tb.Helper()
	w := httptest.NewRecorder()
	f.server.Handler().ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	return w.Code, w.Body.String()
}

// mustPage fetches an HTML page that must be there and contain each of want.
func (f *fixture) mustPage(t *testing.T, path string, want ...string) string {
	t.Helper()
	status, body := f.page(t, path)
	if status != 200 {
		t.Fatalf("GET %s: status %d: %s", path, status, body)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("GET %s: no %q in the page", path, w)
		}
	}
	return body
}

// seed fills the fixture with a Service Bus queue and its dead-letter
// queue, a RabbitMQ queue and a Cosmos container, each with items.
func seed(t *testing.T, f *fixture) {
	t.Helper()
	sb := core.EntityKey{Protocol: core.ServiceBus, Name: "orders"}
	f.MustCreate(t, core.Entity{EntityKey: sb, Kind: "queue", DeadLetterQueue: "orders/$DeadLetterQueue",
		Settings: []core.Setting{{Key: "DefaultMessageTimeToLive", Value: "PT10M"}, {Key: "DeadLetteringOnMessageExpiration", Value: "true"}},
		Policy: core.Policy{DefaultTTL: core.After(10 * time.Minute), MaxTTL: core.After(10 * time.Minute), OnExpire: core.DeadLetter,
			Rules: core.RuleIDs{DefaultTTL: "SB-2", ItemTTL: "SB-1", Ceiling: "SB-2", Expire: "SB-8", Never: "SB-3"}}})
	f.MustCreate(t, core.Entity{EntityKey: core.EntityKey{Protocol: core.ServiceBus, Name: "orders/$DeadLetterQueue"}, Kind: "deadletterqueue", Parent: "orders"})
	f.MustEnqueue(t, sb, core.Item{Body: []byte(`{"order":1}`), TTL: core.After(20 * time.Minute)})
	rb := core.EntityKey{Protocol: core.RabbitMQ, Name: "/jobs"}
	f.MustCreate(t, core.Entity{EntityKey: rb, Kind: "queue", Settings: []core.Setting{{Key: "x-message-ttl", Value: "60000"}},
		Policy: core.Policy{DefaultTTL: core.After(time.Minute), MaxTTL: core.After(time.Minute), HeadOnly: true,
			Rules: core.RuleIDs{DefaultTTL: "RB-1", ItemTTL: "RB-5", Ceiling: "RB-5", Expire: "RB-3"}}})
	f.MustEnqueue(t, rb, core.Item{Body: []byte("job <1>")})
	co := core.EntityKey{Protocol: core.Cosmos, Name: "db/items"}
	f.MustCreate(t, core.Entity{EntityKey: co, Kind: "container", Parent: "db",
		Policy: core.Policy{DefaultTTL: core.After(time.Hour), Base: core.FromModified, BaseResolution: time.Second, Retroactive: true,
			Rules: core.RuleIDs{DefaultTTL: "CO-4", ItemTTL: "CO-4"}}})
	f.MustEnqueue(t, co, core.Item{Key: "pk|1", Body: []byte(`{"id":"1"}`)})
}

func TestPages(t *testing.T) {
	f := MustFixture(t)
	f.info = func() Info {
		return Info{Listeners: map[string]Listener{"amqp": {Addr: "[::]:5672", Served: true}, "cosmos": {Addr: "[::]:8081", Served: true}}}
	}
	seed(t, f)
	t.Run("Overview", func(t *testing.T) {
		body := f.mustPage(t, "/", "Azure Service Bus", "RabbitMQ", "Azure Cosmos DB", `href="entity?protocol=servicebus&amp;name=orders"`,
			`data-due="2026-01-02T03:14:05Z"`, "TTL 10m, max 10m → dead-letter", "$DeadLetterQueue",
			"Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey", "amqp://guest:guest@localhost:5672/",
			"https://localhost:8081/", `<script src="static/app.js" defer></script>`, `id="clock-now"`)
		// The dead-letter queue is shown under its queue, indented.
		if i, j := strings.Index(body, `name=orders"`), strings.Index(body, `name=orders%2F%24DeadLetterQueue"`); i < 0 || j < i {
			t.Errorf("the dead-letter queue is not listed after its queue: %d, %d", i, j)
		}
	})
	t.Run("Entity", func(t *testing.T) {
		f.mustPage(t, "/entity?protocol=servicebus&name=orders",
			"DefaultMessageTimeToLive", "PT10M", // the protocol's words
			"An item without a TTL of its own expires 10m after the enqueue time.", `href="rules#SB-2"`,
			"An item&#39;s own TTL longer than 10m is cut to 10m.", "An expired item is dead-lettered.",
			`{&#34;order&#34;:1}`, "own TTL 20m cut to the entity&#39;s maximum 10m", `data-due="2026-01-02T03:14:05Z"`,
			`data-post="api/entities/servicebus/orders/purge"`, "1 received · 0 delivered · 0 expired · 0 dead-lettered")
		f.mustPage(t, "/entity?protocol=rabbitmq&name=/jobs", "x-message-ttl", "An item expires only when it reaches the head of the queue", "job &lt;1&gt;")
		f.mustPage(t, "/entity?protocol=cosmos&name=db/items", "the last modification (in whole seconds, _ts)",
			"A change of the default TTL applies at once to the items already stored.")
		status, body := f.page(t, "/entity?protocol=servicebus&name=nope")
		if status != http.StatusNotFound || !strings.Contains(body, "not found") {
			t.Errorf("unknown entity: %d %s", status, body)
		}
	})
	t.Run("EventLog", func(t *testing.T) {
		f.mustPage(t, "/events", "No events yet")
		f.check(t, call{"POST", "/api/clock/advance", `{"by":"11m"}`, 200, `{"now":"2026-01-02T03:15:05Z","mode":"offset","applied":2}`})
		f.mustPage(t, "/events", `class="action a-expired"`, `href="rules#SB-8"`, `href="rules#RB-3"`)
		body := f.mustPage(t, "/events?protocol=rabbitmq", "/jobs")
		if strings.Contains(body, `href="rules#SB-8"`) {
			t.Error("the protocol filter let a Service Bus event through")
		}
	})
	t.Run("Others", func(t *testing.T) {
		f.mustPage(t, "/timeline", `<svg class="plot"`, "db/items")
		f.mustPage(t, "/timeline?range=14d", "next 14d")
		if body := f.mustPage(t, "/rules", `id="SB-8"`, `id="EM-4"`, "<code>DeadLetterReason = &#34;TTLExpiredException&#34;</code>",
			"<h2>Service Bus (AMQP 1.0)</h2>"); strings.Contains(body, "seeds/") {
			t.Error("the rules page names documents it does not serve")
		}
		f.mustPage(t, "/explorer", "No containers yet") // no query language is wired in this fixture
		f.mustPage(t, "/deadletters", "Dead letters")
		f.mustPage(t, "/static/app.css", ".clock")
		f.mustPage(t, "/static/app.js", "EventSource")
	})
	t.Run("Fragments", func(t *testing.T) {
		for _, p := range []string{"/fragments/overview", "/fragments/entity?protocol=servicebus&name=orders",
			"/fragments/items?protocol=servicebus&name=orders", "/fragments/events", "/fragments/timeline?range=1d", "/fragments/deadletters"} {
			status, body := f.page(t, p)
			if status != 200 || strings.Contains(body, "<html") {
				t.Errorf("GET %s: %d, whole page %v", p, status, strings.Contains(body, "<html"))
			}
		}
		f.check(t, call{"GET", "/fragments/nope", "", 404, `{"error":"no such fragment \"nope\""}`})
		f.check(t, call{"GET", "/fragments/entity?protocol=servicebus&name=nope", "", 404, `{"error":"entity \"nope\" not found"}`})
	})
}

func TestTimeline(t *testing.T) {
	f := MustFixture(t)
	k := core.EntityKey{Protocol: core.RabbitMQ, Name: "/q"}
	f.MustCreate(t, core.Entity{EntityKey: k, Kind: "queue", Policy: core.Policy{Rules: core.RuleIDs{ItemTTL: "RB-5"}}})
	for _, d := range []time.Duration{30 * time.Second, time.Minute, 90 * time.Second, 59 * time.Minute, 2 * time.Hour} {
		f.MustEnqueue(t, k, core.Item{TTL: core.After(d)})
	}
	f.MustEnqueue(t, k, core.Item{}) // never due
	f.MustEnqueue(t, k, core.Item{TTL: core.After(time.Second)})
	status, got := f.do(t, "GET", "/api/timeline?horizon=1h&buckets=60", "")
	if status != 200 {
		t.Fatalf("timeline: %d %v", status, got)
	}
	b, _ := json.Marshal(got)
	var tl Timeline
	if err := json.Unmarshal(b, &tl); err != nil {
		t.Fatal(err)
	}
	want := make([]int, 60)
	want[0] = 3 // +1s, +30s and +1m exactly (a bucket ends at its upper bound)
	want[1] = 1 // +90s
	want[58] = 1
	if len(tl.Series) != 1 || tl.Step != "1m" || tl.Later != 1 {
		t.Fatalf("timeline: %+v", tl)
	}
	if diff := cmp.Diff(want, tl.Series[0].Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	for _, c := range []call{
		{"GET", "/api/timeline?horizon=-1m", "", 400, `{"error":"horizon must be a positive duration like 10m, 24h or P14D, got \"-1m\""}`},
		{"GET", "/api/timeline?buckets=0", "", 400, `{"error":"buckets must be 1 to 500, got 0"}`},
		{"GET", "/api/timeline?horizon=3ns&buckets=10", "", 400, `{"error":"horizon 3ns is too short for 10 buckets"}`},
	} {
		f.check(t, c)
	}
}

// rule: SB-7 (a locked item does not expire, so it is not on the timeline)
func TestTimelineLeavesOutLockedItems(t *testing.T) {
	f := MustFixture(t)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	f.MustCreate(t, core.Entity{EntityKey: k, Kind: "queue"})
	f.MustEnqueue(t, k, core.Item{TTL: core.After(time.Minute)})
	if _, found, err := f.engine.Receive(t0, k, t0.Add(time.Hour)); !found || err != nil {
		t.Fatal(found, err)
	}
	status, got := f.do(t, "GET", "/api/timeline", "")
	if status != 200 || fmt.Sprint(got.(map[string]any)["series"]) != "[]" {
		t.Errorf("timeline with only a locked item: %d %v", status, got)
	}
}

func TestRulesCoverSemantics(t *testing.T) {
	f := MustFixture(t)
	var ids []string
	for _, r := range f.server.ui().rules {
		ids = append(ids, r.ID)
	}
	var want []string
	for _, g := range []struct {
		prefix string
		n      int
	}{{"SB", 12}, {"SS", 5}, {"RB", 15}, {"CO", 9}, {"EM", 5}} {
		for i := 1; i <= g.n; i++ {
			want = append(want, fmt.Sprintf("%s-%d", g.prefix, i))
		}
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("rule IDs (-want +got):\n%s", diff)
	}
	if got := codeSpans("a `<b>` c `d"); got != "a <code>&lt;b&gt;</code> c `d" {
		t.Errorf("codeSpans: %s", got)
	}
}

func TestPolicyLines(t *testing.T) {
	tests := []struct {
		name string
		p    core.Policy
		want []policyLine
	}{
		{"NothingExpires", core.Policy{Rules: core.RuleIDs{Never: "SB-3", ItemTTL: "SB-1"}}, []policyLine{
			{"An item without a TTL of its own never expires.", "SB-3"},
			{"An item's own TTL counts from the enqueue time.", "SB-1"},
			{"An expired item is dropped.", ""},
		}},
		{"CosmosDefaultIgnoresItems", core.Policy{DefaultTTL: core.After(time.Hour), IgnoreItemTTL: true, Base: core.FromModified, Retroactive: true,
			Rules: core.RuleIDs{DefaultTTL: "CO-4"}}, []policyLine{
			{"Every item expires 1h after the last modification; items' own TTLs are ignored.", "CO-4"},
			{"An expired item is dropped.", ""},
			{"A change of the default TTL applies at once to the items already stored.", ""},
		}},
		{"RabbitQueueTTL", core.Policy{DefaultTTL: core.After(time.Minute), MaxTTL: core.After(time.Minute), HeadOnly: true, OnExpire: core.DeadLetter,
			IdleTTL: core.After(30 * time.Minute), IdleUses: core.UseReceive | core.UseDeclare, IdleOnlyWithoutConsumers: true,
			Rules: core.RuleIDs{DefaultTTL: "RB-1", ItemTTL: "RB-5", Ceiling: "RB-5", Expire: "RB-9", Idle: "RB-8", LockLost: "RB-6", HeadOnly: "RB-7"}}, []policyLine{
			{"An item without a TTL of its own expires 1m after the enqueue time.", "RB-1"},
			{"An item's own TTL counts from the enqueue time.", "RB-5"},
			{"An item's own TTL longer than 1m is cut to 1m.", "RB-5"},
			{"An expired item is dead-lettered.", "RB-9"},
			{"An item expires only when it reaches the head of the queue; expired items behind a live one wait.", "RB-7"},
			{"A locked or unacknowledged item does not expire; when its lock ends it is available again, and expires at once if it is due.", "RB-6"},
			{"The entity is deleted after 30m unused (uses that count: receive, declare), counted only while it has no consumers.", "RB-8"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, policyLines(&tt.p)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTreePutsChildrenUnderParents(t *testing.T) {
	es := []EntityView{{Name: "a"}, {Name: "a/$DeadLetterQueue", Parent: "a"}, {Name: "b"}, {Name: "orphan", Parent: "gone"}, {Name: "t/Subscriptions/s", Parent: "t"}, {Name: "t"}}
	var got []string
	for _, r := range tree(es) {
		got = append(got, fmt.Sprintf("%d %s", r.Depth, r.Name))
	}
	want := []string{"0 a", "1 a/$DeadLetterQueue", "0 b", "0 orphan", "0 t", "1 t/Subscriptions/s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestStream follows GET /api/stream: the clock and a change at once, then
// the expiry event and the clock when the clock is advanced (EM-2), and the
// stream ends when the server closes.
func TestStream_EM2(t *testing.T) {
	f := MustFixture(t)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	f.MustCreate(t, core.Entity{EntityKey: k, Kind: "queue"})
	f.MustEnqueue(t, k, core.Item{TTL: core.After(time.Minute)})
	srv := httptest.NewServer(f.server.Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/stream", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	r := bufio.NewReader(res.Body)
	next := func() (string, string) {
		t.Helper()
		var event, data string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v", err)
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "" && event != "":
				return event, data
			case strings.HasPrefix(line, "event: "):
				event = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				data = line[len("data: "):]
			}
		}
	}
	if ev, data := next(); ev != "clock" || data != `{"now":"2026-01-02T03:04:05Z","mode":"real"}` {
		t.Errorf("first: %s %s", ev, data)
	}
	if ev, data := next(); ev != "changed" || !regexp.MustCompile(`^"[0-9a-f]{16}"$`).MatchString(data) {
		t.Errorf("second: %s %s", ev, data)
	}
	f.check(t, call{"POST", "/api/clock/advance", `{"by":"2m"}`, 200, `{"now":"2026-01-02T03:06:05Z","mode":"offset","applied":1}`})
	seen := map[string]string{}
	for len(seen) < 3 {
		ev, data := next()
		seen[ev] = data
	}
	var evs []core.Event
	if err := json.Unmarshal([]byte(seen["events"]), &evs); err != nil || len(evs) != 1 {
		t.Fatalf("events: %v %s", err, seen["events"])
	}
	if e := evs[0]; e.Action != core.ActionExpired || e.Entity != "q" || e.Item != 1 || e.Reason == "" {
		t.Errorf("event: %+v", e)
	}
	if !strings.Contains(seen["clock"], `"now":"2026-01-02T03:06:05Z"`) {
		t.Errorf("clock after the advance: %s", seen["clock"])
	}
	// Closing the server ends the stream.
	if err := f.server.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := r.ReadString('\n'); err != nil {
			break
		}
	}
}
