//go:build reliability

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	amqp "github.com/rabbitmq/amqp091-go"
)

// connsProbes is one client of each protocol that does normal work and
// times it: publish+get, send+receive, create+read.
type connsProbes struct {
	rabbit   *amqp.Connection
	channel  *amqp.Channel
	sb       *azservicebus.Client
	sender   *azservicebus.Sender
	receiver *azservicebus.Receiver
	cosmosTr *http.Transport
	docs     *azcosmos.ContainerClient
	ops      int // operations so far, for unique bodies and ids
}

// connsLatency is what a probe measured over connsOps operations.
type connsLatency struct {
	name     string
	p50, p99 time.Duration
}

func (c connsLatency) String() string {
	return fmt.Sprintf("%s p50 %v, p99 %v over %d", c.name, c.p50.Round(10*time.Microsecond), c.p99.Round(10*time.Microsecond), connsOps)
}

// connsNewProbes opens the probes, declares the RabbitMQ queues conns and
// conns.probe and creates the Cosmos database and container conns.
func connsNewProbes(t *testing.T, l *Lapse) *connsProbes {
	t.Helper()
	p := &connsProbes{}
	t.Cleanup(p.close)
	var err error
	if p.rabbit, err = amqp.Dial(l.RabbitMQURL()); err != nil {
		t.Fatal(err)
	}
	if p.channel, err = p.rabbit.Channel(); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"conns", "conns.probe"} {
		if _, err := p.channel.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatalf("declare %s: %v", q, err)
		}
	}

	if p.sb, err = azservicebus.NewClientFromConnectionString(l.ServiceBusConnectionString(), nil); err != nil {
		t.Fatal(err)
	}
	if p.sender, err = p.sb.NewSender("conns.probe", nil); err != nil {
		t.Fatal(err)
	}
	if p.receiver, err = p.sb.NewReceiverForQueue("conns.probe", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete}); err != nil {
		t.Fatal(err)
	}

	p.cosmosTr = connsCosmosTransport(l.TLS(), &atomic.Int64{})
	c, err := l.CosmosClient(CosmosKey, p.cosmosTr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "conns"}, nil); err != nil {
		t.Fatal(err)
	}
	db, err := c.NewDatabase("conns")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "conns",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if p.docs, err = db.NewContainer("conns"); err != nil {
		t.Fatal(err)
	}
	return p
}

// measure times connsOps operations of each probe, one after another.
func (p *connsProbes) measure(t *testing.T) []connsLatency {
	t.Helper()
	return []connsLatency{
		p.time(t, "AMQP 0-9-1 publish+get:", p.publishGet),
		p.time(t, "Service Bus send+receive:", p.sendReceive),
		p.time(t, "Cosmos create+read:", p.createRead),
	}
}

func (p *connsProbes) time(t *testing.T, name string, op func(context.Context, int) error) connsLatency {
	t.Helper()
	ds := make([]time.Duration, connsOps)
	for i := range ds {
		p.ops++
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		err := op(ctx, p.ops)
		ds[i] = time.Since(start)
		cancel()
		if err != nil {
			t.Fatalf("%s operation %d: %v", name, i, err)
		}
	}
	slices.Sort(ds)
	return connsLatency{name: name, p50: ds[len(ds)/2], p99: ds[len(ds)*99/100]}
}

// publishGet publishes a message to conns.probe and gets it back.
func (p *connsProbes) publishGet(ctx context.Context, n int) error {
	body := fmt.Sprint("probe ", n)
	if err := p.channel.PublishWithContext(ctx, "", "conns.probe", false, false, amqp.Publishing{Body: []byte(body)}); err != nil {
		return err
	}
	for ctx.Err() == nil {
		d, ok, err := p.channel.Get("conns.probe", true)
		if err != nil {
			return err
		}
		if ok {
			if string(d.Body) != body {
				return fmt.Errorf("got %q, want %q", d.Body, body)
			}
			return nil
		}
	}
	return ctx.Err()
}

// sendReceive sends a message to conns.probe and receives it back.
func (p *connsProbes) sendReceive(ctx context.Context, n int) error {
	body := fmt.Sprint("probe ", n)
	if err := p.sender.SendMessage(ctx, &azservicebus.Message{Body: []byte(body)}, nil); err != nil {
		return err
	}
	for {
		msgs, err := p.receiver.ReceiveMessages(ctx, 1, nil)
		if err != nil {
			return err
		}
		if len(msgs) == 1 {
			if string(msgs[0].Body) != body {
				return fmt.Errorf("received %q, want %q", msgs[0].Body, body)
			}
			return nil
		}
	}
}

// createRead creates a document in conns and reads it back.
func (p *connsProbes) createRead(ctx context.Context, n int) error {
	id := fmt.Sprint("probe-", n)
	pk := azcosmos.NewPartitionKeyString("probe")
	if _, err := p.docs.CreateItem(ctx, pk, []byte(`{"id":"`+id+`","pk":"probe"}`), nil); err != nil {
		return err
	}
	_, err := p.docs.ReadItem(ctx, pk, id, nil)
	return err
}

// close closes every probe; it may be called twice.
func (p *connsProbes) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if p.sb != nil {
		p.sb.Close(ctx)
		p.sb = nil
	}
	if p.rabbit != nil {
		p.rabbit.Close()
		p.rabbit = nil
	}
	if p.cosmosTr != nil {
		p.cosmosTr.CloseIdleConnections()
		p.cosmosTr = nil
	}
}
