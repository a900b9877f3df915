package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/dashboard"
)

func TestHealthzAndInfo(t *testing.T) {
	m := MustStart(t)
	a := MustAPI(t, m)

	var health map[string]string
	if got := a.get("/healthz", &health); got != 200 {
		t.Errorf("GET /healthz: %d", got)
	}
	if diff := cmp.Diff(map[string]string{"status": "ok"}, health); diff != "" {
		t.Errorf("/healthz (-want +got):\n%s", diff)
	}

	var info dashboard.Info
	if got := a.get("/api/info", &info); got != 200 {
		t.Errorf("GET /api/info: %d", got)
	}
	want := dashboard.Info{Version: "dev", Listeners: map[string]dashboard.Listener{
		"control":             {Addr: m.Control.Addr().String(), Served: true},
		"amqp":                {Addr: m.amqp.Addr().String(), Served: true},
		"amqps":               {Addr: m.amqps.Addr().String(), Served: true},
		"cosmos":              {Addr: m.Cosmos.Addr().String(), Served: true},
		"servicebusAdmin":     {Addr: m.sbAdmin.Addr().String(), Served: true},
		"servicebusWebSocket": {Addr: m.sbHTTPS.Addr().String(), Served: true},
		"rabbitmqManagement":  {Addr: m.management.Addr().String(), Served: true},
	}}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("/api/info (-want +got):\n%s", diff)
	}
	if strings.HasSuffix(info.Listeners["control"].Addr, ":0") {
		t.Errorf("control listener reports %q, not the port it got", info.Listeners["control"].Addr)
	}
}

// orders is a Service Bus queue whose messages live 10 minutes by default.
var orders = core.Entity{
	EntityKey: core.EntityKey{Protocol: core.ServiceBus, Name: "orders"},
	Kind:      "queue",
	Durable:   true,
	Policy: core.Policy{
		DefaultTTL: core.After(10 * time.Minute),
		Rules:      core.RuleIDs{DefaultTTL: "SB-2", ItemTTL: "SB-1", Expire: "SB-8"},
	},
}

// rule: EM-1 (advance returns once what fell due is applied), EM-2 (and it
// is in the event log).
func TestAdvanceExpiresItemWithEvent_EM1_EM2(t *testing.T) {
	m := MustStart(t, "--clock", "frozen")
	a := MustAPI(t, m)
	MustCreate(t, m, orders)
	MustEnqueue(t, m, orders.EntityKey, core.Item{Body: []byte("order 1"), Persistent: true})
	t0 := m.Clock.Now()

	var items []dashboard.ItemView
	if got := a.get("/api/entities/servicebus/orders/items", &items); got != 200 || len(items) != 1 {
		t.Fatalf("items before: %d %+v", got, items)
	}
	if items[0].DueAt == nil || !items[0].DueAt.Equal(t0.Add(10*time.Minute)) || items[0].Rule != "SB-2" {
		t.Errorf("item before: dueAt %v rule %q, want %v SB-2", items[0].DueAt, items[0].Rule, t0.Add(10*time.Minute))
	}

	var st dashboard.ClockState
	if got := a.post("/api/clock/advance", `{"by":"15m"}`, &st); got != 200 {
		t.Fatalf("advance: %d", got)
	}
	applied := 1
	if diff := cmp.Diff(dashboard.ClockState{Now: t0.Add(15 * time.Minute).UTC().Format(time.RFC3339Nano), Mode: core.ClockFrozen, Applied: &applied}, st); diff != "" {
		t.Errorf("advance (-want +got):\n%s", diff)
	}
	// No waiting: the call returned after applying the expiry.
	if got := a.get("/api/entities/servicebus/orders/items", &items); got != 200 || len(items) != 0 {
		t.Errorf("items after: %d %+v", got, items)
	}
	var evs []core.Event
	if got := a.get("/api/events", &evs); got != 200 {
		t.Fatalf("events: %d", got)
	}
	want := []core.Event{{
		ID: 1, Time: t0.Add(15 * time.Minute), Due: t0.Add(10 * time.Minute), Protocol: "servicebus", Entity: "orders",
		Item: 1, Rule: "SB-8", Action: core.ActionExpired, Reason: "TTL ran out (entity default TTL 10m), applied 5m after it was due",
	}}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	var ents []dashboard.EntityView
	if got := a.get("/api/entities", &ents); got != 200 || len(userEntities(ents)) != 1 || userEntities(ents)[0].NextDue != nil {
		t.Errorf("entities after: %d %+v", got, ents)
	}
}

// rule: RB-13 (what ran out while lapse was down is expired at start), EM-3
// (what was stored survives a restart).
func TestRestartKeepsStoredItemsAndExpiresDowntime_RB13_EM3(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	q := core.Entity{
		EntityKey: core.EntityKey{Protocol: core.RabbitMQ, Name: "/orders"}, Kind: "queue", Durable: true,
		Policy: core.Policy{Rules: core.RuleIDs{ItemTTL: "RB-5", Expire: "RB-3"}},
	}
	scratch := core.Entity{EntityKey: core.EntityKey{Protocol: core.RabbitMQ, Name: "/scratch"}, Kind: "queue"}

	m1 := MustStart(t, "--data", dir)
	MustCreate(t, m1, q)
	MustCreate(t, m1, scratch)
	soon := MustEnqueue(t, m1, q.EntityKey, core.Item{Body: []byte("1h"), TTL: core.After(time.Hour), Persistent: true})
	kept := MustEnqueue(t, m1, q.EntityKey, core.Item{Body: []byte("48h"), TTL: core.After(48 * time.Hour), Persistent: true})
	MustEnqueue(t, m1, q.EntityKey, core.Item{Body: []byte("transient"), TTL: core.After(48 * time.Hour)})
	MustEnqueue(t, m1, scratch.EntityKey, core.Item{Body: []byte("non-durable queue"), Persistent: true})
	if err := m1.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// lapse comes back two hours later.
	m2 := MustStartWall(t, func() time.Time { return time.Now().Add(2 * time.Hour) }, "--data", dir)
	a := MustAPI(t, m2)

	var evs []core.Event
	if got := a.get("/api/events", &evs); got != 200 || len(evs) != 1 {
		t.Fatalf("events after restart: %d %+v", got, evs)
	}
	ev := evs[0]
	want := core.Event{ID: 1, Time: ev.Time, Due: soon.DueAt.Truncate(time.Millisecond), Protocol: "rabbitmq",
		Entity: "/orders", Item: soon.Seq, Rule: "RB-3", Action: core.ActionExpired, Reason: ev.Reason}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("event of the downtime expiry (-want +got):\n%s", diff)
	}
	if d := ev.Time.Sub(ev.Due); d < time.Hour {
		t.Errorf("applied %v after its due time, want about an hour (at start)", d)
	}

	var items []dashboard.ItemView
	if got := a.get("/api/entities/rabbitmq//orders/items", &items); got != 200 || len(items) != 1 {
		t.Fatalf("items after restart: %d %+v", got, items)
	}
	it := items[0]
	if it.Seq != kept.Seq || it.BodyText == nil || *it.BodyText != "48h" || it.DueAt == nil ||
		!it.DueAt.Equal(kept.DueAt.Truncate(time.Millisecond)) || it.Rule != "RB-5" {
		t.Errorf("kept item: %+v, want seq %d body 48h due %v rule RB-5", it, kept.Seq, kept.DueAt)
	}

	var ents []dashboard.EntityView
	a.get("/api/entities", &ents)
	var names []string
	for _, e := range userEntities(ents) {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{"/orders"}, names); diff != "" {
		t.Errorf("entities after restart (-want +got):\n%s", diff)
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryDataKeepsNothing(t *testing.T) {
	m := MustStart(t, "--data", ":memory:")
	MustCreate(t, m, orders)
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	m = MustStart(t, "--data", ":memory:")
	if ents := userEngineEntities(m.Engine.Entities(m.Clock.Now(), "")); len(ents) != 0 {
		t.Errorf("a new :memory: lapse has %d entities", len(ents))
	}
}

// In memory, the engine is the only copy of the items: its store keeps
// none, so that a write costs no second copy that nothing would read.
func TestMemoryDataStoreKeepsNoSecondCopy(t *testing.T) {
	m := MustStart(t, "--data", ":memory:")
	MustCreate(t, m, orders)
	MustEnqueue(t, m, orders.EntityKey, core.Item{Persistent: true, Body: []byte("kept by the engine alone")})
	if c, _, err := m.Engine.Counts(m.Clock.Now(), orders.EntityKey); err != nil || c.Active != 1 {
		t.Fatalf("the engine holds %d active items (%v), want 1", c.Active, err)
	}
	stored := 0
	if err := m.store.Load(context.Background(),
		func(core.Entity) error { stored++; return nil },
		func(core.EntityKey, core.Item) error { stored++; return nil },
		func(core.EntityKey, core.SessionState) error { stored++; return nil }); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Errorf("the store of a :memory: lapse holds %d entities, items and states, want none", stored)
	}
}

// POST /api/reset drops every entity and item, in the data folder too.
func TestReset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m := MustStart(t, "--data", dir)
	a := MustAPI(t, m)
	MustCreate(t, m, orders)
	MustEnqueue(t, m, orders.EntityKey, core.Item{Persistent: true})
	var got map[string]string
	if status := a.post("/api/reset", "", &got); status != 200 || got["status"] != "reset" {
		t.Fatalf("reset: %d %v", status, got)
	}
	var ents []dashboard.EntityView
	if a.get("/api/entities", &ents); len(userEntities(ents)) != 0 {
		t.Errorf("entities after reset: %+v", ents)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	m = MustStart(t, "--data", dir)
	if ents := userEngineEntities(m.Engine.Entities(m.Clock.Now(), "")); len(ents) != 0 {
		t.Errorf("entities after reset and restart: %+v", ents)
	}
}

// brokerDefault reports whether an entity is one every RabbitMQ has: the
// vhost "/" and its amq.* exchanges.
func brokerDefault(protocol, kind, name string) bool {
	return protocol == core.RabbitMQ && (name == "vhost:/" || kind == "exchange" && strings.HasPrefix(name, "exchange:/amq."))
}

// userEntities drops the broker's defaults from a control API listing.
func userEntities(ents []dashboard.EntityView) []dashboard.EntityView {
	var out []dashboard.EntityView
	for _, e := range ents {
		if !brokerDefault(e.Protocol, e.Kind, e.Name) {
			out = append(out, e)
		}
	}
	return out
}

// userEngineEntities drops the broker's defaults from the engine's entities.
func userEngineEntities(ents []core.EntityInfo) []core.EntityInfo {
	var out []core.EntityInfo
	for _, e := range ents {
		if !brokerDefault(e.Protocol, e.Kind, e.Name) {
			out = append(out, e)
		}
	}
	return out
}
