package lapsetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/internal/leakcheck"
	"github.com/lapse-emulator/lapse/lapsetest"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// The example files of the repository, which the README loads too: one
// expiring entity per protocol, each with a default TTL of an hour.
const (
	sbConfig    = "../examples/config/Config.json"
	definitions = "../examples/config/definitions.json"
	cosmosCfg   = "../examples/config/cosmos.json"
)

// ctx returns a context that ends with the test or after 30 s.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// eventRules returns "action rule" of each event of entity.
func eventRules(srv *lapsetest.Server, entity string) []string {
	var out []string
	for _, ev := range srv.Events() {
		if ev.Entity == entity {
			out = append(out, ev.Action+" "+ev.Rule)
		}
	}
	return out
}

// issue 15.10: the helper hands out a Service Bus connection string that
// azservicebus takes as it is; rule SB-1 (a message's own TTL counts from
// its enqueue) and SB-8 (the queue dead-letters what expires), with the
// clock moved by Advance.
func TestServiceBusMessageExpiresIntoDeadLetterQueue_SB1_SB8(t *testing.T) {
	srv := lapsetest.New(t, lapsetest.WithServiceBusConfig(sbConfig))
	client, err := azservicebus.NewClientFromConnectionString(srv.ServiceBusConnectionString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(context.Background())
	sender, err := client.NewSender("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close(context.Background())
	ttl := 10 * time.Minute
	if err := sender.SendMessage(ctx(t), &azservicebus.Message{Body: []byte("order 1"), TimeToLive: &ttl}, nil); err != nil {
		t.Fatal(err)
	}

	srv.Advance(10*time.Minute + time.Second)

	receiver, err := client.NewReceiverForQueue("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close(context.Background())
	if msgs, err := receiver.PeekMessages(ctx(t), 10, nil); err != nil || len(msgs) != 0 {
		t.Errorf("orders after the TTL: %d messages, %v; want none", len(msgs), err)
	}
	dlq, err := client.NewReceiverForQueue("orders", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close(context.Background())
	msgs, err := dlq.ReceiveMessages(ctx(t), 1, nil)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "order 1" {
		t.Fatalf("dead-letter queue: %v, %v; want order 1", msgs, err)
	}
	if r := msgs[0].DeadLetterReason; r == nil || *r != "TTLExpiredException" {
		t.Errorf("DeadLetterReason %v, want TTLExpiredException", r)
	}
	if err := dlq.CompleteMessage(ctx(t), msgs[0], nil); err != nil {
		t.Error(err)
	}
	if got := eventRules(srv, "orders"); len(got) != 1 || got[0] != "dead-lettered SB-8" {
		t.Errorf("events of orders: %q, want one dead-lettered SB-8", got)
	}
}

// issue 15.10: the helper hands out an AMQP 0-9-1 URL that amqp091-go
// dials as it is; rule RB-5 (a message's expiration) and RB-9 (the queue's
// dead-letter exchange takes what expires), with the clock moved by Advance.
func TestRabbitMQMessageExpiresIntoDeadLetterQueue_RB5_RB9(t *testing.T) {
	srv := lapsetest.New(t, lapsetest.WithRabbitMQDefinitions(definitions))
	conn, err := amqp.Dial(srv.RabbitMQURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	conf, err := ch.PublishWithDeferredConfirmWithContext(ctx(t), "", "orders", false, false,
		amqp.Publishing{Body: []byte("order 1"), Expiration: "60000", DeliveryMode: amqp.Persistent})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := conf.WaitContext(ctx(t)); !ok || err != nil {
		t.Fatalf("publish not confirmed: %v %v", ok, err)
	}

	srv.Advance(time.Minute + time.Second)

	if _, ok, err := ch.Get("orders", true); ok || err != nil {
		t.Errorf("orders after the expiration: got a message (%v, %v), want none", ok, err)
	}
	msg, ok, err := ch.Get("orders.expired", true)
	if !ok || err != nil || string(msg.Body) != "order 1" {
		t.Fatalf("orders.expired: %q %v %v; want order 1", msg.Body, ok, err)
	}
	deaths, _ := msg.Headers["x-death"].([]any)
	if len(deaths) != 1 {
		t.Fatalf("x-death %v, want one death", msg.Headers["x-death"])
	}
	if d, _ := deaths[0].(amqp.Table); d["reason"] != "expired" || d["queue"] != "orders" {
		t.Errorf("x-death %v, want reason expired in queue orders", d)
	}
	if got := eventRules(srv, "/orders"); len(got) != 1 || !strings.HasPrefix(got[0], "dead-lettered ") {
		t.Errorf("events of /orders: %q, want one dead-lettered", got)
	}
}

// issue 15.10: the helper hands out a Cosmos endpoint and key that
// azcosmos takes as they are, without a certificate to trust; rule CO-4
// (the container's defaultTtl counts from the item's last write) and CO-6
// (an expired item reads as 404), with the clock moved by Advance.
func TestCosmosItemExpiresWithContainerDefaultTTL_CO4_CO6(t *testing.T) {
	srv := lapsetest.New(t, lapsetest.WithCosmosConfig(cosmosCfg))
	cred, err := azcosmos.NewKeyCredential(srv.CosmosKey())
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client, err := azcosmos.NewClientWithKey(srv.CosmosEndpoint(), cred,
		&azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	carts, err := client.NewContainer("shop", "carts")
	if err != nil {
		t.Fatal(err)
	}
	pk := azcosmos.NewPartitionKeyString("u1")
	item, _ := json.Marshal(map[string]string{"id": "cart1", "userId": "u1"})
	if _, err := carts.CreateItem(ctx(t), pk, item, nil); err != nil {
		t.Fatal(err)
	}

	srv.Advance(59 * time.Minute)
	if _, err := carts.ReadItem(ctx(t), pk, "cart1", nil); err != nil {
		t.Fatalf("read before the hour is up: %v", err)
	}
	srv.Advance(time.Minute + time.Second)
	_, err = carts.ReadItem(ctx(t), pk, "cart1", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Fatalf("read after the hour: %v, want 404", err)
	}
	if got := eventRules(srv, "shop/carts"); len(got) != 1 || got[0] != "expired CO-6" {
		t.Errorf("events of shop/carts: %q, want one expired CO-6", got)
	}
}

// issue 15.10: each Server has a clock of its own, frozen at start, which
// only its Advance and Set move.
func TestEachServerHasItsOwnFrozenClock(t *testing.T) {
	a, b := lapsetest.New(t), lapsetest.New(t)
	a0, b0 := a.Now(), b.Now()
	a.Advance(14 * 24 * time.Hour)
	if got := a.Now().Sub(a0); got != 14*24*time.Hour {
		t.Errorf("a moved %v, want 336h", got)
	}
	if !b.Now().Equal(b0) {
		t.Errorf("b's clock moved from %v to %v with a's", b0, b.Now())
	}
	at := b0.Add(time.Hour).Truncate(time.Second)
	b.Set(at)
	if !b.Now().Equal(at) {
		t.Errorf("b.Now() = %v after Set(%v)", b.Now(), at)
	}
	// The control API tells the same time.
	resp, err := http.Get(b.ControlURL() + "/api/clock")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Now, Mode string }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Mode != "frozen" || st.Now != at.UTC().Format(time.RFC3339Nano) {
		t.Errorf("GET /api/clock = %+v, want %v frozen", st, at.UTC())
	}
}

// issue 15.10: Start reports a configuration that does not load, where New
// would fail the test; Close stops what Start started.
func TestStartReportsABadConfigurationAndCloseStops(t *testing.T) {
	if srv, err := lapsetest.Start(lapsetest.WithServiceBusConfig("testdata/missing.json")); err == nil {
		srv.Close()
		t.Fatal("Start with a missing Config.json did not fail")
	} else if !strings.Contains(err.Error(), "--servicebus-config") {
		t.Errorf("error %q does not name the file's flag", err)
	}
	srv, err := lapsetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	url := srv.ControlURL()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("GET /healthz answered %s after Close", resp.Status)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// issue 15.10: Advance returns once everything due is applied, as the
// control API's advance does (rule EM-1): the event log holds each expiry
// as soon as Advance returns, not when the expiry runner gets to it.
func TestAdvanceReturnsAfterExpiriesApplied_EM1(t *testing.T) {
	srv := lapsetest.New(t, lapsetest.WithServiceBusConfig(sbConfig))
	client, err := azservicebus.NewClientFromConnectionString(srv.ServiceBusConnectionString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(context.Background())
	sender, err := client.NewSender("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close(context.Background())
	for i := range 20 {
		ttl := time.Minute
		if err := sender.SendMessage(ctx(t), &azservicebus.Message{Body: []byte("order"), TimeToLive: &ttl}, nil); err != nil {
			t.Fatal(err)
		}
		srv.Advance(time.Minute)
		if got := len(srv.Events()); got != i+1 {
			t.Fatalf("after advance %d: %d events, want %d", i+1, got, i+1)
		}
	}
}

// issue 28.3: a container's unique key holds after a restart on a durable
// data folder: SQLite keeps the documents, not their unique values, which
// the Cosmos front-end derives again when it starts.
func TestCosmosUniqueKeyHoldsAfterRestart(t *testing.T) {
	dir := t.TempDir()
	create := func(srv *lapsetest.Server, id string) error {
		cred, err := azcosmos.NewKeyCredential(srv.CosmosKey())
		if err != nil {
			t.Fatal(err)
		}
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		client, err := azcosmos.NewClientWithKey(srv.CosmosEndpoint(), cred,
			&azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
		if err != nil {
			t.Fatal(err)
		}
		if id == "first" {
			if _, err := client.CreateDatabase(ctx(t), azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
				t.Fatal(err)
			}
			db, _ := client.NewDatabase("shop")
			if _, err := db.CreateContainer(ctx(t), azcosmos.ContainerProperties{ID: "users",
				PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
				UniqueKeyPolicy:        &azcosmos.UniqueKeyPolicy{UniqueKeys: []azcosmos.UniqueKey{{Paths: []string{"/email"}}}},
			}, nil); err != nil {
				t.Fatal(err)
			}
		}
		users, err := client.NewContainer("shop", "users")
		if err != nil {
			t.Fatal(err)
		}
		item, _ := json.Marshal(map[string]string{"id": id, "pk": "p1", "email": "a@x"})
		_, err = users.CreateItem(ctx(t), azcosmos.NewPartitionKeyString("p1"), item, nil)
		return err
	}
	srv := lapsetest.New(t, lapsetest.WithFlags("--data", dir))
	if err := create(srv, "first"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv = lapsetest.New(t, lapsetest.WithFlags("--data", dir))
	err := create(srv, "second")
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusConflict {
		t.Fatalf("a second item with the email after the restart: %v, want 409", err)
	}
}
