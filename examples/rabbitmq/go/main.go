// Command rabbitmq is the RabbitMQ example of lapse's README, with
// amqp091-go: it publishes a message to the queue "orders" (declared by
// examples/config/definitions.json: x-message-ttl 1 hour, dead-lettered to
// "orders.expired"), moves lapse's clock 61 minutes and gets the message
// from "orders.expired" with its x-death header.
//
//	go run ./examples/rabbitmq/go
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func main() {
	url := env("RABBITMQ_URL", "amqp://guest:guest@localhost:5672/")
	control := env("LAPSE_CONTROL_URL", "http://localhost:8080")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	conn, err := amqp.Dial(url)
	check(err)
	defer conn.Close()
	ch, err := conn.Channel()
	check(err)
	// A confirmed publish is in the queue before the clock moves.
	check(ch.Confirm(false))
	confirm, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "orders", false, false,
		amqp.Publishing{Body: []byte("order 1")})
	check(err)
	if ok, err := confirm.WaitContext(ctx); !ok || err != nil {
		log.Fatalf("publish not confirmed: %v", err)
	}
	fmt.Println("published: order 1")

	// The control API moves lapse's clock; it answers once every expiry
	// due by then is applied.
	resp, err := http.Post(control+"/api/clock/advance", "application/json", strings.NewReader(`{"by":"61m"}`))
	check(err)
	resp.Body.Close()
	fmt.Println("clock advanced 61m")

	msg, ok, err := ch.Get("orders.expired", true)
	check(err)
	if !ok {
		log.Fatal("orders.expired is empty")
	}
	death := msg.Headers["x-death"].([]any)[0].(amqp.Table)
	fmt.Printf("dead-lettered: %s (x-death: %s from %s)\n", msg.Body, death["reason"], death["queue"])
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
