// Command tutorials is lapse's own program of the flows of RabbitMQ's
// tutorials 1 ("Hello World!") and 2 ("Work Queues"), with amqp091-go. It
// dials $RABBITMQ_URL and does one of:
//
//	send          publish "hello, lapse" to the quorum queue greetings
//	receive       print what arrives on greetings (auto-ack) until SIGINT
//	add WORD...   publish the words, persistent, to the quorum queue jobs
//	work          take jobs one at a time (prefetch 1), acking each, until SIGINT
//
// rabbitmq/tutorials_test.go runs it; docs/examples.md names the tutorials.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// quorum are the arguments of both queues: the tutorials declare quorum
// queues, durable.
var quorum = amqp.Table{"x-queue-type": "quorum"}

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: tutorials send|receive|add WORD...|work")
	}
	conn, err := amqp.Dial(os.Getenv("RABBITMQ_URL"))
	check(err)
	defer conn.Close()
	ch, err := conn.Channel()
	check(err)

	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "send":
		publish(ch, "greetings", "hello, lapse", amqp.Transient)
		fmt.Println("sent: hello, lapse")
	case "receive":
		consume(ch, "greetings", true, func(d amqp.Delivery) {
			fmt.Printf("got: %s\n", d.Body)
		})
	case "add":
		job := strings.Join(args, " ")
		publish(ch, "jobs", job, amqp.Persistent)
		fmt.Printf("added: %s\n", job)
	case "work":
		check(ch.Qos(1, 0, false))
		consume(ch, "jobs", false, func(d amqp.Delivery) {
			fmt.Printf("took: %s\n", d.Body)
			check(d.Ack(false))
			fmt.Printf("acked: %s\n", d.Body)
		})
	default:
		log.Fatalf("unknown command %q", cmd)
	}
}

// publish declares queue and sends body to it through the default exchange.
func publish(ch *amqp.Channel, queue, body string, mode uint8) {
	_, err := ch.QueueDeclare(queue, true, false, false, false, quorum)
	check(err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check(ch.PublishWithContext(ctx, "", queue, false, false,
		amqp.Publishing{ContentType: "text/plain", DeliveryMode: mode, Body: []byte(body)}))
}

// consume declares queue and hands each delivery to handle until SIGINT.
func consume(ch *amqp.Channel, queue string, autoAck bool, handle func(amqp.Delivery)) {
	_, err := ch.QueueDeclare(queue, true, false, false, false, quorum)
	check(err)
	deliveries, err := ch.Consume(queue, "", autoAck, false, false, false, nil)
	check(err)
	stop, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	fmt.Printf("waiting on %s\n", queue)
	for {
		select {
		case d, ok := <-deliveries:
			if !ok {
				log.Fatal("the broker closed the channel")
			}
			handle(d)
		case <-stop.Done():
			return
		}
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
