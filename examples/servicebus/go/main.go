// Command servicebus is the Service Bus example of lapse's README, with the
// official Go SDK: it sends a message to the queue "orders" (declared by
// examples/config/Config.json: a 1-hour TTL, dead-lettered on expiry),
// moves lapse's clock 61 minutes and receives the message from the
// queue's dead-letter queue.
//
//	go run ./examples/servicebus/go
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func main() {
	conn := env("SERVICEBUS_CONNECTION_STRING", "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;")
	control := env("LAPSE_CONTROL_URL", "http://localhost:8080")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client, err := azservicebus.NewClientFromConnectionString(conn, nil)
	check(err)
	defer client.Close(ctx)
	sender, err := client.NewSender("orders", nil)
	check(err)
	check(sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("order 1")}, nil))
	fmt.Println("sent: order 1")

	// The control API moves lapse's clock; it answers once every expiry
	// due by then is applied.
	resp, err := http.Post(control+"/api/clock/advance", "application/json", strings.NewReader(`{"by":"61m"}`))
	check(err)
	resp.Body.Close()
	fmt.Println("clock advanced 61m")

	dlq, err := client.NewReceiverForQueue("orders", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	check(err)
	msgs, err := dlq.ReceiveMessages(ctx, 1, nil)
	check(err)
	fmt.Printf("dead-lettered: %s (%s)\n", msgs[0].Body, *msgs[0].DeadLetterReason)
	check(dlq.CompleteMessage(ctx, msgs[0], nil))
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
