package server

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

// scrapeMetrics gets GET /metrics from m's control port and returns its
// samples whose names start with "lapse_", by "name{labels}".
func scrapeMetrics(tb testing.TB, m *Main) map[string]float64 {
	tb.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(controlURL(m) + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "lapse_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			tb.Fatalf("GET /metrics: %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// rule: EM-4. Real clients of the three protocols connect, send, receive;
// the clock jumps 30 s past the messages' due time; GET /metrics on the
// control port shows the connections, the counters and the lag.
func TestMetricsThroughRealClients_EM4(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cosmos.json")
	if err := os.WriteFile(cfg, []byte(cosmosConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	m := MustStart(t, "--clock", "frozen", "--cosmos-config", cfg)
	ctx := sbContext(t)

	// RabbitMQ: two confirmed publishes to a queue with a TTL of a
	// minute, one basic.get.
	rc, err := amqp.Dial("amqp://guest:guest@" + dialable(m.amqp.Addr().String()) + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ch, err := rc.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("orders", true, false, false, false, amqp.Table{"x-message-ttl": int32(60000)}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"one", "two"} {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "orders", false, false, amqp.Publishing{Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish %s: confirmed %v, %v", body, ok, err)
		}
	}
	if _, ok, err := ch.Get("orders", true); !ok || err != nil {
		t.Fatalf("basic.get: %v %v", ok, err)
	}

	// Service Bus: one message to a queue whose messages live a minute.
	minute := "PT1M"
	if _, err := MustSBAdmin(t, m).CreateQueue(ctx, "jobs", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
		DefaultMessageTimeToLive: &minute}}); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	MustSBSend(t, MustSBClient(t, m), "jobs", &azservicebus.Message{Body: []byte("job")})

	// Cosmos DB: one item in a container of the configuration file.
	carts, _ := MustCosmosClient(t, m).NewContainer("shop", "carts")
	if _, err := carts.CreateItem(ctx, azcosmos.NewPartitionKeyString("u1"), []byte(`{"id":"cart","userId":"u1"}`), nil); err != nil {
		t.Fatal(err)
	}

	if got := MustAPI(t, m).post("/api/clock/advance", `{"by":"90s"}`, nil); got != http.StatusOK {
		t.Fatalf("advance: %d", got)
	}
	got := scrapeMetrics(t, m)
	want := map[string]float64{
		`lapse_connections{protocol="rabbitmq"}`:                                             1,
		`lapse_connections{protocol="servicebus"}`:                                           1,
		`lapse_items_received_total{entity="/orders",kind="queue",protocol="rabbitmq"}`:      2,
		`lapse_items_delivered_total{entity="/orders",kind="queue",protocol="rabbitmq"}`:     1,
		`lapse_items_expired_total{entity="/orders",kind="queue",protocol="rabbitmq"}`:       1,
		`lapse_items{entity="/orders",kind="queue",protocol="rabbitmq",state="active"}`:      0,
		`lapse_items_received_total{entity="jobs",kind="queue",protocol="servicebus"}`:       1,
		`lapse_items_expired_total{entity="jobs",kind="queue",protocol="servicebus"}`:        1,
		`lapse_items_dead_lettered_total{entity="jobs",kind="queue",protocol="servicebus"}`:  0,
		`lapse_items_received_total{entity="shop/carts",kind="container",protocol="cosmos"}`: 1,
		`lapse_items{entity="shop/carts",kind="container",protocol="cosmos",state="active"}`: 1,
		`lapse_entities{kind="container",protocol="cosmos"}`:                                 3,
		`lapse_expiry_lag_seconds_count{action="expired",protocol="rabbitmq"}`:               1,
		`lapse_expiry_lag_seconds_sum{action="expired",protocol="rabbitmq"}`:                 30,
		`lapse_expiry_lag_seconds_bucket{action="expired",protocol="rabbitmq",le="5"}`:       0,
		`lapse_expiry_lag_seconds_bucket{action="expired",protocol="rabbitmq",le="60"}`:      1,
		`lapse_expiry_lag_seconds_count{action="expired",protocol="servicebus"}`:             1,
		`lapse_expiry_lag_seconds_sum{action="expired",protocol="servicebus"}`:               30,
	}
	picked := map[string]float64{}
	for k := range want {
		if v, ok := got[k]; ok {
			picked[k] = v
		}
	}
	if d := cmp.Diff(want, picked); d != "" {
		t.Errorf("GET /metrics (-want +got):\n%s", d)
	}
	// The Cosmos DB client keeps its connections alive; how many it opened
	// is its business.
	if n := got[`lapse_connections{protocol="cosmos"}`]; n < 1 {
		t.Errorf("lapse_connections{protocol=\"cosmos\"} = %v, want at least 1", n)
	}

	// A connection that closes is no longer counted, once lapse has seen
	// it go.
	rc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for scrapeMetrics(t, m)[`lapse_connections{protocol="rabbitmq"}`] != 0 {
		if time.Now().After(deadline) {
			t.Fatal("lapse_connections{protocol=\"rabbitmq\"} is still not 0 after the connection closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
