package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/dashboard"
	amqp "github.com/rabbitmq/amqp091-go"
)

// mustSandbox creates a sandbox through the control API with body.
func mustSandbox(tb testing.TB, m *Main, body string) dashboard.Sandbox {
	tb.Helper()
	var sb dashboard.Sandbox
	if st := MustAPI(tb, m).post("/api/sandboxes", body, &sb); st != http.StatusCreated {
		tb.Fatalf("POST /api/sandboxes: %d", st)
	}
	if sb.ID == "" || sb.Cosmos.Key == "" || sb.ServiceBus.KeyName != sb.ID || sb.RabbitMQ.Vhost != sb.ID {
		tb.Fatalf("sandbox %+v", sb)
	}
	return sb
}

// cosmosClientKey returns an azcosmos client of m's Cosmos DB port over
// plain HTTP with key, on tr.
func cosmosClientKey(tb testing.TB, m *Main, key string, tr *http.Transport) *azcosmos.Client {
	tb.Helper()
	cred, err := azcosmos.NewKeyCredential(key)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := azcosmos.NewClientWithKey("http://"+dialable(m.Cosmos.Addr().String())+"/", cred,
		&azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// mustCosmosTTLItem makes database db, container c with a default TTL of
// ttl seconds, and item id in it, through client.
func mustCosmosTTLItem(tb testing.TB, client *azcosmos.Client, ttl int32, id string) *azcosmos.ContainerClient {
	tb.Helper()
	ctx := context.Background()
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		tb.Fatal(err)
	}
	db, _ := client.NewDatabase("db")
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c", DefaultTimeToLive: &ttl,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		tb.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"`+id+`","pk":"p"}`), nil); err != nil {
		tb.Fatal(err)
	}
	return c
}

// cosmosStatus is the HTTP status of err, 0 for none.
func cosmosStatus(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	if err != nil {
		// azcosmos words the account's read's failure without wrapping it.
		if _, after, ok := strings.Cut(err.Error(), "RESPONSE "); ok && len(after) >= 3 {
			if n, err := strconv.Atoi(after[:3]); err == nil {
				return n
			}
		}
		return -1
	}
	return 0
}

// issue 29.1, 29.2 (Cosmos DB), rule: EM-1, CO-6. A sandbox is a world of
// its own reached on the same Cosmos DB port by its own account key: the
// same database and container names as the default world's do not
// collide, its clock moves alone (a TTL there expires, the default world's
// same TTL does not), and clients of both worlds share one connection
// pool, as azcosmos clients of one process do.
func TestSandbox_CosmosKeyRoutesRequests(t *testing.T) {
	m := MustStart(t, "--clock", "frozen")
	sb := mustSandbox(t, m, `{}`)
	if sb.Clock.Mode != core.ClockFrozen {
		t.Fatalf("a sandbox's clock is %q at creation, want frozen", sb.Clock.Mode)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	def := cosmosClientKey(t, m, cosmos.EmulatorKey, tr)
	box := cosmosClientKey(t, m, sb.Cosmos.Key, tr)
	defC := mustCosmosTTLItem(t, def, 60, "in-default")
	boxC := mustCosmosTTLItem(t, box, 60, "in-sandbox")
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := defC.ReadItem(ctx, pk, "in-sandbox", nil); cosmosStatus(err) != http.StatusNotFound {
		t.Fatalf("the default world reads the sandbox's item: %v", err)
	}
	if _, err := boxC.ReadItem(ctx, pk, "in-default", nil); cosmosStatus(err) != http.StatusNotFound {
		t.Fatalf("the sandbox reads the default world's item: %v", err)
	}

	var clock dashboard.ClockState
	if st := MustAPI(t, m).post("/api/sandboxes/"+sb.ID+"/api/clock/advance", `{"by":"61s"}`, &clock); st != http.StatusOK {
		t.Fatalf("advance the sandbox's clock: %d", st)
	}
	if _, err := boxC.ReadItem(ctx, pk, "in-sandbox", nil); cosmosStatus(err) != http.StatusNotFound {
		t.Fatalf("the sandbox's item outlived its TTL on the sandbox's clock: %v", err)
	}
	if _, err := defC.ReadItem(ctx, pk, "in-default", nil); err != nil {
		t.Fatalf("the default world's item expired with the sandbox's clock: %v", err)
	}
	var events []core.Event
	MustAPI(t, m).get("/api/sandboxes/"+sb.ID+"/api/events", &events)
	if len(events) != 1 || events[0].Rule != "CO-6" || events[0].ItemKey == "" {
		t.Fatalf("the sandbox's events: %+v", events)
	}
	MustAPI(t, m).get("/api/events", &events)
	for _, ev := range events {
		if ev.Rule == "CO-6" {
			t.Fatalf("the default world's log has the sandbox's expiry: %+v", ev)
		}
	}

	// A key no world has is refused as before.
	other := cosmosClientKey(t, m, "dGhpcyBpcyBubyBrZXkgb2YgYW55IHdvcmxkIGF0IGFsbCAxMjM0NTY3ODkwMTI=", tr)
	if _, err := other.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "x"}, nil); cosmosStatus(err) != http.StatusUnauthorized {
		t.Fatalf("a key of no world: %v", err)
	}

	// Deleted, the sandbox's key is refused.
	if st := MustAPI(t, m).do("DELETE", "/api/sandboxes/"+sb.ID, "", nil); st != http.StatusNoContent {
		t.Fatalf("DELETE: %d", st)
	}
	if _, err := boxC.ReadItem(ctx, pk, "in-sandbox", nil); cosmosStatus(err) != http.StatusUnauthorized {
		t.Fatalf("a deleted sandbox's key: %v", err)
	}
	if st := MustAPI(t, m).get("/api/sandboxes/"+sb.ID, nil); st != http.StatusNotFound {
		t.Fatalf("GET a deleted sandbox: %d", st)
	}
}

// issue 29.1, rule: EM-5. A sandbox unused past its idle TTL, on the wall
// clock, is deleted, and the default world's event log says so; one in
// use is kept.
func TestSandbox_IdleDeleted_EM5(t *testing.T) {
	var wall atomic.Int64
	wall.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, wall.Load()) }
	m := MustStartWall(t, now, "--clock", "frozen")
	idle := mustSandbox(t, m, `{"idleTtlSeconds": 60}`)
	used := mustSandbox(t, m, `{"idleTtlSeconds": 60}`)
	wall.Add(int64(40 * time.Second))
	m.sandboxes.reapIdle()
	MustAPI(t, m).get("/api/sandboxes/"+used.ID+"/api/clock", nil) // a use
	wall.Add(int64(30 * time.Second))
	m.sandboxes.reapIdle()
	if st := MustAPI(t, m).get("/api/sandboxes/"+idle.ID, nil); st != http.StatusNotFound {
		t.Fatalf("an idle sandbox is still there: %d", st)
	}
	if st := MustAPI(t, m).get("/api/sandboxes/"+used.ID, nil); st != http.StatusOK {
		t.Fatalf("a used sandbox was deleted: %d", st)
	}
	var events []core.Event
	MustAPI(t, m).get("/api/events", &events)
	var found bool
	for _, ev := range events {
		if ev.Rule == "EM-5" {
			if ev.Entity != idle.ID || ev.Action != core.ActionDeletedIdle || !strings.Contains(ev.Reason, "1m0s") {
				t.Fatalf("EM-5 event %+v", ev)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("no EM-5 event in the default world's log: %+v", events)
	}
	var list []dashboard.Sandbox
	MustAPI(t, m).get("/api/sandboxes", &list)
	if len(list) != 1 || list[0].ID != used.ID {
		t.Fatalf("GET /api/sandboxes: %+v", list)
	}
	raw, _ := json.Marshal(list[0])
	if !strings.Contains(string(raw), `"connectionString":"Endpoint=sb://`) {
		t.Fatalf("a sandbox's settings: %s", raw)
	}
}

// issue 29.2 (Service Bus), rule: SB-5. A sandbox made with the same
// Config.json as the default world is reached on the same AMQP port by its
// connection string (its own key name), and its administration client on
// the same administration port; a message sent in each world with the
// queue's default TTL of an hour is dead-lettered in the sandbox when its
// clock moves past the hour, and not in the default world.
func TestSandbox_ServiceBusKeyNameRoutesConnections(t *testing.T) {
	m := MustStart(t, "--clock", "frozen", "--servicebus-config", "../examples/config/Config.json")
	cfg, err := os.ReadFile("../examples/config/Config.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"servicebusConfig": json.RawMessage(cfg)})
	sb := mustSandbox(t, m, string(body))
	box, err := azservicebus.NewClientFromConnectionString(sb.ServiceBus.ConnectionString, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { box.Close(context.Background()) })
	def := MustSBClient(t, m)
	MustSBSend(t, def, "orders", &azservicebus.Message{Body: []byte("default")})
	MustSBSend(t, box, "orders", &azservicebus.Message{Body: []byte("sandbox")})

	// The sandbox's administration client, on the shared administration
	// port, sees its own queue and creates one the default world lacks.
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	adm, err := admin.NewClientFromConnectionString(sb.ServiceBus.ConnectionString, &admin.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: sandboxAdminTransport{base: tr, addr: dialable(m.sbAdmin.Addr().String())}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateQueue(sbContext(t), "only-in-sandbox", nil); err != nil {
		t.Fatal(err)
	}
	if q, err := MustSBAdmin(t, m).GetQueue(sbContext(t), "only-in-sandbox", nil); err != nil || q != nil {
		t.Fatalf("the default world has the sandbox's queue: %+v %v", q, err)
	}

	if st := MustAPI(t, m).post("/api/sandboxes/"+sb.ID+"/api/clock/advance", `{"by":"61m"}`, nil); st != http.StatusOK {
		t.Fatalf("advance: %d", st)
	}
	peek := func(c *azservicebus.Client, sub azservicebus.SubQueue) []string {
		r, err := c.NewReceiverForQueue("orders", &azservicebus.ReceiverOptions{SubQueue: sub})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close(context.Background())
		msgs, err := r.PeekMessages(sbContext(t), 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, msg := range msgs {
			out = append(out, string(msg.Body))
		}
		return out
	}
	if got := peek(box, azservicebus.SubQueueDeadLetter); len(got) != 1 || got[0] != "sandbox" {
		t.Fatalf("the sandbox's dead-letter queue: %q", got)
	}
	if got := peek(def, azservicebus.SubQueueDeadLetter); len(got) != 0 {
		t.Fatalf("the default world's dead-letter queue: %q", got)
	}
	if got := peek(def, 0); len(got) != 1 || got[0] != "default" {
		t.Fatalf("the default world's queue: %q", got)
	}

	// Deleted, the sandbox ends its connections and refuses its key.
	if st := MustAPI(t, m).do("DELETE", "/api/sandboxes/"+sb.ID, "", nil); st != http.StatusNoContent {
		t.Fatalf("DELETE: %d", st)
	}
	again, err := azservicebus.NewClientFromConnectionString(sb.ServiceBus.ConnectionString,
		&azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close(context.Background())
	s, err := again.NewSender("orders", nil)
	if err == nil {
		err = s.SendMessage(sbContext(t), &azservicebus.Message{Body: []byte("x")}, nil)
	}
	if err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") && !strings.Contains(err.Error(), "InvalidSignature") {
		t.Fatalf("a deleted sandbox's connection string: %v", err)
	}
}

// sandboxAdminTransport sends the admin client's requests, which it builds
// as https://host/ from the connection string's AMQP endpoint, to the
// administration port over plain HTTP.
type sandboxAdminTransport struct {
	base *http.Transport
	addr string
}

func (t sandboxAdminTransport) Do(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	u := *r.URL
	u.Scheme, u.Host = "http", t.addr
	r.URL = &u
	return t.base.RoundTrip(r)
}

// issue 29.4. The dashboard shows each sandbox under /sandboxes/{id}/: its
// entities and its clock, with every link of its pages relative to that
// base; the default world's pages do not show them. /metrics counts the
// sandboxes alive (lapse_sandboxes).
func TestSandbox_DashboardAndMetrics(t *testing.T) {
	m := MustStart(t, "--clock", "frozen")
	sb := mustSandbox(t, m, `{"time":"2031-02-03T04:05:06Z","cosmosConfig":{"databases":[{"id":"boxdb","containers":[{"id":"only-here","partitionKey":"/pk"}]}]}}`)
	get := func(path string) (int, string) {
		resp, err := http.Get(controlURL(m) + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	st, page := get("/sandboxes/" + sb.ID + "/")
	for _, want := range []string{`<base href="/sandboxes/` + sb.ID + `/">`, "boxdb/only-here", "2031-02-03T04:05:06", `<option value="/sandboxes/` + sb.ID + `/" selected>`} {
		if st != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("GET /sandboxes/%s/: %d, no %q in\n%s", sb.ID, st, want, page)
		}
	}
	if _, page := get("/"); strings.Contains(page, "only-here") || !strings.Contains(page, `<base href="/">`) {
		t.Fatalf("the default world's overview shows the sandbox's container, or has no base")
	}
	if st, body := get("/sandboxes/" + sb.ID + "/api/entities"); st != http.StatusOK || !strings.Contains(body, "only-here") {
		t.Fatalf("the sandbox's /api/entities under its page base: %d %s", st, body)
	}
	if _, metrics := get("/metrics"); !strings.Contains(metrics, "\nlapse_sandboxes 1\n") {
		t.Fatalf("/metrics has no lapse_sandboxes 1")
	}
	if st, _ := get("/sandboxes/sbx-00000000/"); st != http.StatusNotFound {
		t.Fatalf("a sandbox that is not there: %d", st)
	}
}

// issue 29.2 (RabbitMQ), rule: RB-1. A sandbox is its own virtual host on
// the same AMQP port, and on the same management API: the same queue name
// with the same message TTL in both worlds, and a move of the sandbox's
// clock past the TTL expires the sandbox's message only.
func TestSandbox_RabbitMQVhostRoutesConnections(t *testing.T) {
	m := MustStart(t, "--clock", "frozen")
	sb := mustSandbox(t, m, `{}`)
	if !strings.HasSuffix(sb.RabbitMQ.URL, "/"+sb.ID) {
		t.Fatalf("the sandbox's AMQP URL %q does not name its vhost", sb.RabbitMQ.URL)
	}
	publish := func(url, body string) *amqp.Channel {
		conn, err := amqp.Dial(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDeclare("orders", true, false, false, false, amqp.Table{"x-message-ttl": int32(60000)}); err != nil {
			t.Fatal(err)
		}
		if err := ch.Publish("", "orders", false, false, amqp.Publishing{Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
		return ch
	}
	def := publish("amqp://guest:guest@"+dialable(m.amqp.Addr().String())+"/", "default")
	box := publish(sb.RabbitMQ.URL, "sandbox")

	// The management API serves the sandbox's vhost.
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(sb.RabbitMQ.ManagementURL, "/")+"/api/queues/"+sb.ID+"/orders", nil)
	req.SetBasicAuth("guest", "guest")
	var q struct {
		Vhost    string `json:"vhost"`
		Messages int    `json:"messages"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&q)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("management GET the sandbox's queue: %d %v", resp.StatusCode, err)
		}
		if q.Messages == 1 {
			break // the publish was not confirmed: it may come a moment later
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox's queue shows %d messages, want 1", q.Messages)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if q.Vhost != sb.ID {
		t.Fatalf("the sandbox's queue %+v", q)
	}

	if st := MustAPI(t, m).post("/api/sandboxes/"+sb.ID+"/api/clock/advance", `{"by":"61s"}`, nil); st != http.StatusOK {
		t.Fatalf("advance: %d", st)
	}
	if _, ok, err := box.Get("orders", true); err != nil || ok {
		t.Fatalf("the sandbox's message outlived its TTL on the sandbox's clock: %v %v", ok, err)
	}
	if msg, ok, err := def.Get("orders", true); err != nil || !ok || string(msg.Body) != "default" {
		t.Fatalf("the default world's message: %v %v", ok, err)
	}

	// Deleted, the sandbox closes its connections and its vhost is gone.
	if st := MustAPI(t, m).do("DELETE", "/api/sandboxes/"+sb.ID, "", nil); st != http.StatusNoContent {
		t.Fatalf("DELETE: %d", st)
	}
	if _, err := amqp.Dial(sb.RabbitMQ.URL); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("a deleted sandbox's vhost: %v", err)
	}
}

// issue 29.1. A durable sandbox comes back after a restart of lapse with
// its id, its keys, its clock where it stood and its entities; one in
// memory does not. Deleted, its folder is gone.
func TestSandbox_DurableComesBackAfterRestart(t *testing.T) {
	dir := t.TempDir()
	m := MustStart(t, "--data", dir, "--clock", "frozen")
	durable := mustSandbox(t, m, `{"durable":true,"time":"2031-01-01T00:00:00Z"}`)
	if !durable.Durable {
		t.Fatalf("durable: %+v", durable)
	}
	inMemory := mustSandbox(t, m, `{}`)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	mustCosmosTTLItem(t, cosmosClientKey(t, m, durable.Cosmos.Key, tr), 3600, "kept")
	if st := MustAPI(t, m).post("/api/sandboxes/"+durable.ID+"/api/clock/advance", `{"by":"30m"}`, nil); st != http.StatusOK {
		t.Fatalf("advance: %d", st)
	}
	tr.CloseIdleConnections()
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	m = MustStart(t, "--data", dir, "--clock", "frozen")
	var back dashboard.Sandbox
	if st := MustAPI(t, m).get("/api/sandboxes/"+durable.ID, &back); st != http.StatusOK {
		t.Fatalf("the durable sandbox after a restart: %d", st)
	}
	if back.Cosmos.Key != durable.Cosmos.Key || back.ServiceBus.Key != durable.ServiceBus.Key || back.Clock.Now != "2031-01-01T00:30:00Z" || back.Clock.Mode != core.ClockFrozen {
		t.Fatalf("after a restart: %+v, before %+v", back, durable)
	}
	if st := MustAPI(t, m).get("/api/sandboxes/"+inMemory.ID, nil); st != http.StatusNotFound {
		t.Fatalf("a sandbox in memory after a restart: %d", st)
	}
	c, _ := cosmosClientKey(t, m, durable.Cosmos.Key, tr).NewContainer("db", "c")
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := c.ReadItem(context.Background(), pk, "kept", nil); err != nil {
		t.Fatalf("the durable sandbox's item after a restart: %v", err)
	}
	// Its TTL of an hour runs on its own clock, kept across the restart.
	MustAPI(t, m).post("/api/sandboxes/"+durable.ID+"/api/clock/advance", `{"by":"31m"}`, nil)
	if _, err := c.ReadItem(context.Background(), pk, "kept", nil); cosmosStatus(err) != http.StatusNotFound {
		t.Fatalf("the item outlived its TTL: %v", err)
	}
	if st := MustAPI(t, m).do("DELETE", "/api/sandboxes/"+durable.ID, "", nil); st != http.StatusNoContent {
		t.Fatalf("DELETE: %d", st)
	}
	if _, err := os.Stat(filepath.Join(dir, "sandboxes", durable.ID)); !os.IsNotExist(err) {
		t.Fatalf("a deleted durable sandbox's folder: %v", err)
	}
	if st := MustAPI(t, m).post("/api/sandboxes", `{"durable":true}`, nil); st != http.StatusCreated {
		t.Fatalf("a second durable sandbox: %d", st)
	}
}

// issue 29.1 (RabbitMQ). The definitions a sandbox is made with are those
// the default world takes: their vhost "/" stands for the sandbox's own.
func TestSandbox_RabbitMQDefinitionsDeclareInItsVhost(t *testing.T) {
	m := MustStart(t, "--clock", "frozen")
	defs, err := os.ReadFile("../examples/config/definitions.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"rabbitmqDefinitions": json.RawMessage(defs)})
	sb := mustSandbox(t, m, string(body))
	conn, err := amqp.Dial(sb.RabbitMQ.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclarePassive("orders", true, false, false, false, nil); err != nil {
		t.Fatalf("the definitions' queue in the sandbox: %v", err)
	}
	var entities []map[string]any
	MustAPI(t, m).get("/api/entities?protocol=rabbitmq", &entities)
	for _, e := range entities {
		if name, _ := e["name"].(string); strings.Contains(name, "orders") {
			t.Fatalf("the default world has the sandbox's %s", name)
		}
	}
}

// A user the sandbox's definitions declare logs in through the shared AMQP
// port and opens the sandbox's vhost; the default world, which has no such
// user, still refuses it its own vhost.
func TestSandbox_RabbitMQDefinitionsUserLogsIn(t *testing.T) {
	m := MustStart(t, "--clock", "frozen")
	defs := `{"users":[{"name":"alice","password":"secret","tags":""}],
		"permissions":[{"user":"alice","vhost":"/","configure":".*","write":".*","read":".*"}],
		"queues":[{"name":"jobs","vhost":"/","durable":true,"auto_delete":false,"arguments":{}}]}`
	body, _ := json.Marshal(map[string]any{"rabbitmqDefinitions": json.RawMessage(defs)})
	sb := mustSandbox(t, m, string(body))
	u, err := url.Parse(sb.RabbitMQ.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("alice", "secret")
	conn, err := amqp.Dial(u.String())
	if err != nil {
		t.Fatalf("alice on the sandbox's vhost: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclarePassive("jobs", true, false, false, false, nil); err != nil {
		t.Fatalf("the definitions' queue, as alice: %v", err)
	}
	u.Path = "/"
	if c, err := amqp.Dial(u.String()); err == nil {
		c.Close()
		t.Fatal("alice opened the default world's vhost")
	}
}
