package rabbitmq

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// channel is one AMQP channel of a connection. The connection's reader
// goroutine runs its methods; queue dispatchers deliver on it under mu.
type channel struct {
	c  *conn
	id uint16

	// Read and written by the reader goroutine only.
	closing   bool          // the server sent channel.close
	pub       *publishState // a publish waiting for its content: nil or &pubBuf
	pubBuf    publishState
	lastQueue string // the most recently declared queue, for the "" shortcut
	prefetch  int64  // basic.qos per-consumer prefetch count for new consumers
	confirm   *confirmer
	tx        *txState
	publishes uint64 // publish sequence numbers, for confirms

	active         atomic.Bool  // deliveries may go out (open, not closing)
	confirmMode    atomic.Bool  // confirm.select was seen, for the management API
	txMode         atomic.Bool  // tx.select was seen, for the management API
	globalPrefetch atomic.Int64 // basic.qos global: the channel's unacked limit
	unacked        atomic.Int64 // unacked deliveries to consumers

	mu        lockorder.Mutex
	tag       uint64 // the last delivery tag
	pending   []*delivery
	head      int // pending[:head] are settled
	consumers map[string]*consumer
	closed    bool
	// While the channel runs a method it answers, its deliveries and the
	// broker's basic.cancel of its consumers wait here and go out after
	// the answer (hold).
	holding bool
	held    []heldFrame
}

// delivery is an unacknowledged delivery.
type delivery struct {
	tag     uint64
	q       *queue
	seq     uint64
	count   uint32    // the item's delivery count, this delivery included
	c       *consumer // nil for basic.get
	settled bool
}

func newChannel(c *conn, id uint16) *channel {
	ch := &channel{c: c, id: id, consumers: map[string]*consumer{}}
	ch.active.Store(true)
	return ch
}

// reserve takes room for one unacked delivery under the global limit.
func (ch *channel) reserve() bool {
	n := ch.unacked.Add(1)
	if g := ch.globalPrefetch.Load(); g > 0 && n > g {
		ch.unacked.Add(-1)
		return false
	}
	return true
}

func (ch *channel) unreserve() { ch.unacked.Add(-1) }

// send writes a method frame on the channel.
func (ch *channel) send(m wire.Method) { ch.c.send(ch.id, m) }

// sendDurable sends the reply to a change of the topology (a declare,
// delete, bind, unbind or purge) once every change the engine made is
// durable, as it is when RabbitMQ answers (EM-3). A failed commit closes
// the connection: the client must not take it as done.
func (ch *channel) sendDurable(m wire.Method) error {
	if err := ch.c.s.e.WaitDurable(context.Background()); err != nil {
		// Internal errors never leak their text.
		return connectionError(wire.InternalError, "internal error")
	}
	ch.send(m)
	return nil
}

// frame handles one frame of the channel.
func (ch *channel) frame(f wire.Frame) error {
	if ch.closing {
		// After the server's channel.close only the client's close-ok ends
		// the channel. A close that crossed ours is answered with close-ok,
		// and the channel goes on waiting for the close-ok the client owes
		// for ours; everything else is dropped (rabbit_channel in state
		// closing).
		if f.Type != wire.FrameMethod {
			return nil
		}
		m, err := wire.ReadMethod(f.Payload)
		if err != nil {
			return err
		}
		switch m.(type) {
		case *wire.ChannelCloseOk:
			ch.c.dropChannel(ch)
		case *wire.ChannelClose:
			ch.send(&wire.ChannelCloseOk{})
		}
		return nil
	}
	var err error
	switch f.Type {
	case wire.FrameMethod:
		if ch.pub != nil {
			return connectionError(wire.UnexpectedFrame, "expected content header for class 60, got non content header frame instead")
		}
		err = ch.method(f.Payload)
	case wire.FrameHeader:
		err = ch.contentHeader(f.Payload)
	case wire.FrameBody:
		err = ch.contentBody(f.Payload)
	}
	if err == nil {
		return nil
	}
	var ae *amqpError
	if !errors.As(err, &ae) || ae.conn || wire.IsHardError(ae.code) {
		return err
	}
	// A channel error: close the channel, keep the connection.
	ch.c.log.Info("closing channel", "channel", ch.id, "code", ae.code, "text", ae.text)
	ch.shutdown()
	ch.closing = true
	ch.send(&wire.ChannelClose{ReplyCode: ae.code, ReplyText: ae.text, ClassID: ae.classID, MethodID: ae.methodID})
	return nil
}

// method handles a method frame.
func (ch *channel) method(payload []byte) error {
	cls, mid, err := wire.PeekMethod(payload)
	if err != nil {
		return err
	}
	if cls == wire.ClassBasic && mid == basicPublishID {
		return ch.startPublish(payload)
	}
	m, err := wire.ReadMethod(payload)
	if err != nil {
		return err
	}
	if answeredFirst(m) {
		defer ch.hold()()
	}
	err = ch.dispatch(m)
	var ae *amqpError
	if errors.As(err, &ae) && ae.classID == 0 {
		ae.classID, ae.methodID = cls, mid
	}
	return err
}

// answeredFirst reports whether what the broker sends of its own accord
// while the channel runs m waits for m's answer (hold). It does for every
// method RabbitMQ's channel answers at once; not for tx.commit, which it
// answers once its queues have the messages, and they deliver meanwhile
// (difftest's TxCommitDeliversBeforeItsCommitOk), nor for the methods
// without an answer, which are many on a busy channel.
func answeredFirst(m wire.Method) bool {
	switch m.(type) {
	case *wire.TxCommit, *wire.BasicAck, *wire.BasicNack, *wire.BasicReject,
		*wire.BasicRecoverAsync, *wire.ChannelCloseOk, *wire.ChannelFlowOk:
		return false
	}
	return true
}

// dispatch runs a decoded method.
func (ch *channel) dispatch(m wire.Method) error {
	c := ch.c
	vh := c.vhost
	switch m := m.(type) {
	case *wire.ChannelClose:
		ch.shutdown()
		c.dropChannel(ch)
		ch.send(&wire.ChannelCloseOk{})
	case *wire.ChannelCloseOk:
		// a close-ok for a close we did not send: ignore
	case *wire.ChannelOpen:
		return connectionError(wire.ChannelError, "second 'channel.open' seen")
	case *wire.ChannelFlow:
		if !m.Active {
			return connectionError(wire.NotImplemented, "active=false")
		}
		ch.send(&wire.ChannelFlowOk{Active: true})
	case *wire.ChannelFlowOk:
	case *wire.AccessRequest:
		ch.send(&wire.AccessRequestOk{Reserved1: 1})

	case *wire.ExchangeDeclare:
		if !m.Passive {
			if err := c.permitted(configure, "exchange", m.Exchange); err != nil {
				return err
			}
		}
		if err := c.s.exchangeDeclare(vh, m); err != nil {
			return err
		}
		if !m.NoWait {
			if err := ch.sendDurable(&wire.ExchangeDeclareOk{}); err != nil {
				return err
			}
		}
	case *wire.ExchangeDelete:
		if err := c.permitted(configure, "exchange", m.Exchange); err != nil {
			return err
		}
		if err := c.s.exchangeDelete(vh, m.Exchange, m.IfUnused); err != nil {
			return err
		}
		if !m.NoWait {
			if err := ch.sendDurable(&wire.ExchangeDeleteOk{}); err != nil {
				return err
			}
		}
	case *wire.ExchangeBind:
		if err := c.bindPermitted("exchange", m.Destination, m.Source); err != nil {
			return err
		}
		if err := c.s.bind(c, vh, m.Source, m.Destination, true, m.RoutingKey, m.Arguments, false); err != nil {
			return err
		}
		if !m.NoWait {
			if err := ch.sendDurable(&wire.ExchangeBindOk{}); err != nil {
				return err
			}
		}
	case *wire.ExchangeUnbind:
		if err := c.bindPermitted("exchange", m.Destination, m.Source); err != nil {
			return err
		}
		if err := c.s.bind(c, vh, m.Source, m.Destination, true, m.RoutingKey, m.Arguments, true); err != nil {
			return err
		}
		if !m.NoWait {
			if err := ch.sendDurable(&wire.ExchangeUnbindOk{}); err != nil {
				return err
			}
		}

	case *wire.QueueDeclare:
		if !m.Passive && m.Queue != "" {
			if err := c.permitted(configure, "queue", m.Queue); err != nil {
				return err
			}
		}
		name, msgs, consumers, err := c.s.queueDeclare(c, vh, m)
		if err != nil {
			return err
		}
		ch.lastQueue = name
		if !m.NoWait {
			if err := ch.sendDurable(&wire.QueueDeclareOk{Queue: name, MessageCount: msgs, ConsumerCount: consumers}); err != nil {
				return err
			}
		}
	case *wire.QueueBind:
		q, err := ch.queueName(m.Queue)
		if err != nil {
			return err
		}
		if err := c.bindPermitted("queue", q, m.Exchange); err != nil {
			return err
		}
		if err := c.s.bind(c, vh, m.Exchange, q, false, ch.routingKey(m.RoutingKey, m.Queue), m.Arguments, false); err != nil {
			return err
		}
		if !m.NoWait {
			if err := ch.sendDurable(&wire.QueueBindOk{}); err != nil {
				return err
			}
		}
	case *wire.QueueUnbind:
		q, err := ch.queueName(m.Queue)
		if err != nil {
			return err
		}
		if err := c.bindPermitted("queue", q, m.Exchange); err != nil {
			return err
		}
		if err := c.s.bind(c, vh, m.Exchange, q, false, ch.routingKey(m.RoutingKey, m.Queue), m.Arguments, true); err != nil {
			return err
		}
		if err := ch.sendDurable(&wire.QueueUnbindOk{}); err != nil {
			return err
		}
	case *wire.QueuePurge:
		q, err := ch.queueName(m.Queue)
		if err != nil {
			return err
		}
		if err := c.permitted(read, "queue", q); err != nil {
			return err
		}
		n, err := c.s.queuePurge(c, vh, q)
		if err != nil {
			return err
		}
		if !m.NoWait {
			if err := ch.sendDurable(&wire.QueuePurgeOk{MessageCount: n}); err != nil {
				return err
			}
		}
	case *wire.QueueDelete:
		q, err := ch.queueName(m.Queue)
		if err != nil {
			return err
		}
		if err := c.permitted(configure, "queue", q); err != nil {
			return err
		}
		n, err := c.s.queueDelete(c, vh, q, m.IfUnused, m.IfEmpty)
		if err != nil {
			return err
		}
		if !m.NoWait {
			if err := ch.sendDurable(&wire.QueueDeleteOk{MessageCount: n}); err != nil {
				return err
			}
		}

	case *wire.BasicQos:
		return ch.qos(m)
	case *wire.BasicConsume:
		return ch.consume(m)
	case *wire.BasicCancel:
		ch.cancel(m.ConsumerTag)
		if !m.NoWait {
			ch.send(&wire.BasicCancelOk{ConsumerTag: m.ConsumerTag})
		}
	case *wire.BasicGet:
		return ch.get(m)
	case *wire.BasicAck:
		return ch.settle(m.DeliveryTag, m.Multiple, settleAck)
	case *wire.BasicNack:
		if m.Requeue {
			return ch.settle(m.DeliveryTag, m.Multiple, settleRequeue)
		}
		return ch.settle(m.DeliveryTag, m.Multiple, settleReject)
	case *wire.BasicReject:
		if m.Requeue {
			return ch.settle(m.DeliveryTag, false, settleRequeue)
		}
		return ch.settle(m.DeliveryTag, false, settleReject)
	case *wire.BasicRecoverAsync:
		return ch.recover(m.Requeue)
	case *wire.BasicRecover:
		if err := ch.recover(m.Requeue); err != nil {
			return err
		}
		ch.send(&wire.BasicRecoverOk{})

	case *wire.ConfirmSelect:
		if ch.tx != nil {
			return channelError(wire.PreconditionFailed, "cannot switch from tx to confirm mode")
		}
		if ch.confirm == nil {
			ch.confirm = newConfirmer(ch)
			ch.confirmMode.Store(true)
		}
		if !m.NoWait {
			ch.send(&wire.ConfirmSelectOk{})
		}
	case *wire.TxSelect:
		if ch.confirm != nil {
			return channelError(wire.PreconditionFailed, "cannot switch from confirm to tx mode")
		}
		if ch.tx == nil {
			ch.tx = &txState{}
			ch.txMode.Store(true)
		}
		ch.send(&wire.TxSelectOk{})
	case *wire.TxCommit:
		if ch.tx == nil {
			return channelError(wire.PreconditionFailed, "channel is not transactional")
		}
		if err := ch.commit(); err != nil {
			return err
		}
		ch.send(&wire.TxCommitOk{})
	case *wire.TxRollback:
		if ch.tx == nil {
			return channelError(wire.PreconditionFailed, "channel is not transactional")
		}
		ch.tx.reset()
		ch.send(&wire.TxRollbackOk{})
	default:
		cls, mid := m.ClassMethod()
		return &amqpError{code: wire.CommandInvalid, conn: true, classID: cls, methodID: mid,
			text: "COMMAND_INVALID - unexpected method " + wire.MethodName(cls, mid)}
	}
	return nil
}

// queueName expands the "" shortcut: the channel's most recently declared
// queue.
func (ch *channel) queueName(name string) (string, error) {
	if name != "" {
		return name, nil
	}
	if ch.lastQueue == "" {
		return "", channelError(wire.NotFound, "no previously declared queue")
	}
	return ch.lastQueue, nil
}

// routingKey expands queue.bind's shortcut: with the queue name "" and
// routing key "", the key is the last declared queue's name.
func (ch *channel) routingKey(key, queue string) string {
	if key == "" && queue == "" {
		return ch.lastQueue
	}
	return key
}

// shutdown ends the channel: its consumers are cancelled, its unacked
// messages requeued in order (RB-6) and its confirmer stopped.
func (ch *channel) shutdown() {
	ch.active.Store(false)
	ch.mu.Lock()
	if ch.closed {
		ch.mu.Unlock()
		return
	}
	ch.closed = true
	consumers := ch.consumers
	ch.consumers = map[string]*consumer{}
	pending := ch.pending[ch.head:]
	ch.pending, ch.head = nil, 0
	ch.mu.Unlock()
	for _, cs := range consumers {
		ch.dropConsumer(cs)
	}
	now := ch.c.s.now()
	for _, d := range pending {
		if !d.settled {
			d.q.giveBack(now, d.seq, d.count)
		}
	}
	if ch.confirm != nil {
		ch.confirm.stop()
	}
	ch.pub = nil
}
