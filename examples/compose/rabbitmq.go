package main

import (
	"context"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// rabbitMQ publishes to the queue "orders" and looks in "orders.expired".
type rabbitMQ struct {
	conn *amqp.Connection
}

func newRabbitMQ(url string) (*rabbitMQ, error) {
	conn, err := amqp.Dial(url)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: %w", err)
	}
	return &rabbitMQ{conn: conn}, nil
}

func (r *rabbitMQ) close() { _ = r.conn.Close() }

// publish sends one persistent message with the message ID id to the queue
// "orders" through the default exchange, and waits for the broker's
// confirm: only then is it sure to be there when the clock moves.
func (r *rabbitMQ) publish(ctx context.Context, id string) error {
	ch, err := r.conn.Channel()
	if err != nil {
		return fmt.Errorf("rabbitmq: %w", err)
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("rabbitmq: confirm mode: %w", err)
	}
	confirm, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "orders", true, false, amqp.Publishing{
		MessageId:    id,
		DeliveryMode: amqp.Persistent,
		ContentType:  "application/json",
		Body:         []byte(`{"order":"` + id + `"}`),
	})
	if err != nil {
		return fmt.Errorf("rabbitmq: publish: %w", err)
	}
	if ok, err := confirm.WaitContext(ctx); err != nil || !ok {
		return fmt.Errorf("rabbitmq: publish not confirmed: %v", err)
	}
	return nil
}

// deadLetter looks for the message id in "orders.expired" and returns the
// reason of its x-death header. Every message it gets goes back when the
// channel closes (none is acknowledged), so the message stays there for the
// dashboard to show.
func (r *rabbitMQ) deadLetter(ctx context.Context, id string) (string, error) {
	ch, err := r.conn.Channel()
	if err != nil {
		return "", fmt.Errorf("rabbitmq: %w", err)
	}
	defer ch.Close()
	for ctx.Err() == nil {
		d, ok, err := ch.Get("orders.expired", false)
		if err != nil {
			return "", fmt.Errorf("rabbitmq: get: %w", err)
		}
		if !ok {
			return "", fmt.Errorf("rabbitmq: message %s is not in orders.expired", id)
		}
		if d.MessageId != id {
			continue
		}
		deaths, _ := d.Headers["x-death"].([]any)
		if len(deaths) == 0 {
			return "", fmt.Errorf("rabbitmq: message %s has no x-death header", id)
		}
		death, _ := deaths[0].(amqp.Table)
		reason, _ := death["reason"].(string)
		return reason, nil
	}
	return "", ctx.Err()
}
