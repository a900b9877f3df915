package rabbitmq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/hooktest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Issue 25.5: the topology's record of a queue is a cache of the engine's
// entity. Once the engine has deleted a queue (x-expires, RB-8), no client
// is served by its record, even while the Deleted hook that unlinks it is
// still to run: a consume, get, bind or passive declare is a 404, and a
// message routed by name or by its old binding is unroutable, as on
// RabbitMQ, where the queue is gone.
//
// rule: RB-8
func TestIssue25_5_AQueueTheEngineDeletedIsNotServedBeforeItsHookRuns_RB8(t *testing.T) {
	gate := hooktest.HoldDeleted(t)
	f := mustServerWithHooks(t, core.NewMemStore(), t0, gate.Wrap)
	ch := f.MustChannel()
	MustDeclare(t, ch, "gone", amqp.Table{"x-expires": int32(1000)})
	if err := ch.QueueBind("gone", "k", "amq.direct", false, nil); err != nil {
		t.Fatal(err)
	}
	now, err := f.clock.Advance(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f.e.Advance(now) // the engine deletes "gone"; its hook waits

	notFound := func(what string, err error) {
		t.Helper()
		var ae *amqp.Error
		if !errors.As(err, &ae) || ae.Code != amqp.NotFound {
			t.Errorf("%s of a queue the engine deleted: %v, want 404 NOT_FOUND", what, err)
		}
	}
	_, err = f.MustChannel().QueueDeclarePassive("gone", false, false, false, false, nil)
	notFound("queue.declare passive", err)
	_, err = f.MustChannel().Consume("gone", "", false, false, false, false, nil)
	notFound("basic.consume", err)
	_, _, err = f.MustChannel().Get("gone", false)
	notFound("basic.get", err)
	err = f.MustChannel().QueueBind("gone", "k2", "amq.direct", false, nil)
	notFound("queue.bind", err)

	// Published with mandatory, by name and through the old binding: both
	// come back unroutable.
	pub := f.MustChannel()
	returns := pub.NotifyReturn(make(chan amqp.Return, 2))
	for _, to := range [][2]string{{"", "gone"}, {"amq.direct", "k"}} {
		if err := pub.PublishWithContext(context.Background(), to[0], to[1], true, false, amqp.Publishing{Body: []byte(to[1])}); err != nil {
			t.Fatal(err)
		}
	}
	sync(t, pub)
	for i := 0; i < 2; i++ {
		select {
		case r := <-returns:
			if r.ReplyCode != amqp.NoRoute {
				t.Errorf("return %d: %d %s", i, r.ReplyCode, r.ReplyText)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("publish %d to the deleted queue was not returned", i)
		}
	}

	// Once the hook has run, the name is free and the old binding gone.
	gate.Open()
	if err := f.e.WaitHooks(context.Background()); err != nil {
		t.Fatal(err)
	}
	ch = f.MustChannel()
	MustDeclare(t, ch, "gone", nil)
	MustPublish(t, ch, "amq.direct", "k", amqp.Publishing{Body: []byte("old binding")})
	if n := count(t, ch, "gone"); n != 0 {
		t.Fatalf("the old queue's binding routed %d message(s) to the new one", n)
	}
}
