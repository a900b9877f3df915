// RabbitMQ tutorial 1, "Hello World!" (Go, amqp091-go): receive.go as the tutorial gives it
// (rabbitmq-tutorials go/receive.go at commit 8aec600, Apache License 2.0; see README.md).
// Only this comment is added; the test replaces the broker's address.

package main

import (
	"log"
	"os"
	"os/signal"
	"syscall"

	amqp "github.com/rabbitmq/amqp091-go"
)

func failOnError(err error, msg string) {
	if err != nil {
		log.Panicf("%s: %s", msg, err)
	}
}

func main() {
	conn, err := amqp.Dial("amqp://guest:guest@localhost:5672/")
	failOnError(err, "Failed to connect to RabbitMQ")
	defer conn.Close()

	ch, err := conn.Channel()
	failOnError(err, "Failed to open a channel")
	defer ch.Close()

	q, err := ch.QueueDeclare(
		"hello", // name
		true,    // durability
		false,   // delete when unused
		false,   // exclusive
		false,   // no-wait
		amqp.Table{
			amqp.QueueTypeArg: amqp.QueueTypeQuorum,
		},
	)
	failOnError(err, "Failed to declare a queue")

	msgs, err := ch.Consume(
		q.Name, // queue
		"",     // consumer
		true,   // auto-ack
		false,  // exclusive
		false,  // no-local
		false,  // no-wait
		nil,    // args
	)
	failOnError(err, "Failed to register a consumer")

	go func() {
		for d := range msgs {
			log.Printf("Received a message: %s", d.Body)
		}
	}()

	log.Printf(" [*] Waiting for messages. To exit press CTRL+C")
	// Create a channel to receive OS signals
	c := make(chan os.Signal, 1)
	// Notify the channel for SIGINT (CTRL+C) and SIGTERM
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	// Block until a signal is received
	<-c
	log.Printf("Shutting down gracefully...")
	// Deferred conn.Close() and ch.Close() will execute!
}
