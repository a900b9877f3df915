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

// A channel closed while its confirmer still has confirms to send sends
// none after its close-ok: amqp091-go closes the whole connection (504) on
// a method for a channel it has released.
func TestNoConfirmAfterChannelCloseOk(t *testing.T) {
	f := MustServer(t)
	conn, err := amqp.Dial(f.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	setup, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.QueueDeclare("durable", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	body := amqp.Publishing{DeliveryMode: amqp.Persistent, Body: make([]byte, 100)}
	for round := range 50 {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := ch.Confirm(false); err != nil {
			t.Fatal(err)
		}
		for range 200 {
			if err := ch.PublishWithContext(context.Background(), "", "durable", false, false, body); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		ch.Close() // without waiting for the confirms
		select {
		case e := <-closed:
			t.Fatalf("round %d: the connection closed: %v", round, e)
		default:
		}
	}
	if _, err := setup.QueueDeclarePassive("durable", true, false, false, false, nil); err != nil {
		t.Fatalf("the connection after the rounds: %v", err)
	}
}
