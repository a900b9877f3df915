//go:build reliability

package reliability

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// clockRabbitQueueTTL is the queues' x-message-ttl (RB-1); a message's own
// expiration applies when lower (RB-5).
const clockRabbitQueueTTL = 5 * time.Minute

// clockRabbitMax caps the messages published: with the other protocols'
// caps the event log (10,000 entries) cannot wrap within one step.
const clockRabbitMax = 2400

// clockRabbit is the RabbitMQ load: one publisher with confirms to two
// queues, one consumer per queue with prefetch 1 and manual acks.
type clockRabbit struct {
	queues    []*clockRabbitQueue
	consumers []*amqp.Channel
}

// clockRabbitQueue is one queue and what happened to its messages; message
// i (its message id) is msgs[i-1], and lapse numbers the queue's items in
// the order they arrive, which is the order one publisher sends them in.
type clockRabbitQueue struct {
	name string
	mu   sync.Mutex
	msgs []*clockRabbitMsg
}

type clockRabbitMsg struct {
	ttl       time.Duration // the lower of its own expiration and the queue's TTL
	eLo, eHi  time.Time     // lapse's clock at its enqueue is between these
	delivered bool
	expired   bool
}

func clockRabbitSetup(t *testing.T, l *Lapse) *clockRabbit {
	t.Helper()
	conn, ch := l.RabbitMQChannel()
	defer conn.Close()
	rb := &clockRabbit{}
	for i := range 2 {
		q := &clockRabbitQueue{name: "clock-rb-" + strconv.Itoa(i)}
		if _, err := ch.QueueDeclare(q.name, false, false, false, false, amqp.Table{"x-message-ttl": clockRabbitQueueTTL.Milliseconds()}); err != nil {
			t.Fatal(err)
		}
		rb.queues = append(rb.queues, q)
	}
	return rb
}

func (rb *clockRabbit) run(t *testing.T, l *Lapse, r *clockRun, seed uint64, wg *sync.WaitGroup) {
	t.Helper()
	_, pch := l.RabbitMQChannel()
	if err := pch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go rb.publish(t, r, pch, rand.New(rand.NewPCG(seed, 1)), wg)
	for _, q := range rb.queues {
		_, ch := l.RabbitMQChannel()
		if err := ch.Qos(1, 0, false); err != nil {
			t.Fatal(err)
		}
		lo := r.lower()
		ds, err := ch.Consume(q.name, "clock", false, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		rb.consumers = append(rb.consumers, ch)
		wg.Add(1)
		go q.consume(t, r, ch, ds, lo, wg)
	}
}

// publish sends messages, 80% with an expiration of their own between 1 ms
// and 10 min, each confirmed before the next.
func (rb *clockRabbit) publish(t *testing.T, r *clockRun, ch *amqp.Channel, rng *rand.Rand, wg *sync.WaitGroup) {
	defer wg.Done()
	for n := 0; n < clockRabbitMax && !r.stop.Load(); n++ {
		q := rb.queues[n%len(rb.queues)]
		m := &clockRabbitMsg{ttl: clockRabbitQueueTTL, eLo: r.lower(), eHi: r.at[len(r.at)-1]}
		var exp string
		if rng.IntN(5) > 0 {
			own := clockLogUniform(rng, time.Millisecond, 10*time.Minute)
			exp = strconv.FormatInt(own.Milliseconds(), 10)
			m.ttl = min(own, clockRabbitQueueTTL)
		}
		q.mu.Lock()
		q.msgs = append(q.msgs, m)
		id := len(q.msgs)
		q.mu.Unlock()
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", q.name, false, false,
			amqp.Publishing{MessageId: strconv.Itoa(id), Expiration: exp, Body: []byte("clock step message " + strconv.Itoa(id))})
		if err != nil {
			t.Errorf("rabbitmq publish: %v", err)
			return
		}
		if ok, err := dc.WaitContext(context.Background()); !ok || err != nil {
			t.Errorf("rabbitmq publish %d to %s not confirmed: %v", id, q.name, err)
			return
		}
		hi := r.upper()
		q.mu.Lock()
		m.eHi = hi
		q.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
}

// consume takes the queue's messages more slowly than they come, so that
// a backlog builds and the clock's steps expire part of it. lo is the
// clock lapse has reached at the latest when it chooses the next delivery:
// read before the consume, then before each ack (prefetch 1).
func (q *clockRabbitQueue) consume(t *testing.T, r *clockRun, ch *amqp.Channel, ds <-chan amqp.Delivery, lo time.Time, wg *sync.WaitGroup) {
	defer wg.Done()
	for d := range ds {
		hi := r.upper()
		i, err := strconv.Atoi(d.MessageId)
		q.mu.Lock()
		if err != nil || i < 1 || i > len(q.msgs) {
			q.mu.Unlock()
			r.violate("rabbitmq %s delivered a message with id %q that was not published", q.name, d.MessageId)
			continue
		}
		m := q.msgs[i-1]
		again := m.delivered
		m.delivered = true
		// The message was enqueued before it was delivered, so before the
		// clock passed hi.
		due := clockEarlier(m.eHi, hi).Add(m.ttl)
		q.mu.Unlock()
		if again || d.Redelivered {
			r.violate("rabbitmq %s message %d delivered twice (redelivered %v)", q.name, i, d.Redelivered)
		}
		// rule: RB-3 (and RB-1, RB-5, RB-7)
		if !lo.Before(due) {
			r.violate("rabbitmq %s message %d (TTL %v) delivered with lapse's clock at %v or later, at or after its due time %v at the latest (RB-3)",
				q.name, i, m.ttl, lo.Format(time.RFC3339Nano), due.Format(time.RFC3339Nano))
		}
		time.Sleep(12 * time.Millisecond)
		lo = r.lower()
		if err := d.Ack(false); err != nil {
			t.Errorf("rabbitmq ack: %v", err)
			return
		}
	}
}

// stop cancels the consumers: the deliveries already sent are acked and
// counted, and the consume loops end.
func (rb *clockRabbit) stop(t *testing.T) {
	for _, ch := range rb.consumers {
		if err := ch.Cancel("clock", false); err != nil {
			t.Errorf("rabbitmq cancel: %v", err)
		}
	}
}

// expired checks an expiry event against the message it names: its
// sequence number is the message's index in its queue.
func (rb *clockRabbit) expired(r *clockRun, ev Event) {
	for _, q := range rb.queues {
		if !strings.HasSuffix(ev.Entity, "/"+q.name) {
			continue
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		if ev.Item < 1 || ev.Item > uint64(len(q.msgs)) {
			r.violate("rabbitmq event %d names message %d of %s, which has %d: %+v", ev.ID, ev.Item, q.name, len(q.msgs), ev)
			return
		}
		m := q.msgs[ev.Item-1]
		switch {
		case m.expired:
			r.violate("rabbitmq %s message %d has two expiry events (the second %d)", q.name, ev.Item, ev.ID)
		case m.delivered:
			r.violate("rabbitmq %s message %d was delivered and has an expiry event %d", q.name, ev.Item, ev.ID)
		case ev.Rule != "RB-3":
			r.violate("rabbitmq event %d: rule %q, want RB-3: %+v", ev.ID, ev.Rule, ev)
		case ev.Due.Before(m.eLo.Add(m.ttl)) || ev.Due.After(m.eHi.Add(m.ttl)):
			r.violate("rabbitmq %s message %d (TTL %v) expired as due at %v, outside %v..%v", q.name, ev.Item, m.ttl, ev.Due, m.eLo.Add(m.ttl), m.eHi.Add(m.ttl))
		}
		m.expired = true
		return
	}
	r.violate("rabbitmq event %d of entity %q, not a queue of the test: %+v", ev.ID, ev.Entity, ev)
}

// account checks that each message published was delivered or expired.
func (rb *clockRabbit) account(r *clockRun) {
	for _, q := range rb.queues {
		q.mu.Lock()
		for i, m := range q.msgs {
			if !m.delivered && !m.expired {
				r.violate("rabbitmq %s message %d was neither delivered nor expired (no event)", q.name, i+1)
			}
		}
		q.mu.Unlock()
	}
}

func (rb *clockRabbit) published() (n int) {
	for _, q := range rb.queues {
		q.mu.Lock()
		n += len(q.msgs)
		q.mu.Unlock()
	}
	return n
}

func (rb *clockRabbit) delivered() (n int) {
	for _, q := range rb.queues {
		q.mu.Lock()
		for _, m := range q.msgs {
			if m.delivered {
				n++
			}
		}
		q.mu.Unlock()
	}
	return n
}
