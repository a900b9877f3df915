package difftest

import (
	"time"

	"github.com/lapse-emulator/lapse/rabbitmq/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The raw scenarios drive a connection frame by frame (Raw): what a client
// sends while the broker closes a channel, and the order of the fields of
// x-death entries, which amqp091-go's maps hide.

func rawScenarios() []Scenario {
	return []Scenario{
		{Name: "CrossingChannelCloseKeepsConnection", Run: crossingChannelCloseKeepsConnection},
		{Name: "CloseAfterCloseOkIsAChannelError", Run: closeAfterCloseOkIsAChannelError},
		{Name: "OversizedFrameClosesConnection", Run: oversizedFrameClosesConnection},
		{Name: "QueueDeleteOkBeforeItsConsumersCancel", Run: queueDeleteOkBeforeItsConsumersCancel},
		{Name: "TxCommitDeliversBeforeItsCommitOk", Run: txCommitDeliversBeforeItsCommitOk},
		{Name: "RecoverOkBeforeItsRedeliveries", Run: recoverOkBeforeItsRedeliveries},
		{Name: "RB12XDeathFieldOrderAfterSecondDeath", Rules: []string{"RB-12"}, Run: rb12XDeathFieldOrderAfterSecondDeath},
		{Name: "RB12XDeathFieldOrderAfterThirdDeath", Rules: []string{"RB-12"}, Run: rb12XDeathFieldOrderAfterThirdDeath},
		{Name: "RB12XDeathFieldOrderAfterRepeatDeath", Rules: []string{"RB-12"}, Run: rb12XDeathFieldOrderAfterRepeatDeath},
	}
}

// rawOpen opens channels on r, recording each open-ok.
func rawOpen(r *Raw, ids ...uint16) {
	for _, id := range ids {
		r.Send(id, &wire.ChannelOpen{})
		r.Recv(1)
	}
}

// crossingChannelCloseKeepsConnection pins a client's channel.close that
// crosses the broker's (issue 13.6): a publish to a missing exchange and
// the client's close in one write. The broker answers the client's close
// with close-ok, drops what else comes on the channel until the client's
// close-ok, and keeps the connection and its other channels.
func crossingChannelCloseKeepsConnection(s *S) {
	q, missing := s.Queue("q"), s.Name("missing")
	r := s.Raw()
	rawOpen(r, 1, 2)
	r.Send(1, &wire.BasicPublish{Exchange: missing, RoutingKey: "k"}, Content{Body: "m1"},
		&wire.ChannelClose{ReplyCode: 200, ReplyText: "bye"}, &wire.QueueDeclare{Queue: q})
	r.Recv(2)
	r.Send(1, &wire.QueueDeclare{Queue: q})
	r.Quiet()
	r.Send(1, &wire.ChannelCloseOk{})
	// Neither declare was run: the queue does not exist.
	r.Send(2, &wire.QueueDeclare{Queue: q, Passive: true})
	r.Recv(1)
	r.Send(2, &wire.ChannelCloseOk{})
	// The closed number opens again.
	rawOpen(r, 1)
	r.Send(1, &wire.QueueDeclare{Queue: q})
	r.Recv(1)
	r.Close()
}

// closeAfterCloseOkIsAChannelError pins the other order of the race that
// crossingChannelCloseKeepsConnection pins one side of: the client answers
// the broker's channel.close with close-ok first and sends its own
// channel.close after it. The channel is gone by then, so the broker takes
// the close as the first frame of a new channel and closes the connection
// with 504 "expected 'channel.open'". amqp091-go's Channel.Close right after
// a publish to a missing exchange can send its frames in this order (its
// reader answers the broker's close while Close is sending its own), so
// such a program loses its connection now and then on either broker; the
// faster the broker answers, the more often.
func closeAfterCloseOkIsAChannelError(s *S) {
	missing := s.Name("missing")
	r := s.Raw()
	rawOpen(r, 1)
	r.Send(1, &wire.BasicPublish{Exchange: missing, RoutingKey: "k"}, Content{Body: "m1"})
	r.Recv(1)
	r.Send(1, &wire.ChannelCloseOk{}, &wire.ChannelClose{ReplyCode: 200, ReplyText: "bye"})
	r.Recv(1)
	r.Send(0, &wire.ConnectionCloseOk{})
}

// queueDeleteOkBeforeItsConsumersCancel pins the order of what a channel
// gets when it deletes a queue it consumes from, its client having asked for
// basic.cancel from the broker (consumer_cancel_notify): queue.delete-ok
// first, then the basic.cancel of its consumer. RabbitMQ's channel learns of
// the cancel only once the delete it is running is answered. py-amqp, and
// so kombu, raises ConsumerCancelled out of queue_delete when the cancel
// comes first (kombu's own test_ack_from_another_thread does this).
func queueDeleteOkBeforeItsConsumersCancel(s *S) {
	q := s.Queue("q")
	r := s.Raw()
	rawOpen(r, 1)
	r.Send(1, &wire.QueueDeclare{Queue: q})
	r.Recv(1)
	r.Send(1, &wire.BasicConsume{Queue: q, ConsumerTag: "c1"})
	r.Recv(1)
	r.Send(1, &wire.QueueDelete{Queue: q})
	r.Recv(2)
	r.Close()
}

// txCommitDeliversBeforeItsCommitOk pins that a channel that publishes in a
// transaction to a queue it consumes from gets the deliveries of what it
// committed before the tx.commit-ok. RabbitMQ's channel sends what its
// queues hand it once it has answered the method it runs, and answers a
// commit only once its queues have taken the messages, which they deliver
// meanwhile: the exception to the order of recoverOkBeforeItsRedeliveries.
func txCommitDeliversBeforeItsCommitOk(s *S) {
	q := s.Queue("q")
	r := s.Raw()
	rawOpen(r, 1)
	r.Send(1, &wire.QueueDeclare{Queue: q})
	r.Recv(1)
	r.Send(1, &wire.TxSelect{})
	r.Recv(1)
	r.Send(1, &wire.BasicConsume{Queue: q, ConsumerTag: "c1", NoAck: true})
	r.Recv(1)
	r.Send(1, &wire.BasicPublish{RoutingKey: q}, Content{Body: "m1"},
		&wire.BasicPublish{RoutingKey: q}, Content{Body: "m2"}, &wire.TxCommit{})
	r.Recv(3)
	r.Close()
}

// recoverOkBeforeItsRedeliveries pins that a basic.recover is answered
// before the redeliveries of the unacked messages it gives back: RabbitMQ's
// channel sends what its queues hand it only once it has answered the
// method it runs (as queueDeleteOkBeforeItsConsumersCancel for cancels).
func recoverOkBeforeItsRedeliveries(s *S) {
	q := s.Queue("q")
	r := s.Raw()
	rawOpen(r, 1)
	r.Send(1, &wire.QueueDeclare{Queue: q})
	r.Recv(1)
	r.Send(1, &wire.BasicConsume{Queue: q, ConsumerTag: "c1"})
	r.Recv(1)
	r.Send(1, &wire.BasicPublish{RoutingKey: q}, Content{Body: "m1"},
		&wire.BasicPublish{RoutingKey: q}, Content{Body: "m2"})
	r.Recv(2)
	r.Send(1, &wire.BasicRecover{Requeue: true})
	r.Recv(3)
	r.Close()
}

// oversizedFrameClosesConnection pins a frame over the negotiated
// frame-max (131072), judged from its header: 501 FRAME_ERROR - type 3, all
// octets = <<>>: {frame_too_large,2147483647,131064} (issue 16.8). The
// limit counts the payload only: RabbitMQ tolerates the frame's 8 octets of
// overhead, so 131073 is the first size refused.
func oversizedFrameClosesConnection(s *S) {
	r := s.Raw()
	rawOpen(r, 1)
	r.SendHeader(wire.FrameBody, 1, 0x7fffffff)
	r.Recv(1)
	r.Send(0, &wire.ConnectionCloseOk{})
	r = s.Raw()
	r.SendHeader(wire.FrameMethod, 0, 131073)
	r.Recv(1)
	r.Send(0, &wire.ConnectionCloseOk{})
}

// xDeathChain declares queues that expire into each other, the last into a
// fanout dead-letter exchange, and returns the first queue and the
// dead-letter queue.
func xDeathChain(s *S, ch *Ch, n int) (first, dlq string) {
	dlx, dlq := fanoutDLX(s, ch)
	next := ""
	for i := n; i >= 1; i-- {
		q := s.Queue("q" + string(rune('0'+i)))
		args := amqp.Table{"x-message-ttl": int32(100), "x-dead-letter-exchange": dlx}
		if next != "" {
			args = deadLetterTo(next, amqp.Table{"x-message-ttl": int32(100)})
		}
		ch.Queue(q, args)
		next = q
	}
	return next, dlq
}

// rawGet records a no-ack basic.get of queue on a new raw connection, the
// fields of every table in the order they came in.
func rawGet(s *S, queue string) {
	r := s.Raw()
	rawOpen(r, 1)
	r.Send(1, &wire.BasicGet{Queue: queue, NoAck: true})
	r.Recv(1)
	r.Close()
}

// rb12XDeathFieldOrderAfterSecondDeath pins RB-12's field order (issue
// 13.8): the first death writes its x-death entry in RabbitMQ's order
// (count, reason, queue, time, exchange, routing-keys,
// original-expiration); a death in another queue adds an entry with its
// fields sorted by name and leaves the first entry's order as it was.
func rb12XDeathFieldOrderAfterSecondDeath(s *S) {
	ch := s.Ch()
	first, dlq := xDeathChain(s, ch, 2)
	ch.Publish("", first, Msg{Body: "m1", Expiration: "100"})
	s.Wait(800 * time.Millisecond)
	rawGet(s, dlq)
}

// rb12XDeathFieldOrderAfterThirdDeath pins RB-12's field order (issue
// 13.8) with two entries there before a third death.
func rb12XDeathFieldOrderAfterThirdDeath(s *S) {
	ch := s.Ch()
	first, dlq := xDeathChain(s, ch, 3)
	ch.Publish("", first, Msg{Body: "m1", Expiration: "100"})
	s.Wait(1200 * time.Millisecond)
	rawGet(s, dlq)
}

// rb12XDeathFieldOrderAfterRepeatDeath pins RB-12's field order (issue
// 13.8) when a death updates an entry: rejected twice in a queue that
// dead-letters to itself, the updated entry has its fields sorted.
func rb12XDeathFieldOrderAfterRepeatDeath(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, deadLetterTo(q, nil))
	ch.Publish("", q, Msg{Body: "m1", Expiration: longTTL})
	for range 2 {
		d, _ := ch.GetManual(q)
		ch.Reject(d.DeliveryTag, false)
	}
	rawGet(s, q)
}
