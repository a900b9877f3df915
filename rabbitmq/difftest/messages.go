package difftest

import (
	"fmt"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Msg is a message to publish: the body, the properties scenarios vary and
// the mandatory flag.
type Msg struct {
	Body string
	// Size, when not 0, makes the body Size zero octets instead of Body,
	// for messages too large to write in a transcript.
	Size       int
	Expiration string
	Headers    amqp.Table
	Persistent bool
	Mandatory  bool
	// Priority is the priority property; 0 sends none (amqp091-go sets
	// the property only when it is not 0).
	Priority uint8
}

func (m Msg) String() string {
	var b strings.Builder
	if m.Size != 0 {
		fmt.Fprintf(&b, "body=<%d zero octets>", m.Size)
	} else {
		fmt.Fprintf(&b, "body=%q", m.Body)
	}
	if m.Expiration != "" {
		fmt.Fprintf(&b, " expiration=%q", m.Expiration)
	}
	if m.Headers != nil {
		b.WriteString(" headers=" + formatTable(m.Headers))
	}
	if m.Priority != 0 {
		fmt.Fprintf(&b, " priority=%d", m.Priority)
	}
	b.WriteString(flags("persistent", m.Persistent, "mandatory", m.Mandatory))
	return b.String()
}

func (ch *Ch) send(exchange, key string, m Msg) error {
	p := amqp.Publishing{Body: []byte(m.Body), Expiration: m.Expiration, Headers: m.Headers, Priority: m.Priority}
	if m.Size != 0 {
		p.Body = make([]byte, m.Size)
	}
	if m.Persistent {
		p.DeliveryMode = amqp.Persistent
	}
	return ch.ch.Publish(exchange, key, m.Mandatory, false, p)
}

// Publish records a basic.publish and its outcome: "ok" once a round trip
// shows the channel still open, or in confirm mode "ack"/"nack" from the
// publisher confirm; then any basic.return it caused.
func (ch *Ch) Publish(exchange, key string, m Msg) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("basic.publish exchange=%q rk=%q %s", exchange, key, m)
	if ch.confirms == nil {
		return ch.async(op, func() error { return ch.send(exchange, key, m) })
	}
	ch.live(op)
	if err := ch.send(exchange, key, m); err != nil {
		return ch.result(op, err, "")
	}
	select {
	case c, ok := <-ch.confirms:
		if !ok { // closed with the channel
			ch.s.Note("%s: %s", op, ch.closedText(ch.awaitClose(op, nil)))
			return false
		}
		ch.s.Note("%s: %s", op, ackText(c.Ack))
	case e, ok := <-ch.closes:
		if !ok || e == nil {
			ch.s.tb.Fatalf("%s: channel closed without an error", op)
		}
		ch.s.Note("%s: %s", op, ch.closedText(e))
		return false
	case <-time.After(arrivalTimeout):
		ch.s.tb.Fatalf("%s: no publisher confirm", op)
	}
	ch.drainReturns()
	return true
}

func ackText(ack bool) string {
	if ack {
		return "ack"
	}
	return "nack"
}

// PublishNoWait records a basic.publish without waiting for anything; the
// scenario then calls WaitConfirms or another method that makes a round trip.
func (ch *Ch) PublishNoWait(exchange, key string, m Msg) {
	ch.s.tb.Helper()
	op := fmt.Sprintf("basic.publish exchange=%q rk=%q %s", exchange, key, m)
	ch.live(op)
	if err := ch.send(exchange, key, m); err != nil {
		ch.s.tb.Fatalf("%s: %v", op, err)
	}
	ch.s.Note("%s: sent", op)
}

// Confirm records a confirm.select; later publishes wait for their confirm.
func (ch *Ch) Confirm() bool {
	ch.s.tb.Helper()
	ch.live("confirm.select")
	ok := ch.result("confirm.select", ch.ch.Confirm(false), "ok")
	if ok {
		ch.confirms = ch.ch.NotifyPublish(make(chan amqp.Confirmation, 1000))
	}
	return ok
}

// WaitConfirms records the next n publisher confirms, one line each (amqp091-go
// splits a multiple ack into one confirmation per tag, in order).
func (ch *Ch) WaitConfirms(n int) {
	ch.s.tb.Helper()
	for range n {
		select {
		case c, ok := <-ch.confirms:
			if !ok {
				ch.s.tb.Fatalf("channel closed while waiting for publisher confirms")
			}
			ch.s.Note("confirm tag=%d %s", c.DeliveryTag, ackText(c.Ack))
		case <-time.After(arrivalTimeout):
			ch.s.tb.Fatalf("no publisher confirm")
		}
	}
	ch.drainReturns()
}

// Get records a basic.get with no-ack: the message and the message count of
// the get-ok, or "empty".
func (ch *Ch) Get(queue string) (amqp.Delivery, bool) {
	ch.s.tb.Helper()
	return ch.get(queue, true)
}

// GetManual records a basic.get that must be acknowledged; the delivery tag is
// in the transcript and the returned delivery.
func (ch *Ch) GetManual(queue string) (amqp.Delivery, bool) {
	ch.s.tb.Helper()
	return ch.get(queue, false)
}

// GetArrived is Get for a message the broker moves to queue on its own
// time, after the method that caused it has returned (a dead-letter on the
// real broker): an empty get is tried again until arrivalTimeout, and only
// the last one is recorded, so the transcript is Get's.
func (ch *Ch) GetArrived(queue string) (amqp.Delivery, bool) {
	ch.s.tb.Helper()
	return ch.getWithin(queue, true, arrivalTimeout)
}

func (ch *Ch) get(queue string, noAck bool) (amqp.Delivery, bool) {
	ch.s.tb.Helper()
	return ch.getWithin(queue, noAck, 0)
}

// getWithin records a basic.get, tried again while the queue is empty
// until within has passed.
func (ch *Ch) getWithin(queue string, noAck bool, within time.Duration) (amqp.Delivery, bool) {
	ch.s.tb.Helper()
	op := fmt.Sprintf("basic.get %q%s", queue, flags("no-ack", noAck))
	ch.live(op)
	d, ok, err := ch.ch.Get(queue, noAck)
	for deadline := time.Now().Add(within); err == nil && !ok && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		d, ok, err = ch.ch.Get(queue, noAck)
	}
	switch {
	case err != nil:
		ch.result(op, err, "")
		return d, false
	case !ok:
		ch.s.Note("%s: empty", op)
		return d, false
	}
	ch.s.Note("%s: %s remaining=%d", op, formatDelivery(d), d.MessageCount)
	return d, true
}

// GetAll records no-ack basic.gets until the queue is empty.
func (ch *Ch) GetAll(queue string) {
	ch.s.tb.Helper()
	for range 1000 {
		if _, ok := ch.Get(queue); !ok {
			return
		}
	}
	ch.s.tb.Fatalf("queue %s does not run empty", queue)
}

// Ack records a basic.ack.
func (ch *Ch) Ack(tag uint64, multiple bool) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("basic.ack tag=%d%s", tag, flags("multiple", multiple))
	return ch.async(op, func() error { return ch.ch.Ack(tag, multiple) })
}

// Nack records a basic.nack.
func (ch *Ch) Nack(tag uint64, multiple, requeue bool) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("basic.nack tag=%d%s requeue=%t", tag, flags("multiple", multiple), requeue)
	return ch.async(op, func() error { return ch.ch.Nack(tag, multiple, requeue) })
}

// Reject records a basic.reject.
func (ch *Ch) Reject(tag uint64, requeue bool) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("basic.reject tag=%d requeue=%t", tag, requeue)
	return ch.async(op, func() error { return ch.ch.Reject(tag, requeue) })
}

// Qos records a basic.qos with a prefetch count.
func (ch *Ch) Qos(prefetch int) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("basic.qos prefetch=%d", prefetch)
	ch.live(op)
	return ch.result(op, ch.ch.Qos(prefetch, 0, false), "ok")
}

// Recover records a basic.recover.
func (ch *Ch) Recover(requeue bool) bool {
	ch.s.tb.Helper()
	op := fmt.Sprintf("basic.recover requeue=%t", requeue)
	ch.live(op)
	return ch.result(op, ch.ch.Recover(requeue), "ok")
}

// Tx records a tx.select.
func (ch *Ch) Tx() bool {
	ch.s.tb.Helper()
	ch.live("tx.select")
	return ch.result("tx.select", ch.ch.Tx(), "ok")
}

// Commit records a tx.commit.
func (ch *Ch) Commit() bool {
	ch.s.tb.Helper()
	ch.live("tx.commit")
	return ch.result("tx.commit", ch.ch.TxCommit(), "ok")
}

// Rollback records a tx.rollback.
func (ch *Ch) Rollback() bool {
	ch.s.tb.Helper()
	ch.live("tx.rollback")
	return ch.result("tx.rollback", ch.ch.TxRollback(), "ok")
}

// COpts are basic.consume's flags and arguments.
type COpts struct {
	AutoAck, Exclusive bool
	Args               amqp.Table
}

// Consumer is a consumer a scenario started.
type Consumer struct {
	ch         *Ch
	tag        string
	deliveries <-chan amqp.Delivery
}

// Consume records a basic.consume with the client-chosen tag (amqp091-go
// never lets the broker pick one). It returns nil when the broker refused.
func (ch *Ch) Consume(queue, tag string, o COpts) *Consumer {
	ch.s.tb.Helper()
	op := fmt.Sprintf("basic.consume %q tag=%q%s%s", queue, tag,
		flags("no-ack", o.AutoAck, "exclusive", o.Exclusive), argsSuffix(o.Args))
	ch.live(op)
	d, err := ch.ch.Consume(queue, tag, o.AutoAck, o.Exclusive, false, false, o.Args)
	if !ch.result(op, err, "ok") {
		return nil
	}
	return &Consumer{ch: ch, tag: tag, deliveries: d}
}

// Next records the consumer's next delivery, or that none came within
// arrivalTimeout, or that the client closed the delivery stream (consumer
// cancelled, channel closed).
func (c *Consumer) Next() (amqp.Delivery, bool) {
	c.ch.s.tb.Helper()
	return c.next(arrivalTimeout)
}

// None records that no delivery arrives for quietPeriod, or the one that did.
func (c *Consumer) None() {
	c.ch.s.tb.Helper()
	c.next(quietPeriod)
}

func (c *Consumer) next(wait time.Duration) (amqp.Delivery, bool) {
	select {
	case d, ok := <-c.deliveries:
		if !ok {
			c.ch.s.Note("deliver to %q: stream closed", c.tag)
			return d, false
		}
		c.ch.s.Note("deliver to %q: %s", c.tag, formatDelivery(d))
		return d, true
	case <-time.After(wait):
		c.ch.s.Note("deliver to %q: nothing", c.tag)
		return amqp.Delivery{}, false
	}
}

// Cancel records a basic.cancel of the consumer.
func (c *Consumer) Cancel() bool {
	c.ch.s.tb.Helper()
	op := fmt.Sprintf("basic.cancel %q", c.tag)
	c.ch.live(op)
	return c.ch.result(op, c.ch.ch.Cancel(c.tag, false), "ok")
}
