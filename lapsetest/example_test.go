package lapsetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/lapsetest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A Service Bus message sent with a TTL of ten minutes to a queue that
// dead-letters expired messages (the official emulator's Config.json) is
// in the dead-letter queue once lapse's clock has moved past it. In a test,
// lapsetest.New(t, ...) does what Start and Close do here.
func Example_serviceBus() {
	srv, err := lapsetest.Start(lapsetest.WithServiceBusConfig("../examples/config/Config.json"))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()

	client, err := azservicebus.NewClientFromConnectionString(srv.ServiceBusConnectionString(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close(ctx)
	sender, err := client.NewSender("orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sender.Close(ctx)
	ttl := 10 * time.Minute
	if err := sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("order 1"), TimeToLive: &ttl}, nil); err != nil {
		log.Fatal(err)
	}

	srv.Advance(11 * time.Minute)

	dlq, err := client.NewReceiverForQueue("orders", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if err != nil {
		log.Fatal(err)
	}
	defer dlq.Close(ctx)
	msgs, err := dlq.ReceiveMessages(ctx, 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(msgs[0].Body), *msgs[0].DeadLetterReason)
	for _, ev := range srv.Events() {
		fmt.Println(ev.Entity, ev.Action, ev.Rule)
	}
	// Output:
	// order 1 TTLExpiredException
	// orders dead-lettered SB-8
}

// A RabbitMQ message published with an expiration of a minute to a queue
// with a dead-letter exchange (a definitions.json) is in the dead-letter
// queue once lapse's clock has moved past it.
func Example_rabbitMQ() {
	srv, err := lapsetest.Start(lapsetest.WithRabbitMQDefinitions("../examples/config/definitions.json"))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()

	conn, err := amqp.Dial(srv.RabbitMQURL())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		log.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		log.Fatal(err)
	}
	conf, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "orders", false, false,
		amqp.Publishing{Body: []byte("order 1"), Expiration: "60000"})
	if err != nil {
		log.Fatal(err)
	}
	if ok, err := conf.WaitContext(ctx); !ok || err != nil {
		log.Fatal("not confirmed: ", err)
	}

	srv.Advance(2 * time.Minute)

	msg, ok, err := ch.Get("orders.expired", true)
	if err != nil || !ok {
		log.Fatal("nothing dead-lettered: ", err)
	}
	death := msg.Headers["x-death"].([]any)[0].(amqp.Table)
	fmt.Println(string(msg.Body), death["reason"], death["queue"])
	// Output:
	// order 1 expired orders
}

// A Cosmos DB item in a container with a defaultTtl of an hour (a Cosmos
// config file) reads as 404 Not Found once lapse's clock has moved an
// hour past its last write.
func Example_cosmos() {
	srv, err := lapsetest.Start(lapsetest.WithCosmosConfig("../examples/config/cosmos.json"))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()

	cred, err := azcosmos.NewKeyCredential(srv.CosmosKey())
	if err != nil {
		log.Fatal(err)
	}
	client, err := azcosmos.NewClientWithKey(srv.CosmosEndpoint(), cred, nil)
	if err != nil {
		log.Fatal(err)
	}
	carts, err := client.NewContainer("shop", "carts")
	if err != nil {
		log.Fatal(err)
	}
	pk := azcosmos.NewPartitionKeyString("u1")
	item, _ := json.Marshal(map[string]string{"id": "cart1", "userId": "u1"})
	if _, err := carts.CreateItem(ctx, pk, item, nil); err != nil {
		log.Fatal(err)
	}

	srv.Advance(time.Hour + time.Second)

	_, err = carts.ReadItem(ctx, pk, "cart1", nil)
	var re *azcore.ResponseError
	fmt.Println(errors.As(err, &re) && re.StatusCode == http.StatusNotFound)
	// Output:
	// true
}
