package dashboard

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// issue 14.7: an entity with sessions shows its sessions on its page (id,
// holder or free, the lock's countdown with its rule SS-3, state size,
// messages by state), GET .../sessions lists them, and its items carry
// their session id (group).
func TestEntityPageListsSessions(t *testing.T) {
	f := MustFixture(t)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "sq"}
	f.MustCreate(t, core.Entity{EntityKey: k, Kind: "queue",
		Policy: core.Policy{DefaultTTL: core.Forever, MaxTTL: core.Forever, Sessions: true, Rules: core.RuleIDs{SessionLock: "SS-3"}}})
	f.MustEnqueue(t, k, core.Item{Group: "a", Body: []byte("a1")})
	f.MustEnqueue(t, k, core.Item{Group: "a", Body: []byte("a2")})
	f.MustEnqueue(t, k, core.Item{Group: "b", Body: []byte("b1")})
	now := f.clock.Now()
	if _, err := f.engine.AcceptSession(now, k, "a", "receiver 1", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.engine.ReceiveSession(now, k, "a", "receiver 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.engine.SetSessionState(now, k, "a", "receiver 1", []byte("state")); err != nil {
		t.Fatal(err)
	}

	body := f.mustPage(t, "/entity?protocol=servicebus&name=sq", "<h2>Sessions", `data-session="a"`, "receiver 1",
		`data-due="2026-01-02T03:05:05Z"`, `href="rules#SS-3"`, "5 bytes", `data-session="b"`, "free")
	row := body[strings.Index(body, `data-session="b"`):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, "free") || !strings.Contains(row, "<td>1</td><td>0</td><td>0</td><td>0</td>") {
		t.Errorf("session b's row: %s", row)
	}

	w := httptest.NewRecorder()
	f.server.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/api/entities/servicebus/sq/sessions", nil))
	var got []SessionView
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%d %s: %v", w.Code, w.Body.String(), err)
	}
	until := now.Add(time.Minute)
	want := []SessionView{
		{ID: "a", Holder: "receiver 1", LockedUntil: &until, HasState: true, StateSize: 5, Counts: core.Counts{Active: 1, Locked: 1, ActiveBytes: 2}},
		{ID: "b", Counts: core.Counts{Active: 1, ActiveBytes: 2}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET sessions (-want +got):\n%s", diff)
	}

	status, items := f.do(t, "GET", "/api/entities/servicebus/sq/items", "")
	list, _ := items.([]any)
	if status != 200 || len(list) != 3 || list[0].(map[string]any)["group"] != "a" || list[2].(map[string]any)["group"] != "b" {
		t.Errorf("items: %d %v", status, items)
	}

	// an entity without sessions has none to list
	plain := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	f.MustCreate(t, core.Entity{EntityKey: plain, Kind: "queue"})
	if status, _ := f.do(t, "GET", "/api/entities/servicebus/q/sessions", ""); status != 412 {
		t.Errorf("GET sessions of a queue without sessions: %d, want 412", status)
	}
	if body := f.mustPage(t, "/entity?protocol=servicebus&name=q"); strings.Contains(body, "<h2>Sessions") {
		t.Error("the page of a queue without sessions lists sessions")
	}
}

// issue 14.7: /metrics counts an entity's sessions, held and free.
func TestSessionMetrics(t *testing.T) {
	f := MustFixture(t)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "sq"}
	f.MustCreate(t, core.Entity{EntityKey: k, Kind: "queue", Policy: core.Policy{Sessions: true}})
	for _, g := range []string{"a", "b", "c"} {
		f.MustEnqueue(t, k, core.Item{Group: g, Body: []byte(g)})
	}
	if _, err := f.engine.AcceptSession(f.clock.Now(), k, "b", "r", time.Time{}); err != nil {
		t.Fatal(err)
	}
	got, types := f.scrape(t, "lapse_sessions")
	want := lines(`
lapse_sessions{entity="sq",kind="queue",protocol="servicebus",state="free"} 2
lapse_sessions{entity="sq",kind="queue",protocol="servicebus",state="held"} 1
`)
	if diff := cmp.Diff(want, got); diff != "" || types["lapse_sessions"] != "gauge" {
		t.Errorf("lapse_sessions (-want +got):\n%s\ntype %q", diff, types["lapse_sessions"])
	}
}
