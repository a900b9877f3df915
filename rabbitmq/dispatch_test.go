package rabbitmq_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

// issue 13 (Work Queues tutorial): two consumers with a prefetch of 1 take
// turns when each message is acked before the next is published; the
// wake-up an ack gives an empty queue does not use up the next consumer's
// turn. Classic and quorum queues alike, as in RabbitMQ.
func TestRoundRobinTurnPassesOnlyWithADelivery(t *testing.T) {
	for _, args := range []amqp.Table{nil, {"x-queue-type": "quorum"}} {
		f := MustServer(t)
		conn := f.MustDial()
		pub, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pub.QueueDeclare("tasks", args != nil, false, false, false, args); err != nil {
			t.Fatal(err)
		}
		type arrival struct {
			tag string
			d   amqp.Delivery
		}
		got := make(chan arrival, 4)
		for _, tag := range []string{"c1", "c2"} {
			ch, err := conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			if err := ch.Qos(1, 0, false); err != nil {
				t.Fatal(err)
			}
			msgs, err := ch.Consume("tasks", tag, false, false, false, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for d := range msgs {
					got <- arrival{tag, d}
				}
			}()
		}
		var order []string
		for _, body := range []string{"t1", "t2", "t3", "t4"} {
			MustPublish(t, pub, "", "tasks", amqp.Publishing{Body: []byte(body)})
			select {
			case a := <-got:
				order = append(order, a.tag+":"+string(a.d.Body))
				if err := a.d.Ack(false); err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s not delivered", body)
			}
		}
		if diff := cmp.Diff([]string{"c1:t1", "c2:t2", "c1:t3", "c2:t4"}, order); diff != "" {
			t.Errorf("queue arguments %v: deliveries (-want +got):\n%s", args, diff)
		}
	}
}
