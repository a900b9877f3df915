package rabbitmq

import (
	"crypto/rand"
	"encoding/base64"
	"sort"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// basic.qos: a per-consumer prefetch count for consumers made afterwards,
// or (global) a limit for the whole channel, as RabbitMQ 3.10 reads them.
func (ch *channel) qos(m *wire.BasicQos) error {
	if m.PrefetchSize != 0 {
		return connectionError(wire.NotImplemented, "prefetch_size!=0 (%d)", m.PrefetchSize)
	}
	if m.Global {
		ch.globalPrefetch.Store(int64(m.PrefetchCount))
	} else {
		ch.prefetch = int64(m.PrefetchCount)
	}
	ch.send(&wire.BasicQosOk{})
	ch.wakeConsumers()
	return nil
}

// consume is basic.consume.
func (ch *channel) consume(m *wire.BasicConsume) error {
	c := ch.c
	name, err := ch.queueName(m.Queue)
	if err != nil {
		return err
	}
	if err := c.permitted(read, "queue", name); err != nil {
		return err
	}
	q, err := c.s.lookupQueue(c, c.vhost, name)
	if err != nil {
		return err
	}
	tag := m.ConsumerTag
	if tag == "" {
		var b [16]byte
		rand.Read(b[:])
		tag = "amq.ctag-" + base64.RawURLEncoding.EncodeToString(b[:])
	}
	ch.mu.Lock()
	_, dup := ch.consumers[tag]
	ch.mu.Unlock()
	if dup {
		return connectionError(wire.NotAllowed, "attempt to reuse consumer tag '%s'", tag)
	}
	cs := &consumer{ch: ch, q: q, tag: tag, noAck: m.NoAck, exclusive: m.Exclusive, prefetch: ch.prefetch, args: m.Arguments}
	ch.mu.Lock()
	ch.consumers[tag] = cs
	ch.mu.Unlock()
	// Should its queue go before the consume-ok is out, the consumer's
	// basic.cancel follows the consume-ok (channel.hold): a client learns
	// the tags the server makes from it. The consumer takes its place in
	// the queue's round robin now, in the order consumers were made, but
	// gets nothing before its consume-ok.
	cs.waiting.Store(true)
	if why := q.addConsumer(cs); why != consumerAdded {
		ch.mu.Lock()
		delete(ch.consumers, tag)
		ch.mu.Unlock()
		if why == queueGone {
			// Deleted since the lookup: as if it had been before.
			return notFoundQueue(c.vhost, name)
		}
		return channelError(wire.AccessRefused, "%s in exclusive use", rs("queue", q.name, q.vhost))
	}
	c.s.e.Consumers(c.s.now(), q.key, 1)
	// Deliveries are written under ch.mu: holding it while the consume-ok
	// goes out keeps any delivery behind it, and the consumer is ready
	// before the client can know of it.
	ch.mu.Lock()
	cs.waiting.Store(false)
	if !m.NoWait {
		ch.send(&wire.BasicConsumeOk{ConsumerTag: tag})
	}
	ch.mu.Unlock()
	// The consume is answered: what the channel held goes out now, not
	// after the drain, which would hold every ready message of a long
	// queue in memory before the first went out.
	ch.release()
	// As in RabbitMQ, ready messages go to the new consumer before the
	// connection's next method is handled.
	q.drain()
	return nil
}

// cancel is basic.cancel: the consumer goes, its unacked messages stay
// with the channel; an auto-delete queue left without consumers is deleted.
func (ch *channel) cancel(tag string) {
	ch.mu.Lock()
	cs := ch.consumers[tag]
	delete(ch.consumers, tag)
	if cs != nil {
		// Marked under mu, which deliveries are written under: none is
		// written from now on, so none follows the cancel-ok.
		cs.cancelled.Store(true)
	}
	ch.mu.Unlock()
	if cs != nil {
		ch.dropConsumer(cs)
	}
}

// dropConsumer takes a consumer off its queue.
func (ch *channel) dropConsumer(cs *consumer) {
	s := ch.c.s
	autoDelete := cs.q.removeConsumer(cs)
	s.e.Consumers(s.now(), cs.q.key, -1)
	if cs.q.singleActive {
		// The next consumer may have become the active one.
		cs.q.signal()
	}
	if autoDelete {
		s.topoMu.Lock()
		// Unless a consumer joined since: then the queue stays.
		if cs.q.retireIfUnused() {
			s.removeQueue(cs.q)
		}
		s.topoMu.Unlock()
	}
}

// serverCancel tells the client its consumer is gone because its queue
// was deleted (consumer_cancel_notify).
func (ch *channel) serverCancel(cs *consumer) {
	ch.mu.Lock()
	_, mine := ch.consumers[cs.tag]
	delete(ch.consumers, cs.tag)
	closed := ch.closed
	ch.mu.Unlock()
	if !mine || closed {
		return
	}
	ch.c.s.e.Consumers(ch.c.s.now(), cs.q.key, -1)
	if ch.c.cancelNotify {
		// Written under mu, where the channel's close is marked: never
		// after its close-ok, which amqp091-go answers by closing the
		// whole connection. While the channel runs a method that answers,
		// the cancel waits for the answer (channel.hold).
		ch.mu.Lock()
		if ch.holding {
			ch.held = append(ch.held, heldFrame{cancel: cs.tag})
		} else if !ch.closed {
			ch.send(&wire.BasicCancel{ConsumerTag: cs.tag, NoWait: true})
		}
		ch.mu.Unlock()
	}
}

// hold keeps what the broker sends on the channel of its own accord, its
// deliveries and its basic.cancel of the channel's consumers, until
// release, which sends them in the order they came (what can no longer go
// out goes back to its queue). The channel holds them while it runs a
// method it answers (channel.method), so that they follow the answer, as
// in RabbitMQ, whose channel process hears of them only once it has
// answered the method it runs. Clients rely on it: py-amqp raises
// ConsumerCancelled out of queue_delete when the cancel of a consumer of
// the deleted queue comes before the delete-ok, and a client learns a tag
// the server made from the consume-ok. A basic.recover's redeliveries come
// after its recover-ok (difftest's RecoverOkBeforeItsRedeliveries).
func (ch *channel) hold() (release func()) {
	ch.mu.Lock()
	ch.holding = true
	ch.mu.Unlock()
	return ch.release
}

// release sends what the channel holds and holds no more; a second call
// does nothing.
func (ch *channel) release() {
	ch.mu.Lock()
	ch.holding = false
	held := ch.held
	ch.held = nil
	var back []heldFrame
	for _, h := range held {
		switch {
		case h.cs == nil:
			if !ch.closed {
				ch.send(&wire.BasicCancel{ConsumerTag: h.cancel, NoWait: true})
			}
		case ch.gone(h.cs):
			back = append(back, h)
		default:
			ch.writeDelivery(h.cs, h.q, h.it, h.m)
		}
	}
	ch.mu.Unlock()
	for _, h := range back {
		h.cs.undeliver(h.q, h.it)
	}
}

// heldFrame is a delivery (cs set) or a basic.cancel the channel holds.
type heldFrame struct {
	cancel string
	cs     *consumer
	q      *queue
	it     core.Item
	m      msgMeta
}

// wakeConsumers wakes the queues of the channel's consumers, after their
// room for deliveries grew.
func (ch *channel) wakeConsumers() {
	ch.mu.Lock()
	qs := make([]*queue, 0, len(ch.consumers))
	for _, cs := range ch.consumers {
		qs = append(qs, cs.q)
	}
	ch.mu.Unlock()
	for _, q := range qs {
		q.signal()
	}
}

// deliver sends a message to consumer cs, whose room was reserved.
func (ch *channel) deliver(cs *consumer, q *queue, it core.Item) {
	m, ok := parseMeta(it.Meta)
	if !ok {
		cs.unreserve()
		return
	}
	ch.mu.Lock()
	if ch.gone(cs) {
		ch.mu.Unlock()
		cs.undeliver(q, it)
		return
	}
	if ch.holding {
		ch.held = append(ch.held, heldFrame{cs: cs, q: q, it: it, m: m})
		ch.mu.Unlock()
		return
	}
	ch.writeDelivery(cs, q, it, m)
	ch.mu.Unlock()
}

// gone reports whether a delivery to cs may no longer go out: the channel
// is closed, or the client cancelled the consumer. Call it under ch.mu.
func (ch *channel) gone(cs *consumer) bool {
	return ch.closed || cs.cancelled.Load() && ch.consumers[cs.tag] != cs
}

// undeliver undoes a delivery to cs that did not go out: its room, and the
// message, unless it was taken for good (no-ack). Not under ch.mu: the
// engine's Release may run hooks.
func (cs *consumer) undeliver(q *queue, it core.Item) {
	cs.unreserve()
	if !cs.noAck {
		q.s.e.Release(q.s.now(), q.key, it.Seq)
	}
}

// writeDelivery writes a delivery to cs with the channel's next tag. Call
// it under ch.mu.
func (ch *channel) writeDelivery(cs *consumer, q *queue, it core.Item, m msgMeta) {
	ch.tag++
	tag := ch.tag
	if !cs.noAck {
		ch.pending = append(ch.pending, &delivery{tag: tag, q: q, seq: it.Seq, count: it.DeliveryCount, c: cs})
	}
	if b, ok := ch.c.w.begin(); ok {
		b = wire.AppendDeliver(b, ch.id, cs.tag, tag, it.DeliveryCount > 1, m.exchange, m.key)
		ch.c.w.end(wire.AppendContent(b, ch.id, wire.ClassBasic, q.deliveryProps(m.props, &it, false), it.Body, ch.c.frameMax))
	}
}

// get is basic.get.
func (ch *channel) get(m *wire.BasicGet) error {
	c := ch.c
	name, err := ch.queueName(m.Queue)
	if err != nil {
		return err
	}
	if err := c.permitted(read, "queue", name); err != nil {
		return err
	}
	q, err := c.s.lookupQueue(c, c.vhost, name)
	if err != nil {
		return err
	}
	now := c.s.now()
	var (
		it    core.Item
		found bool
	)
	if m.NoAck {
		it, found, _, err = c.s.e.Take(now, q.key)
	} else {
		it, found, err = c.s.e.Receive(now, q.key, zeroTime)
	}
	if err != nil {
		return notFoundQueue(q.vhost, q.name)
	}
	if !found {
		ch.send(&wire.BasicGetEmpty{})
		return nil
	}
	cnt, _, _ := c.s.e.Counts(now, q.key)
	meta, _ := parseMeta(it.Meta)
	ch.mu.Lock()
	ch.tag++
	tag := ch.tag
	if !m.NoAck {
		ch.pending = append(ch.pending, &delivery{tag: tag, q: q, seq: it.Seq, count: it.DeliveryCount})
	}
	ok := wire.BasicGetOk{DeliveryTag: tag, Redelivered: it.DeliveryCount > 1, Exchange: string(meta.exchange),
		RoutingKey: string(meta.key), MessageCount: uint32(cnt.Active)}
	ch.c.w.write(func(b []byte) []byte {
		b = wire.AppendMethodFrame(b, ch.id, &ok)
		return wire.AppendContent(b, ch.id, wire.ClassBasic, q.deliveryProps(meta.props, &it, true), it.Body, ch.c.frameMax)
	})
	ch.mu.Unlock()
	return nil
}

// How a delivery is settled.
type settleKind uint8

const (
	settleAck     settleKind = iota // basic.ack
	settleRequeue                   // nack or reject with requeue (RB-6)
	settleReject                    // nack or reject without requeue: dead-lettered, reason rejected (RB-9)
)

// settle acks, requeues or rejects deliveries: tag alone, or with multiple
// every one up to tag (0: all), as rabbit_channel:collect_acks does; a tag
// that is not pending is 406 "unknown delivery tag".
func (ch *channel) settle(tag uint64, multiple bool, kind settleKind) error {
	if ch.tx != nil {
		if _, err := ch.collect(tag, multiple, false); err != nil {
			return err
		}
		ch.tx.settles = append(ch.tx.settles, txSettle{tag, multiple, kind})
		return nil
	}
	ds, err := ch.collect(tag, multiple, true)
	if err != nil {
		return err
	}
	ch.apply(ds, kind)
	return nil
}

// collect finds the deliveries a settlement names and, with take, marks
// them settled.
func (ch *channel) collect(tag uint64, multiple bool, take bool) ([]*delivery, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	live := ch.pending[ch.head:]
	var out []*delivery
	if tag == 0 && multiple {
		for _, d := range live {
			if !d.settled {
				out = append(out, d)
			}
		}
	} else {
		i := sort.Search(len(live), func(i int) bool { return live[i].tag >= tag })
		if i == len(live) || live[i].tag != tag || live[i].settled {
			return nil, channelError(wire.PreconditionFailed, "unknown delivery tag %d", tag)
		}
		if multiple {
			for _, d := range live[:i+1] {
				if !d.settled {
					out = append(out, d)
				}
			}
		} else {
			out = append(out, live[i])
		}
	}
	if take {
		for _, d := range out {
			d.settled = true
		}
		for ch.head < len(ch.pending) && ch.pending[ch.head].settled {
			ch.pending[ch.head] = nil
			ch.head++
		}
		if ch.head > 1024 && ch.head*2 > len(ch.pending) {
			ch.pending = append([]*delivery(nil), ch.pending[ch.head:]...)
			ch.head = 0
		}
	}
	return out, nil
}

// apply settles deliveries with the engine and frees their room.
func (ch *channel) apply(ds []*delivery, kind settleKind) {
	s := ch.c.s
	now := s.now()
	for _, d := range ds {
		switch kind {
		case settleAck:
			s.e.Complete(now, d.q.key, d.seq)
		case settleRequeue:
			d.q.giveBack(now, d.seq, d.count)
		case settleReject:
			s.e.DeadLetter(now, d.q.key, d.seq, core.DeadLetterReason{Code: "rejected",
				Description: "rejected by the consumer without requeue", Rule: "RB-9"})
		}
		if d.c != nil {
			d.c.unacked.Add(-1)
			ch.unacked.Add(-1)
		}
	}
	var last *queue
	for _, d := range ds {
		if d.c != nil && d.q != last {
			last = d.q
			d.q.signal()
		}
	}
	if ch.globalPrefetch.Load() > 0 {
		ch.wakeConsumers()
	}
}

// recover is basic.recover: every unacked delivery is requeued, as
// RabbitMQ 3.10 does; requeue=false it does not implement.
func (ch *channel) recover(requeue bool) error {
	if !requeue {
		return connectionError(wire.NotImplemented, "requeue=false")
	}
	ds, _ := ch.collect(0, true, true)
	ch.apply(ds, settleRequeue)
	return nil
}

// deliveryProps are the properties a message is delivered with: as
// published, except that a quorum queue adds the x-delivery-count header,
// how many times it was delivered before (RabbitMQ 3.10's rabbit_fifo):
// on every basic.get (get), and on a delivery to a consumer only when it
// is a redelivery (difftest's QuorumConsumerRedeliveryHeader).
func (q *queue) deliveryProps(props []byte, it *core.Item, get bool) []byte {
	if st := q.settings.Load(); st == nil || st.Type != "quorum" || !get && it.DeliveryCount <= 1 {
		return props
	}
	p, err := wire.DecodeProperties(props)
	if err != nil {
		return props
	}
	if p.Headers == nil {
		p.Headers = map[string]any{}
	}
	p.Headers["x-delivery-count"] = int64(max(it.DeliveryCount, 1) - 1)
	return p.Append(nil)
}
