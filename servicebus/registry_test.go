package servicebus_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/hooktest"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Issue 25.5: the front-end's record of a queue, topic or subscription is
// a cache of the engine's entity. Once the engine has deleted one for
// being idle (SB-10), no client is served by its record, even while the
// Deleted hook that forgets it is still to run: the administration API
// does not list or return it, a link to it is refused with
// amqp:not-found, and a topic's message is not copied to it.
//
// rule: SB-10
func TestIssue25_5_AnEntityTheEngineDeletedIsNotServedBeforeItsHookRuns_SB10(t *testing.T) {
	gate := hooktest.HoldDeleted(t)
	f := newFixtureWithHooks(t, core.NewMemStore(), t0, nil, gate.Wrap)
	idle := 5 * time.Minute
	f.MustQueue("q", func(p *atom.QueueProperties) { p.AutoDeleteOnIdle = idle })
	f.MustQueue("keep", nil)
	f.MustTopic("t", nil, "live")
	f.MustSubscription("t", "s", func(p *atom.SubscriptionProperties) { p.AutoDeleteOnIdle = idle })
	now, err := f.clock.Advance(6 * time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	f.e.Advance(now) // the engine deletes q and t/s; their hooks wait

	ac := f.MustAdmin("SAS_KEY_VALUE")
	if q, err := ac.GetQueue(ctx(t), "q", nil); err != nil || q != nil {
		t.Errorf("GetQueue of a queue the engine deleted: %+v, %v; want nil, nil", q, err)
	}
	if s, err := ac.GetSubscription(ctx(t), "t", "s", nil); err != nil || s != nil {
		t.Errorf("GetSubscription of a subscription the engine deleted: %+v, %v; want nil, nil", s, err)
	}
	var queues, subs []string
	qp := ac.NewListQueuesPager(nil)
	for qp.More() {
		page, err := qp.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range page.Queues {
			queues = append(queues, q.QueueName)
		}
	}
	sp := ac.NewListSubscriptionsPager("t", nil)
	for sp.More() {
		page, err := sp.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Subscriptions {
			subs = append(subs, s.SubscriptionName)
		}
	}
	if !slices.Equal(queues, []string{"keep"}) || !slices.Equal(subs, []string{"live"}) {
		t.Errorf("listed queues %v, subscriptions of t %v; want [keep], [live]", queues, subs)
	}
	if rt, err := ac.GetTopicRuntimeProperties(ctx(t), "t", nil); err != nil || rt.SubscriptionCount != 1 {
		t.Errorf("topic t's runtime properties: %+v, %v; want 1 subscription", rt, err)
	}

	ss := MustSession(t, f.MustDialAMQP(t, "q", "t", "t/Subscriptions/s"))
	if _, err := ss.NewSender(ctx(t), "q", nil); remoteErr(err) != amqp.ErrCondNotFound {
		t.Errorf("attaching a sender to a queue the engine deleted: %v, want %s", err, amqp.ErrCondNotFound)
	}
	if _, err := ss.NewReceiver(ctx(t), "q", peekLock()); remoteErr(err) != amqp.ErrCondNotFound {
		t.Errorf("attaching a receiver to a queue the engine deleted: %v, want %s", err, amqp.ErrCondNotFound)
	}
	if _, err := ss.NewReceiver(ctx(t), "t/Subscriptions/s", peekLock()); remoteErr(err) != amqp.ErrCondNotFound {
		t.Errorf("attaching a receiver to a subscription the engine deleted: %v, want %s", err, amqp.ErrCondNotFound)
	}
	MustSend(t, MustSender(t, ss, "t"), &amqp.Message{Data: [][]byte{[]byte("one copy")}})
	if rt, err := ac.GetSubscriptionRuntimeProperties(ctx(t), "t", "live", nil); err != nil || rt.ActiveMessageCount != 1 {
		t.Errorf("subscription live: %+v, %v; want 1 message", rt, err)
	}

	// Once the hooks have run, the names are free.
	gate.Open()
	if err := f.e.WaitHooks(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.MustQueue("q", nil)
	f.MustSubscription("t", "s", nil)
}
