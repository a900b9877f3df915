// Command queue is lapse's own program of the flow of Microsoft's Go
// quickstart for Service Bus queues, with azservicebus: on the queue its
// argument names, through $SERVICEBUS_CONNECTION_STRING, it sends a
// message and then a batch of two, receives and completes the three,
// dead-letters a fourth and reads it back from the dead-letter queue.
//
// servicebus/quickstart_test.go runs it; docs/examples.md names the
// quickstart.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: queue QUEUE")
	}
	queue := os.Args[1]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := azservicebus.NewClientFromConnectionString(os.Getenv("SERVICEBUS_CONNECTION_STRING"), nil)
	check(err)
	defer client.Close(ctx)
	sender, err := client.NewSender(queue, nil)
	check(err)
	defer sender.Close(ctx)
	receiver, err := client.NewReceiverForQueue(queue, nil)
	check(err)
	defer receiver.Close(ctx)

	check(sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("note 1")}, nil))
	fmt.Println("sent: note 1")

	batch, err := sender.NewMessageBatch(ctx, nil)
	check(err)
	notes := []string{"note 2", "note 3"}
	for _, n := range notes {
		check(batch.AddMessage(&azservicebus.Message{Body: []byte(n)}, nil))
	}
	check(sender.SendMessageBatch(ctx, batch, nil))
	fmt.Printf("sent as a batch: %s\n", strings.Join(notes, ", "))

	// A receive may hand back fewer messages than asked for.
	for got := 0; got < 3; {
		msgs, err := receiver.ReceiveMessages(ctx, 3-got, nil)
		check(err)
		for _, m := range msgs {
			check(receiver.CompleteMessage(ctx, m, nil))
			fmt.Printf("received: %s\n", m.Body)
			got++
		}
	}

	check(sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("note 4")}, nil))
	fmt.Println("sent: note 4")
	msgs, err := receiver.ReceiveMessages(ctx, 1, nil)
	check(err)
	reason, why := "unreadable", "the ink ran"
	check(receiver.DeadLetterMessage(ctx, msgs[0], &azservicebus.DeadLetterOptions{Reason: &reason, ErrorDescription: &why}))
	fmt.Printf("dead-lettered: %s\n", msgs[0].Body)

	dlq, err := client.NewReceiverForQueue(queue, &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	check(err)
	defer dlq.Close(ctx)
	msgs, err = dlq.ReceiveMessages(ctx, 1, nil)
	check(err)
	m := msgs[0]
	check(dlq.CompleteMessage(ctx, m, nil))
	fmt.Printf("from the dead-letter queue: %s (%s: %s)\n", m.Body, *m.DeadLetterReason, *m.DeadLetterErrorDescription)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
