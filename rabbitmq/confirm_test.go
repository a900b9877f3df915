package rabbitmq_test

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// issue 17: a publisher that waits for each confirm is confirmed by the
// connection's goroutine itself (confirmer.now), one that publishes a
// burst by the confirmer's goroutine; mixed, every publish is confirmed
// once, in order, persistent and transient, routed or not.
func TestConfirmsOfWaitedAndBurstPublishesComeOnceInOrder(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	if _, err := ch.QueueDeclare("durable", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 2000))
	ctx := context.Background()
	next := uint64(1)
	expect := func(n int) {
		t.Helper()
		for range n {
			select {
			case c := <-confirms:
				if c.DeliveryTag != next || !c.Ack {
					t.Fatalf("confirm %+v, want an ack of %d", c, next)
				}
				next++
			case <-time.After(10 * time.Second):
				t.Fatalf("no confirm of publish %d", next)
			}
		}
	}
	publish := func(i int) {
		t.Helper()
		msg := amqp.Publishing{Body: []byte("m"), DeliveryMode: amqp.Persistent}
		key := "durable"
		switch i % 3 {
		case 1:
			msg.DeliveryMode = amqp.Transient
		case 2:
			key = "nowhere" // unroutable: acked at once
		}
		if err := ch.PublishWithContext(ctx, "", key, false, false, msg); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 5 {
		for i := range 20 { // each waited for
			publish(i)
			expect(1)
		}
		for i := range 500 * (round + 1) { // a burst
			publish(i)
		}
		expect(500 * (round + 1))
	}
	select {
	case c := <-confirms:
		t.Fatalf("a confirm too many: %+v", c)
	case <-time.After(50 * time.Millisecond):
	}
}
