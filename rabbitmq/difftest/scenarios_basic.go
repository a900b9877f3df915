package difftest

func basicScenarios() []Scenario {
	return []Scenario{
		{Name: "PublisherConfirms", Run: publisherConfirms},
		{Name: "BasicGetMessageCounts", Run: basicGetMessageCounts},
		{Name: "RedeliveredAfterRequeue", Run: redeliveredAfterRequeue},
		{Name: "BasicRecoverRequeues", Run: basicRecoverRequeues},
		{Name: "AckMultiple", Run: ackMultiple},
		{Name: "NackMultipleRequeue", Run: nackMultipleRequeue},
		{Name: "RejectWithoutDeadLetterDiscards", Run: rejectWithoutDeadLetterDiscards},
		{Name: "PurgeCounts", Run: purgeCounts},
		{Name: "QosPrefetchLimitsDeliveries", Run: qosPrefetchLimitsDeliveries},
		{Name: "ServerNamedQueue", Run: serverNamedQueue},
		{Name: "AutoDeleteQueueAfterLastConsumer", Run: autoDeleteQueueAfterLastConsumer},
		{Name: "ConsumerCancelledWhenQueueDeleted", Run: consumerCancelledWhenQueueDeleted},
		{Name: "TxCommitAndRollback", Run: txCommitAndRollback},
		{Name: "ChannelCloseRequeuesUnacked", Run: channelCloseRequeuesUnacked},
		{Name: "ConsumersRoundRobin", Run: consumersRoundRobin},
	}
}

// publisherConfirms pins publisher confirms: after confirm.select every
// publish is acked, delivery tags counting from 1, in order.
func publisherConfirms(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Confirm()
	for _, b := range []string{"m1", "m2", "m3", "m4", "m5"} {
		ch.PublishNoWait("", q, Msg{Body: b})
	}
	ch.WaitConfirms(5)
	ch.Publish("", q, Msg{Body: "m6"})
	s.Count(q)
}

// basicGetMessageCounts pins basic.get: get-ok carries the count of messages
// left, get-empty when there is none; unacked messages do not count.
func basicGetMessageCounts(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Get(q)
	for _, b := range []string{"m1", "m2", "m3"} {
		ch.Publish("", q, Msg{Body: b})
	}
	ch.GetManual(q)
	s.Count(q)
	ch.Get(q)
	ch.Get(q)
	ch.Get(q)
	s.Count(q)
}

// redeliveredAfterRequeue pins the redelivered flag: false on first delivery,
// true after a nack or reject with requeue; the message keeps its place at
// the head.
func redeliveredAfterRequeue(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	ch.Publish("", q, Msg{Body: "m2"})
	d, _ := ch.GetManual(q)
	ch.Nack(d.DeliveryTag, false, true)
	d, _ = ch.GetManual(q)
	ch.Reject(d.DeliveryTag, true)
	ch.GetAll(q)
}

// basicRecoverRequeues pins basic.recover with requeue: every unacked message
// of the channel goes back and is redelivered, flagged.
func basicRecoverRequeues(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	ch.Publish("", q, Msg{Body: "m2"})
	c := ch.Consume(q, "c1", COpts{})
	c.Next()
	c.Next()
	ch.Recover(true)
	c.Next()
	d, _ := c.Next()
	ch.Ack(d.DeliveryTag, true)
	c.None()
	s.Count(q)
}

// ackMultiple pins basic.ack multiple: it acks every delivery up to the tag.
func ackMultiple(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	for _, b := range []string{"m1", "m2", "m3"} {
		ch.Publish("", q, Msg{Body: b})
	}
	ch.GetManual(q)
	d, _ := ch.GetManual(q)
	ch.GetManual(q)
	ch.Ack(d.DeliveryTag, true)
	ch.Close()
	s.Count(q)
	s.Ch().GetAll(q)
}

// nackMultipleRequeue pins basic.nack multiple with requeue: every delivery up
// to the tag goes back, in the original order, flagged redelivered.
func nackMultipleRequeue(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	for _, b := range []string{"m1", "m2", "m3"} {
		ch.Publish("", q, Msg{Body: b})
	}
	ch.GetManual(q)
	d, _ := ch.GetManual(q)
	ch.Nack(d.DeliveryTag, true, true)
	ch.GetAll(q)
}

// rejectWithoutDeadLetterDiscards pins basic.reject without requeue on a queue
// without a dead-letter exchange: the message is gone.
func rejectWithoutDeadLetterDiscards(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Publish("", q, Msg{Body: "m1"})
	d, _ := ch.GetManual(q)
	ch.Reject(d.DeliveryTag, false)
	s.Count(q)
	ch.Get(q)
}

// purgeCounts pins queue.purge: it reports and removes the ready messages,
// not the unacked ones, which come back when their channel closes.
func purgeCounts(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	for _, b := range []string{"m1", "m2", "m3"} {
		ch.Publish("", q, Msg{Body: b})
	}
	taker := s.Ch()
	taker.GetManual(q)
	ch.Purge(q)
	ch.Purge(q)
	taker.Close()
	s.Count(q)
}

// qosPrefetchLimitsDeliveries pins basic.qos prefetch: a consumer gets at most
// that many unacked deliveries; an ack lets the next one through.
func qosPrefetchLimitsDeliveries(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	for _, b := range []string{"m1", "m2", "m3"} {
		ch.Publish("", q, Msg{Body: b})
	}
	ch.Qos(2)
	c := ch.Consume(q, "c1", COpts{})
	c.Next()
	d, _ := c.Next()
	c.None()
	s.Count(q)
	ch.Ack(d.DeliveryTag, false)
	c.Next()
	c.None()
}

// serverNamedQueue pins queue.declare with an empty name: the broker names the
// queue amq.gen-..., and the empty name then means the last declared queue on
// the channel.
func serverNamedQueue(s *S) {
	ch := s.Ch()
	name, ok := ch.Declare("", QOpts{Exclusive: true})
	if !ok {
		return
	}
	ch.Publish("", name, Msg{Body: "m1"})
	ch.Get(name)
	ch.Publish("", name, Msg{Body: "m2"})
	ch.Get("")
	second, _ := ch.Declare("", QOpts{Exclusive: true})
	s.Count(second)
}

// autoDeleteQueueAfterLastConsumer pins auto-delete: the queue goes when its
// last consumer cancels, not before; a queue that never had one stays.
func autoDeleteQueueAfterLastConsumer(s *S) {
	q, never := s.Queue("q"), s.Queue("never")
	ch := s.Ch()
	ch.Declare(q, QOpts{AutoDelete: true})
	ch.Declare(never, QOpts{AutoDelete: true})
	c1 := ch.Consume(q, "c1", COpts{})
	c2 := ch.Consume(q, "c2", COpts{})
	c1.Cancel()
	s.Count(q)
	c2.Cancel()
	s.Count(q)
	s.Count(never)
}

// consumerCancelledWhenQueueDeleted pins the consumer cancel notification:
// deleting a queue sends basic.cancel to its consumers on other channels.
func consumerCancelledWhenQueueDeleted(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	consumerCh := s.Ch()
	c := consumerCh.Consume(q, "c1", COpts{})
	ch.DeleteQueue(q, false, false)
	consumerCh.ExpectCancel()
	c.Next()
	consumerCh.Qos(1)
}

// txCommitAndRollback pins transactions: publishes and acks take effect at
// tx.commit and are dropped by tx.rollback.
func txCommitAndRollback(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.Tx()
	ch.Publish("", q, Msg{Body: "rolled back"})
	s.Count(q)
	ch.Rollback()
	s.Count(q)
	ch.Publish("", q, Msg{Body: "committed"})
	ch.Commit()
	s.Count(q)
	d, _ := ch.GetManual(q)
	ch.Ack(d.DeliveryTag, false)
	ch.Rollback()
	ch.Close()
	s.Count(q)
}

// channelCloseRequeuesUnacked pins that closing a channel requeues its
// unacked deliveries, in their original order, flagged redelivered.
func channelCloseRequeuesUnacked(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	for _, b := range []string{"m1", "m2", "m3"} {
		ch.Publish("", q, Msg{Body: b})
	}
	taker := s.Ch()
	c := taker.Consume(q, "c1", COpts{})
	c.Next()
	c.Next()
	c.Next()
	taker.Close()
	ch.GetAll(q)
}

// consumersRoundRobin pins delivery to several consumers: in turn, as they
// subscribed.
func consumersRoundRobin(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch1, ch2 := s.Ch(), s.Ch()
	c1 := ch1.Consume(q, "c1", COpts{AutoAck: true})
	c2 := ch2.Consume(q, "c2", COpts{AutoAck: true})
	for _, b := range []string{"m1", "m2", "m3", "m4"} {
		ch.Publish("", q, Msg{Body: b})
	}
	c1.Next()
	c1.Next()
	c2.Next()
	c2.Next()
}
