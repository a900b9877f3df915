//go:build reliability

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The kill -9 test's shape: three rounds, four goroutines per writer, a
// kill after a random 1-3 s of load, and at least kill9MinAcks
// acknowledgements of each writer by then (the load goes on, up to
// kill9MaxLoad, until each writer has them: a loaded CI machine is slow to
// start the writers, and a round with a handful of writes proves little).
const (
	kill9Rounds     = 3
	kill9Goroutines = 4
	kill9MinAcks    = 300
	kill9MaxLoad    = 20 * time.Second
	kill9Queue      = "kill9"
	kill9Database   = "kill9"
	kill9Container  = "items"
)

// kill9Writers names the three writers, as the ids they write start.
var kill9Writers = []string{"rabbitmq", "servicebus", "cosmos"}

// kill9ServiceBusConfig declares the Service Bus queue, with a TTL the test
// never reaches: the clock is not moved.
const kill9ServiceBusConfig = `{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns", "Queues": [
  {"Name": "` + kill9Queue + `", "Properties": {"DefaultMessageTimeToLive": "P14D", "LockDuration": "PT1M", "MaxDeliveryCount": 10,
    "DeadLetteringOnMessageExpiration": false, "RequiresDuplicateDetection": false, "RequiresSession": false}}
]}]}}`

// kill9CosmosConfig declares the Cosmos DB container, without a TTL.
const kill9CosmosConfig = `{"databases": [{"id": "` + kill9Database + `", "containers": [
  {"id": "` + kill9Container + `", "partitionKey": "/pk"}
]}]}`

// issue 16, the standing test; rule EM-3 (what a client was told is stored
// survives kill -9 and a restart). One data folder, three rounds: lapse
// starts on it, three writers write at once with the real clients
// (amqp091-go persistent publishes with publisher confirms, azservicebus
// sends, azcosmos creates), each recording only what lapse acknowledged,
// lapse is killed with SIGKILL under that load, starts again on the folder,
// and every acknowledged write of every round so far must be there.
func TestKillNineUnderThreeWritersKeepsAcknowledgedWrites_EM3(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	flags := kill9ConfigFlags(t)
	acked := map[string][]string{} // writer -> every id acknowledged so far
	l := Start(t, dir, flags...)
	kill9DeclareRabbitMQQueue(t, l)
	for round := 1; round <= kill9Rounds; round++ {
		load := time.Second + rand.N(2*time.Second)
		got, loaded, killed := kill9Round(t, l, round, load)
		for _, w := range kill9Writers {
			acked[w] = append(acked[w], got[w]...)
		}

		started := time.Now()
		l = Start(t, dir, flags...)
		restart := time.Since(started)
		checked := time.Now()
		held, lost := kill9Check(t, l, acked)
		t.Logf("kill -9 round %d: acknowledged rabbitmq %d, servicebus %d, cosmos %d; killed after %v of load (kill took %v); restart to healthy %v; check (%v): lapse holds %d, %d, %d of which %d, %d, %d acknowledged so far, %d of them missing",
			round, len(got["rabbitmq"]), len(got["servicebus"]), len(got["cosmos"]),
			loaded.Round(time.Millisecond), killed.Round(time.Millisecond), restart.Round(time.Millisecond), time.Since(checked).Round(time.Millisecond),
			held["rabbitmq"], held["servicebus"], held["cosmos"], len(acked["rabbitmq"]), len(acked["servicebus"]), len(acked["cosmos"]), lost)
		if t.Failed() {
			return
		}
	}
	l.Stop()
}

// kill9ConfigFlags writes the Service Bus and Cosmos DB config files and
// returns the flags that declare them.
func kill9ConfigFlags(t *testing.T) []string {
	t.Helper()
	d := t.TempDir()
	sb, co := filepath.Join(d, "Config.json"), filepath.Join(d, "cosmos.json")
	if err := os.WriteFile(sb, []byte(kill9ServiceBusConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(co, []byte(kill9CosmosConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--servicebus-config", sb, "--cosmos-config", co}
}

// kill9DeclareRabbitMQQueue declares the durable RabbitMQ queue.
func kill9DeclareRabbitMQQueue(t *testing.T, l *Lapse) {
	t.Helper()
	conn, ch := l.RabbitMQChannel()
	defer conn.Close()
	if _, err := ch.QueueDeclare(kill9Queue, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
}

// kill9Acks collects the ids a writer's goroutines saw acknowledged.
type kill9Acks struct {
	mu  sync.Mutex
	ids []string
}

func (a *kill9Acks) add(id string) {
	a.mu.Lock()
	a.ids = append(a.ids, id)
	a.mu.Unlock()
}

func (a *kill9Acks) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.ids)
}

// kill9Round runs the three writers against l, kills l after load (or
// later, until each writer has kill9MinAcks acknowledgements) and returns
// the ids each writer saw acknowledged, how long the load ran and how long
// the kill took.
func kill9Round(t *testing.T, l *Lapse, round int, load time.Duration) (acked map[string][]string, loaded, killed time.Duration) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	acks := map[string]*kill9Acks{}
	for _, w := range kill9Writers {
		acks[w] = &kill9Acks{}
	}
	sb := kill9ServiceBusSenders(t, l)
	cosmos := kill9CosmosContainer(t, l)
	var wg sync.WaitGroup
	began := time.Now()
	for g := range kill9Goroutines {
		prefix := func(w string) string { return fmt.Sprintf("r%d-%s-g%d-", round, w, g) }
		wg.Go(func() { kill9PublishRabbitMQ(ctx, l, prefix("rabbitmq"), acks["rabbitmq"]) })
		wg.Go(func() { kill9SendServiceBus(ctx, sb[g], prefix("servicebus"), acks["servicebus"]) })
		wg.Go(func() { kill9CreateCosmos(ctx, cosmos, prefix("cosmos"), acks["cosmos"]) })
	}
	enough := func() bool {
		for _, a := range acks {
			if a.len() < kill9MinAcks {
				return false
			}
		}
		return true
	}
	time.Sleep(load) // load runs this long before the kill; no expiry is awaited
	for !enough() && time.Since(began) < kill9MaxLoad {
		time.Sleep(50 * time.Millisecond)
	}
	loaded = time.Since(began)
	l.Alive()
	before := time.Now()
	l.Kill()
	killed = time.Since(before)
	stop()
	wg.Wait()
	for _, c := range sb {
		_ = c.Close(context.Background())
	}
	acked = map[string][]string{}
	for _, w := range kill9Writers {
		acked[w] = acks[w].ids
		if n := len(acks[w].ids); n < kill9MinAcks {
			t.Errorf("round %d: %s writer had %d acknowledgements after %v of load, want at least %d", round, w, n, loaded.Round(time.Millisecond), kill9MinAcks)
		}
	}
	return acked, loaded, killed
}

// kill9PublishRabbitMQ publishes persistent messages on its own
// connection, with publisher confirms, a window of 32 at a time, and adds
// the id of each message confirmed by a basic.ack. It returns at the first
// error (the kill) or when ctx ends.
func kill9PublishRabbitMQ(ctx context.Context, l *Lapse, prefix string, acks *kill9Acks) {
	conn, err := amqp.Dial(l.RabbitMQURL())
	if err != nil {
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return
	}
	if err := ch.Confirm(false); err != nil {
		return
	}
	type pending struct {
		id string
		dc *amqp.DeferredConfirmation
	}
	window := make([]pending, 0, 32)
	for i := 0; ctx.Err() == nil; {
		window = window[:0]
		for range cap(window) {
			id := prefix + fmt.Sprint(i)
			i++
			dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", kill9Queue, false, false, amqp.Publishing{
				DeliveryMode: amqp.Persistent, MessageId: id, Body: []byte(id)})
			if err != nil {
				break
			}
			window = append(window, pending{id, dc})
		}
		if len(window) == 0 {
			return
		}
		for _, p := range window {
			ok, err := p.dc.WaitContext(ctx)
			if err != nil || !ok {
				return
			}
			acks.add(p.id)
		}
	}
}

// kill9ServiceBusSenders returns one azservicebus client per goroutine,
// each on its own connection, without retries: a send that returns nil
// was accepted once.
func kill9ServiceBusSenders(t *testing.T, l *Lapse) []*azservicebus.Client {
	t.Helper()
	cs := make([]*azservicebus.Client, kill9Goroutines)
	for g := range cs {
		c, err := azservicebus.NewClientFromConnectionString(l.ServiceBusConnectionString(),
			&azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
		if err != nil {
			t.Fatal(err)
		}
		cs[g] = c
	}
	return cs
}

// kill9SendServiceBus sends messages one after another and adds the id of
// each send that returned nil (lapse's accepted disposition). It returns
// at the first error (the kill) or when ctx ends.
func kill9SendServiceBus(ctx context.Context, c *azservicebus.Client, prefix string, acks *kill9Acks) {
	s, err := c.NewSender(kill9Queue, nil)
	if err != nil {
		return
	}
	defer s.Close(context.Background())
	for i := 0; ctx.Err() == nil; i++ {
		id := prefix + fmt.Sprint(i)
		if err := s.SendMessage(ctx, &azservicebus.Message{MessageID: &id, Body: []byte(id)}, nil); err != nil {
			return
		}
		acks.add(id)
	}
}

// kill9CosmosContainer returns an azcosmos client of the container over
// HTTPS with keep-alive connections, one per goroutine.
func kill9CosmosContainer(t *testing.T, l *Lapse) *azcosmos.ContainerClient {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: l.TLS(), MaxIdleConnsPerHost: kill9Goroutines}
	t.Cleanup(tr.CloseIdleConnections)
	client, err := l.CosmosClient(CosmosKey, tr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewContainer(kill9Database, kill9Container)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kill9CreateCosmos creates items one after another and adds the id of
// each create answered 201. It returns at the first error (the kill) or
// when ctx ends.
func kill9CreateCosmos(ctx context.Context, c *azcosmos.ContainerClient, prefix string, acks *kill9Acks) {
	for i := 0; ctx.Err() == nil; i++ {
		id := prefix + fmt.Sprint(i)
		pk := fmt.Sprintf("p%d", i%8)
		resp, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), []byte(`{"id":"`+id+`","pk":"`+pk+`"}`), nil)
		if err != nil || resp.RawResponse == nil || resp.RawResponse.StatusCode != http.StatusCreated {
			return
		}
		acks.add(id)
	}
}

// kill9Check reads back what lapse holds with the real clients and fails
// the test for each acknowledged id of acked it does not hold (naming the
// first few), and for a RabbitMQ or Service Bus id held twice: the
// writers never retry. It returns how many items lapse holds for each
// writer and how many acknowledged ones are missing.
func kill9Check(t *testing.T, l *Lapse, acked map[string][]string) (held map[string]int, lost int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ids := map[string]map[string]int{
		"rabbitmq":   kill9HeldRabbitMQ(ctx, t, l),
		"servicebus": kill9HeldServiceBus(ctx, t, l),
		"cosmos":     kill9HeldCosmos(ctx, t, l),
	}
	held = map[string]int{}
	for _, w := range kill9Writers {
		for _, n := range ids[w] {
			held[w] += n
		}
		var missing, twice []string
		for _, id := range acked[w] {
			switch ids[w][id] {
			case 0:
				missing = append(missing, id)
			case 1:
			default:
				twice = append(twice, id)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s: %d of %d acknowledged writes lost after kill -9: %v", w, len(missing), len(acked[w]), missing[:min(len(missing), 10)])
		}
		if len(twice) > 0 {
			t.Errorf("%s: %d of %d acknowledged writes held more than once: %v", w, len(twice), len(acked[w]), twice[:min(len(twice), 10)])
		}
		lost += len(missing)
	}
	return held, lost
}

// kill9HeldRabbitMQ consumes every message of the queue without
// acknowledging it, then closes the connection, which puts them all back,
// and returns how often each message id was delivered.
func kill9HeldRabbitMQ(ctx context.Context, t *testing.T, l *Lapse) map[string]int {
	t.Helper()
	conn, ch := l.RabbitMQChannel()
	defer conn.Close() // puts back what it holds
	q, err := ch.QueueDeclarePassive(kill9Queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("the durable queue after kill -9: %v", err)
	}
	deliveries, err := ch.ConsumeWithContext(ctx, kill9Queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]int{}
	for n := 0; n < q.Messages; n++ {
		select {
		case d := <-deliveries:
			held[d.MessageId]++
		case <-ctx.Done():
			t.Fatalf("rabbitmq: %d of the %d messages of the queue delivered in a minute", n, q.Messages)
		}
	}
	return held
}

// kill9HeldServiceBus peeks every message of the queue and returns how
// often each message id was seen.
func kill9HeldServiceBus(ctx context.Context, t *testing.T, l *Lapse) map[string]int {
	t.Helper()
	c, err := azservicebus.NewClientFromConnectionString(l.ServiceBusConnectionString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	r, err := c.NewReceiverForQueue(kill9Queue, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	held := map[string]int{}
	for {
		msgs, err := r.PeekMessages(ctx, 1000, nil)
		if err != nil {
			t.Fatalf("servicebus: PeekMessages after %d messages: %v", len(held), err)
		}
		if len(msgs) == 0 {
			return held
		}
		for _, m := range msgs {
			held[m.MessageID]++
		}
	}
}

// kill9HeldCosmos queries every item's id across partitions.
func kill9HeldCosmos(ctx context.Context, t *testing.T, l *Lapse) map[string]int {
	t.Helper()
	c := kill9CosmosContainer(t, l)
	held := map[string]int{}
	pager := c.NewQueryItemsPager("SELECT VALUE c.id FROM c", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 1000})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("cosmos: query after %d items: %v", len(held), err)
		}
		for _, it := range page.Items {
			var id string
			if err := json.Unmarshal(it, &id); err != nil {
				t.Fatal(err)
			}
			held[id]++
		}
	}
	return held
}
