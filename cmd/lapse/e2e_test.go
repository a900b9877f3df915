package main

import (
	"bytes"
	"context"
	"database/sql"
	"io"
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
		"control":            {Addr: m.Control.Addr().String(), Served: true},
		"amqp":               {Addr: m.amqp.Addr().String(), Served: true},
		"amqps":              {Addr: m.amqps.Addr().String(), Served: true},
		"cosmos":             {Addr: m.Cosmos.Addr().String(), Served: true},
		"servicebusAdmin":    {Addr: m.sbAdmin.Addr().String(), Served: true},
		"rabbitmqManagement": {Addr: m.management.Addr().String(), Served: true},
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

func TestLockedDataFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	MustStart(t, "--data", dir)

	second := NewMain()
	second.Stderr = io.Discard
	if err := second.ParseFlags(serveArgs(dir), noEnv); err != nil {
		t.Fatal(err)
	}
	err := second.Run(context.Background())
	if core.ErrorCode(err) != core.ERESOURCELOCKED {
		t.Errorf("second Run on the same folder: %v, want a %s error", err, core.ERESOURCELOCKED)
	}

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append([]string{"serve"}, serveArgs(dir)...), noEnv, &stdout, &stderr); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, `lapse: data folder "`+dir+`" is in use by another lapse process`) {
		t.Errorf("stderr = %q, want one line saying the folder is in use", got)
	}
}

// A data folder lapse cannot use stops it with one line on stderr and exit
// code 1, and is left as it was.
func TestUnusableDataFolder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dir string)
		want    string
	}{
		{"NotADatabase", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "lapse.db"), "my notes")
		}, "lapse.db is not a SQLite database"},
		{"NewerSchema", func(t *testing.T, dir string) {
			m := MustStart(t, "--data", dir)
			if err := m.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("sqlite", filepath.Join(dir, "lapse.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("PRAGMA user_version = 9999"); err != nil {
				t.Fatal(err)
			}
		}, "was written by a newer lapse (schema 9999"},
		{"DataIsAFile", func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, dir, "not a folder")
		}, "cannot be made"},
		{"Unreadable", func(t *testing.T, dir string) {
			if os.Geteuid() == 0 {
				t.Skip("root reads every file: TestBinaryUnreadableDataFolder runs this case as another user")
			}
			mustWrite(t, filepath.Join(dir, "lapse.db"), "")
			if err := os.Chmod(filepath.Join(dir, "lapse.db"), 0); err != nil {
				t.Fatal(err)
			}
		}, "permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, dir)
			before := snapshot(t, dir)

			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), serveArgs(dir), noEnv, &stdout, &stderr); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			got := stderr.String()
			if strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "lapse: ") || !strings.Contains(got, tc.want) {
				t.Errorf("stderr = %q, want one line saying %q", got, tc.want)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("the data folder changed (-before +after):\n%s", diff)
			}
		})
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot returns the contents of the files of dir (or of dir itself when
// it is a file), but the lock file's, which holds the last process id.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "lapse.lock" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			out[p] = "unreadable: " + err.Error()
			return nil
		}
		out[p] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
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

func TestSubcommands(t *testing.T) {
	m := MustStart(t, "--clock", "frozen")
	url := controlURL(m)
	MustCreate(t, m, orders)
	MustEnqueue(t, m, orders.EntityKey, core.Item{})
	t0 := m.Clock.Now().UTC()
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	env := func(k string) string {
		if k == "LAPSE_CONTROL_URL" {
			return url
		}
		return ""
	}
	type result struct {
		Code           int
		Stdout, Stderr string
	}
	for _, tc := range []struct {
		args []string
		env  func(string) string
		want result
	}{
		{[]string{"clock", "--control-url", url}, noEnv, result{0, at(0) + " frozen\n", ""}},
		{[]string{"clock"}, env, result{0, at(0) + " frozen\n", ""}},
		{[]string{"clock", "advance", "15m", "--control-url", url}, noEnv, result{0, at(15*time.Minute) + " frozen (1 events applied)\n", ""}},
		{[]string{"events"}, env, result{0, "1\t" + at(15*time.Minute) + "\tservicebus\torders\t1\texpired\tSB-8\tTTL ran out (entity default TTL 10m), applied 5m after it was due\n", ""}},
		{[]string{"events", "--since", "1"}, env, result{0, "", ""}},
		{[]string{"events", "--protocol", "rabbitmq"}, env, result{0, "", ""}},
		{[]string{"events", "--protocol", "servicebus", "--entity", "orders", "--limit", "1"}, env, result{0, "1\t" + at(15*time.Minute) + "\tservicebus\torders\t1\texpired\tSB-8\tTTL ran out (entity default TTL 10m), applied 5m after it was due\n", ""}},
		{[]string{"clock", "advance", "P1D"}, env, result{0, at(24*time.Hour+15*time.Minute) + " frozen (0 events applied)\n", ""}},
		{[]string{"clock", "set", at(48 * time.Hour)}, env, result{0, at(48*time.Hour) + " frozen (0 events applied)\n", ""}},
		{[]string{"clock", "set", "2000-01-01T00:00:00Z"}, env, result{1, "", "lapse: cannot set the clock back from " + at(48*time.Hour) + " to 2000-01-01T00:00:00Z (HTTP 400)\n"}},
		{[]string{"clock", "advance", "soon"}, env, result{1, "", "lapse: invalid duration \"soon\": use a Go duration like 15m or an ISO 8601 one like P14D (HTTP 400)\n"}},
		{[]string{"clock", "freeze"}, env, result{0, at(48*time.Hour) + " frozen\n", ""}},
		{[]string{"healthcheck"}, env, result{0, "", ""}},
		{[]string{"version"}, noEnv, result{0, "lapse dev (" + runtimeVersion() + ")\n", ""}},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, tc.env, &stdout, &stderr)
		if diff := cmp.Diff(tc.want, result{code, stdout.String(), stderr.String()}); diff != "" {
			t.Errorf("lapse %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
		}
	}

	// resume leaves the clock running ahead of the wall: its time is not
	// known in advance.
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"clock", "resume"}, env, &stdout, &stderr); code != 0 || !strings.HasSuffix(stdout.String(), " offset\n") {
		t.Errorf("lapse clock resume: %d %q %q", code, stdout.String(), stderr.String())
	}
	if m.Clock.Mode() != core.ClockOffset {
		t.Errorf("clock mode after resume: %s", m.Clock.Mode())
	}
}

func TestSubcommandErrors(t *testing.T) {
	dead := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		code int
		want string // the first line of stderr
	}{
		{[]string{"healthcheck", "--control-url", dead}, 1, "lapse: cannot reach lapse at " + dead + ": "},
		{[]string{"clock", "--control-url", dead}, 1, "lapse: cannot reach lapse at " + dead + ": "},
		{[]string{"clock", "advance"}, 2, "lapse: usage: lapse clock advance DURATION (15m, P14D)"},
		{[]string{"clock", "set"}, 2, "lapse: usage: lapse clock set TIME (RFC 3339)"},
		{[]string{"clock", "freeze", "now"}, 2, "lapse: clock freeze takes no arguments"},
		{[]string{"clock", "rewind"}, 2, `lapse: unknown clock command "rewind"`},
		{[]string{"events", "--since", "x"}, 2, `lapse: invalid value "x" for flag -since: parse error`},
		{[]string{"events", "all"}, 2, `lapse: unexpected argument "all"`},
		{[]string{"healthcheck", "now"}, 2, "lapse: healthcheck takes no arguments"},
		{[]string{"rewind"}, 2, `lapse: unknown command "rewind"`},
		{[]string{"serve", "--clock", "fast"}, 2, `lapse: --clock "fast": use "real" or "frozen"`},
		{[]string{"--servicebus-config", "/nonexistent/Config.json"}, 1, "lapse: --servicebus-config: open /nonexistent/Config.json: no such file or directory"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, noEnv, &stdout, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if code != tc.code || !strings.HasPrefix(first, tc.want) {
			t.Errorf("lapse %s: exit %d, stderr %q; want %d, %q", strings.Join(tc.args, " "), code, first, tc.code, tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"help"}, noEnv, &stdout, &stderr); code != 0 || stdout.String() != usage {
		t.Errorf("lapse help: %d %q", code, stdout.String())
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
