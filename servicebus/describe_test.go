package servicebus_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

func sbKey(name string) core.EntityKey { return core.EntityKey{Protocol: core.ServiceBus, Name: name} }

// MustOnlyItem returns the one item of entity name.
func (f *fixture) MustOnlyItem(name string) core.Item {
	f.tb.Helper()
	items, err := f.e.Items(f.clock.Now(), sbKey(name), 0)
	if err != nil || len(items) != 1 {
		f.tb.Fatalf("%s holds %d items (%v), want 1", name, len(items), err)
	}
	return items[0]
}

// setting returns the value of key in settings.
func setting(settings []core.Setting, key string) (string, bool) {
	for _, s := range settings {
		if s.Key == key {
			return s.Value, true
		}
	}
	return "", false
}

// A message that expired into the dead-letter queue is described with its
// properties as azservicebus shows them, TTLExpiredException and its
// queue; resubmitted, it is back on the queue as the sender sent it, and
// a receiver already waiting gets it with no dead-letter reason.
// rule: SB-8
func TestDescribeAndResubmitAnExpiredMessage_SB8(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("orders", func(p *atom.QueueProperties) {
		p.DeadLetteringOnMessageExpiration = true
		p.DefaultMessageTimeToLive = time.Hour
	})
	c := f.sb()
	m := msg("hello", time.Minute)
	m.MessageID = ptr("m-1")
	m.Subject = ptr("greeting")
	m.ContentType = ptr("text/plain")
	m.ApplicationProperties = map[string]any{"tenant": "acme", "n": int64(7)}
	c.send("orders", m)
	f.advance(2 * time.Minute)

	dl := f.MustOnlyItem("orders/$DeadLetterQueue")
	d := f.e.Describe(sbKey("orders/$DeadLetterQueue"), &dl)
	want := &core.DeadLetterInfo{Reason: "TTLExpiredException", Description: "The message expired and was dead lettered.", Source: "orders", Rule: "SB-8"}
	if diff := cmp.Diff(want, d.DeadLetter); diff != "" {
		t.Fatalf("dead letter (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{
		"MessageID": "m-1", "Subject": "greeting", "ContentType": "text/plain", "TimeToLive": "1m",
		"DeadLetterReason": "TTLExpiredException", "ApplicationProperties.tenant": "acme", "ApplicationProperties.n": "7",
	} {
		if got, ok := setting(d.Properties, k); !ok || got != v {
			t.Errorf("property %s = %q (%v), want %q; all: %v", k, got, ok, v, d.Properties)
		}
	}
	if string(d.Payload) != "hello" {
		t.Errorf("payload %q, want the body azservicebus sent", d.Payload)
	}
	if _, ok := setting(d.Properties, "ApplicationProperties.DeadLetterReason"); ok {
		t.Errorf("DeadLetterReason shown twice: %v", d.Properties)
	}
	// A live message is no dead letter, and cannot be resubmitted.
	c.send("orders", msg("live", 0))
	live := f.MustOnlyItem("orders")
	if d := f.e.Describe(sbKey("orders"), &live); d.DeadLetter != nil {
		t.Fatalf("a live message described as a dead letter: %+v", d.DeadLetter)
	}
	if _, _, err := f.e.Resubmit(f.clock.Now(), sbKey("orders"), live.Seq); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("resubmitting a live message: %v, want EINVALID", err)
	}
	r := c.receiver("orders", "", nil)
	if got := receive(t, r, 1); !slices.Equal(names(got), []string{"live"}) {
		t.Fatalf("received %v", names(got))
	} else if err := r.CompleteMessage(ctx(t), got[0], nil); err != nil {
		t.Fatal(err)
	}

	got := make(chan []*azservicebus.ReceivedMessage, 1)
	go func() {
		msgs, _ := r.ReceiveMessages(ctx(t), 1, nil)
		got <- msgs
	}()
	to, commit, err := f.e.Resubmit(f.clock.Now(), sbKey("orders/$DeadLetterQueue"), dl.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if err := commit.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if to != sbKey("orders") {
		t.Fatalf("resubmitted to %v", to)
	}
	var msgs []*azservicebus.ReceivedMessage
	select {
	case msgs = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting receiver did not get the resubmitted message")
	}
	if len(msgs) != 1 {
		t.Fatalf("received %v", names(msgs))
	}
	back := msgs[0]
	if string(back.Body) != "hello" || back.MessageID != "m-1" || back.DeadLetterReason != nil || back.DeadLetterErrorDescription != nil ||
		back.ApplicationProperties["tenant"] != "acme" || back.DeliveryCount != 1 {
		t.Fatalf("resubmitted message = body %q id %q reason %v props %v delivery count %d", back.Body, back.MessageID, back.DeadLetterReason, back.ApplicationProperties, back.DeliveryCount)
	}
	// It counts its TTL (its own minute) from the resubmission.
	if back.ExpiresAt == nil || !back.ExpiresAt.Equal(back.EnqueuedTime.Add(time.Minute)) || !back.EnqueuedTime.Equal(f.clock.Now()) {
		t.Fatalf("resubmitted message enqueued %v expires %v, want now (%v) + 1m", back.EnqueuedTime, back.ExpiresAt, f.clock.Now())
	}
	if got := bodies(t, c.receiver("orders", "", dlq())); len(got) != 0 {
		t.Fatalf("the dead-letter queue still holds %v", got)
	}
	// Abandoned, it expires again into the dead-letter queue a minute on.
	if err := r.AbandonMessage(ctx(t), back, nil); err != nil {
		t.Fatal(err)
	}
	f.advance(time.Minute)
	if got := bodies(t, c.receiver("orders", "", dlq())); !slices.Equal(got, []string{"hello"}) {
		t.Fatalf("dead letters after the second expiry: %v", got)
	}
}

// A subscription's dead letters go back to the subscription, with the
// topic's default as their ceiling, and ResubmitAll moves them all.
// rule: SB-5
func TestResubmitAllToASubscription_SB5(t *testing.T) {
	f := MustServer(t)
	f.MustTopic("events", func(p *atom.TopicProperties) { p.DefaultMessageTimeToLive = 10 * time.Minute })
	f.MustSubscription("events", "audit", func(p *atom.SubscriptionProperties) { p.DeadLetteringOnMessageExpiration = true })
	c := f.sb()
	c.send("events", msg("a", time.Minute), msg("b", time.Hour))
	f.advance(11 * time.Minute)
	const dlqName = "events/Subscriptions/audit/$DeadLetterQueue"
	items, err := f.e.Items(f.clock.Now(), sbKey(dlqName), 0)
	if err != nil || len(items) != 2 {
		t.Fatalf("dead letters %v, %v", items, err)
	}
	if d := f.e.Describe(sbKey(dlqName), &items[1]); d.DeadLetter == nil || d.DeadLetter.Source != "events/Subscriptions/audit" {
		t.Fatalf("dead letter of the subscription: %+v", d.DeadLetter)
	}
	n, commit, err := f.e.ResubmitAll(f.clock.Now(), sbKey(dlqName))
	if err != nil || n != 2 {
		t.Fatalf("ResubmitAll = %d, %v", n, err)
	}
	if err := commit.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := receive(t, c.receiver("events", "audit", nil), 2)
	if !slices.Equal(names(got), []string{"a", "b"}) {
		t.Fatalf("received %v", names(got))
	}
	now := f.clock.Now()
	for i, ttl := range []time.Duration{time.Minute, 10 * time.Minute} { // b's hour cut to the topic's 10 minutes
		if m := got[i]; m.ExpiresAt == nil || !m.ExpiresAt.Equal(now.Add(ttl)) || m.DeadLetterReason != nil {
			t.Errorf("%s expires %v (reason %v), want %v", m.Body, m.ExpiresAt, m.DeadLetterReason, now.Add(ttl))
		}
	}
}

// A dead letter forwarded to another queue (ForwardDeadLetteredMessagesTo)
// is a dead letter there too, from x-opt-deadletter-source, and goes back
// to that source.
// rule: SB-8
func TestResubmitAForwardedDeadLetter_SB8(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("sink", nil)
	f.MustQueue("src", func(p *atom.QueueProperties) {
		p.DeadLetteringOnMessageExpiration = true
		p.ForwardDeadLetteredMessagesTo = "sink"
	})
	c := f.sb()
	c.send("src", msg("fwd", time.Minute))
	f.advance(time.Minute)
	it := f.MustOnlyItem("sink")
	d := f.e.Describe(sbKey("sink"), &it)
	if d.DeadLetter == nil || d.DeadLetter.Source != "src" || d.DeadLetter.Reason != "TTLExpiredException" {
		t.Fatalf("forwarded dead letter: %+v", d.DeadLetter)
	}
	if v, _ := setting(d.Properties, "DeadLetterSource"); v != "src" {
		t.Fatalf("DeadLetterSource = %q; properties %v", v, d.Properties)
	}
	if to, _, err := f.e.Resubmit(f.clock.Now(), sbKey("sink"), it.Seq); err != nil || to != sbKey("src") {
		t.Fatalf("Resubmit = %v, %v", to, err)
	}
	got := receive(t, c.receiver("src", "", nil), 1)
	if len(got) != 1 || string(got[0].Body) != "fwd" || got[0].DeadLetterSource != nil || got[0].DeadLetterReason != nil {
		t.Fatalf("received %v", names(got))
	}
}
