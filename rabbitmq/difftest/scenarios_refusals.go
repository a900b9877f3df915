package difftest

import (
	amqp "github.com/rabbitmq/amqp091-go"
)

// The refusal scenarios pin more of RabbitMQ's channel and connection
// errors: what a channel in one mode may not do, what no one may do to the
// default and amq.* exchanges, and publishes the broker refuses.

func refusalScenarios() []Scenario {
	return []Scenario{
		{Name: "TxCommitWithoutSelect", Run: txCommitWithoutSelect},
		{Name: "TxAndConfirmModesExclude", Run: txAndConfirmModesExclude},
		{Name: "DefaultExchangeRefusals", Run: defaultExchangeRefusals},
		{Name: "DeleteSystemExchangeRefused", Run: deleteSystemExchangeRefused},
		{Name: "PublishToInternalExchangeRefused", Run: publishToInternalExchangeRefused},
		{Name: "PublishWrongUserIDRefused", Run: publishWrongUserIDRefused},
		{Name: "QueueShortcutWithoutDeclare", Run: queueShortcutWithoutDeclare},
		{Name: "RecoverWithoutRequeueRefused", Run: recoverWithoutRequeueRefused},
		{Name: "PublishOverMaxMessageSizeRefused", Run: publishOverMaxMessageSizeRefused},
	}
}

// txCommitWithoutSelect pins tx.commit and tx.rollback on a channel that is
// not transactional: 406 PRECONDITION_FAILED - channel is not transactional.
func txCommitWithoutSelect(s *S) {
	ch := s.Ch()
	ch.result("tx.commit", ch.ch.TxCommit(), "ok")
	ch = s.Ch()
	ch.result("tx.rollback", ch.ch.TxRollback(), "ok")
}

// txAndConfirmModesExclude pins that a channel is transactional or in
// confirm mode, not both: 406 PRECONDITION_FAILED either way.
func txAndConfirmModesExclude(s *S) {
	ch := s.Ch()
	ch.result("tx.select", ch.ch.Tx(), "ok")
	ch.result("confirm.select", ch.ch.Confirm(false), "ok")
	ch = s.Ch()
	ch.result("confirm.select", ch.ch.Confirm(false), "ok")
	ch.result("tx.select", ch.ch.Tx(), "ok")
}

// defaultExchangeRefusals pins what no one may do to the default exchange:
// bind to it, declare it (passive too): 403 ACCESS_REFUSED - operation not
// permitted on the default exchange; deleting it is refused too.
func defaultExchangeRefusals(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.result(`queue.bind to ""`, ch.ch.QueueBind(q, q, "", false, nil), "ok")
	ch = s.Ch()
	ch.result(`exchange.declare ""`, ch.ch.ExchangeDeclare("", "direct", true, false, false, false, nil), "ok")
	ch = s.Ch()
	ch.result(`exchange.declare passive ""`, ch.ch.ExchangeDeclarePassive("", "direct", true, false, false, false, nil), "ok")
	ch = s.Ch()
	ch.result(`exchange.delete ""`, ch.ch.ExchangeDelete("", false, false), "ok")
}

// deleteSystemExchangeRefused pins exchange.delete of an amq.* exchange:
// 403 ACCESS_REFUSED - deletion of system exchange 'amq.direct' in vhost
// '/' not allowed.
func deleteSystemExchangeRefused(s *S) {
	ch := s.Ch()
	ch.result("exchange.delete amq.direct", ch.ch.ExchangeDelete("amq.direct", false, false), "ok")
	s.Ch().PassiveExchange("amq.direct", "direct")
}

// publishToInternalExchangeRefused pins a publish to an internal exchange:
// 403 ACCESS_REFUSED - cannot publish to internal exchange.
func publishToInternalExchangeRefused(s *S) {
	x := s.Exchange("x")
	ch := s.Ch()
	ch.DeclareExchange(x, "fanout", XOpts{Internal: true})
	ch.Publish(x, "", Msg{Body: "m1"})
}

// publishWrongUserIDRefused pins a publish whose user-id property is not
// the connection's user: 406 PRECONDITION_FAILED - user_id property set
// to 'nobody' but authenticated user was 'guest'.
func publishWrongUserIDRefused(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, nil)
	ch.async(`basic.publish user-id="guest"`, func() error {
		return ch.ch.Publish("", q, false, false, amqp.Publishing{Body: []byte("m1"), UserId: "guest"})
	})
	ch.async(`basic.publish user-id="nobody"`, func() error {
		return ch.ch.Publish("", q, false, false, amqp.Publishing{Body: []byte("m2"), UserId: "nobody"})
	})
	s.Count(q)
}

// queueShortcutWithoutDeclare pins the empty queue name on a channel that
// has declared no queue: 404 NOT_FOUND - no previously declared queue.
func queueShortcutWithoutDeclare(s *S) {
	ch := s.Ch()
	_, err := ch.ch.QueuePurge("", false)
	ch.result(`queue.purge ""`, err, "ok")
	ch = s.Ch()
	_, err = ch.ch.QueueDelete("", false, false, false)
	ch.result(`queue.delete ""`, err, "ok")
}

// recoverWithoutRequeueRefused pins basic.recover with requeue=false, which
// RabbitMQ does not implement: 540 NOT_IMPLEMENTED for the connection.
func recoverWithoutRequeueRefused(s *S) {
	ch := s.Ch()
	ch.result("basic.recover requeue=true", ch.ch.Recover(true), "ok")
	ch.result("basic.recover requeue=false", ch.ch.Recover(false), "ok")
}

// publishOverMaxMessageSizeRefused pins a message one octet over the
// default max_message_size (128 MiB): 406 PRECONDITION_FAILED - message
// size 134217729 is larger than configured max size 134217728, the real
// size (issue 16.7). The connection and its other channels stay open.
func publishOverMaxMessageSizeRefused(s *S) {
	q := s.Queue("q")
	other := s.Ch()
	other.Queue(q, nil)
	ch := s.Ch()
	ch.Publish("", q, Msg{Size: 128<<20 + 1})
	other.Publish("", q, Msg{Body: "m1"})
	s.Count(q)
}
