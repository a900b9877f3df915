package difftest

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The dispatch scenarios pin how a queue shares its messages among
// consumers when they come one at a time, as in RabbitMQ's Work Queues
// tutorial: each new task is acked before the next is sent.

func dispatchScenarios() []Scenario {
	return []Scenario{
		{Name: "RoundRobinOneMessageAtATime", Run: roundRobinOneMessageAtATime},
		{Name: "RoundRobinOneMessageAtATimeQuorum", Run: roundRobinOneMessageAtATimeQuorum},
	}
}

// roundRobinOneMessageAtATime pins round-robin dispatch among two
// consumers with a prefetch of 1 when each message is acked before the
// next is published: the consumers take turns, the first one first.
func roundRobinOneMessageAtATime(s *S) { oneAtATime(s, QOpts{}) }

// roundRobinOneMessageAtATimeQuorum pins the same for a quorum queue, which
// RabbitMQ's tutorials declare.
func roundRobinOneMessageAtATimeQuorum(s *S) {
	oneAtATime(s, QOpts{Durable: true, Args: amqp.Table{"x-queue-type": "quorum"}})
}

// oneAtATime declares queue q with o, starts consumers c1 then c2 on
// channels of their own with a prefetch of 1, and publishes four messages,
// each after the one before was delivered and acked.
func oneAtATime(s *S, o QOpts) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Declare(q, o)
	var cs []*Consumer
	for _, tag := range []string{"c1", "c2"} {
		cch := s.Ch()
		cch.Qos(1)
		cs = append(cs, cch.Consume(q, tag, COpts{}))
	}
	for _, b := range []string{"m1", "m2", "m3", "m4"} {
		ch.Publish("", q, Msg{Body: b})
		c, d, ok := nextOf(cs)
		if !ok {
			s.Note("deliver: nothing")
			return
		}
		s.Note("deliver to %q: body=%q", c.tag, d.Body)
		c.ch.Ack(d.DeliveryTag, false)
	}
}

// nextOf returns the next delivery to any of cs and its consumer, or ok
// false when none comes within arrivalTimeout.
func nextOf(cs []*Consumer) (*Consumer, amqp.Delivery, bool) {
	type arrival struct {
		c *Consumer
		d amqp.Delivery
	}
	got := make(chan arrival, len(cs))
	stop := make(chan struct{})
	defer close(stop)
	for _, c := range cs {
		go func() {
			select {
			case d, ok := <-c.deliveries:
				if ok {
					got <- arrival{c, d}
				}
			case <-stop:
			}
		}()
	}
	select {
	case a := <-got:
		return a.c, a.d, true
	case <-time.After(arrivalTimeout):
		return nil, amqp.Delivery{}, false
	}
}
