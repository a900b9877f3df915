package rabbitmq_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	amqp "github.com/rabbitmq/amqp091-go"
)

func rbKey(name string) core.EntityKey { return core.EntityKey{Protocol: core.RabbitMQ, Name: name} }

// items returns the items of entity name.
func (f *fixture) items(name string) []core.Item {
	f.tb.Helper()
	items, err := f.e.Items(f.clock.Now(), rbKey(name), 0)
	if err != nil {
		f.tb.Fatal(err)
	}
	return items
}

func settingOf(settings []core.Setting, key string) string {
	for _, s := range settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// A message that expired in a queue with a dead-letter exchange is a dead
// letter in the queue it reached: its x-death says why (expired) and from
// where. Resubmitted, it goes back to that queue, where a consumer gets it
// through the default exchange with its headers, x-death included; there it
// is no dead letter, and the queue's TTL counts from the resubmission.
// rule: RB-9
func TestDescribeAndResubmitAnExpiredMessage_RB9(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	if err := ch.ExchangeDeclare("dlx", "direct", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, ch, "work", amqp.Table{"x-message-ttl": int32(1000), "x-dead-letter-exchange": "dlx"})
	MustDeclare(t, ch, "dead", nil)
	if err := ch.QueueBind("dead", "work", "dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"first", "second"} {
		MustPublish(t, ch, "", "work", amqp.Publishing{Body: []byte(b), MessageId: "id-" + b, ContentType: "text/plain",
			DeliveryMode: amqp.Persistent, Headers: amqp.Table{"tenant": "acme"}})
	}
	f.advance(2 * time.Second)
	dead := f.items("/dead")
	if len(dead) != 2 {
		t.Fatalf("dead-letter queue holds %d messages", len(dead))
	}
	d := f.e.Describe(rbKey("/dead"), &dead[0])
	want := &core.DeadLetterInfo{Reason: "expired", Description: "dead-lettered from queue 'work' by exchange 'dlx' (x-death count 1)", Source: "/work", Rule: "RB-9"}
	if diff := cmp.Diff(want, d.DeadLetter); diff != "" {
		t.Fatalf("dead letter (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{"exchange": "dlx", "routing_key": "work", "message_id": "id-first", "content_type": "text/plain",
		"delivery_mode": "2", "headers.tenant": "acme", "headers.x-first-death-reason": "expired"} {
		if got := settingOf(d.Properties, k); got != v {
			t.Errorf("%s = %q, want %q; all %v", k, got, v, d.Properties)
		}
	}
	if xd := settingOf(d.Properties, "headers.x-death"); !strings.Contains(xd, `"reason":"expired"`) || !strings.Contains(xd, `"queue":"work"`) || !strings.Contains(xd, `"count":1`) {
		t.Errorf("headers.x-death = %s", xd)
	}

	consumer := f.MustChannel()
	msgs, err := consumer.Consume("work", "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	to, c, err := f.e.Resubmit(f.clock.Now(), rbKey("/dead"), dead[0].Seq)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if to != rbKey("/work") {
		t.Fatalf("resubmitted to %v", to)
	}
	got := receive(t, msgs, 1)[0]
	if string(got.Body) != "first" || got.Exchange != "" || got.RoutingKey != "work" || got.MessageId != "id-first" || got.Headers["tenant"] != "acme" {
		t.Fatalf("consumer got body %q exchange %q key %q id %q headers %v", got.Body, got.Exchange, got.RoutingKey, got.MessageId, got.Headers)
	}
	if deaths, _ := got.Headers["x-death"].([]any); len(deaths) != 1 {
		t.Fatalf("x-death of the resubmitted message: %v", got.Headers["x-death"])
	}
	if err := consumer.Close(); err != nil {
		t.Fatal(err)
	}

	// Without a consumer: back in work it is no dead letter, and it
	// expires (and is dead-lettered) again a second after the resubmission.
	second := f.items("/dead")[0]
	if _, _, err := f.e.Resubmit(f.clock.Now(), rbKey("/dead"), second.Seq); err != nil {
		t.Fatal(err)
	}
	back := f.items("/work")
	if len(back) == 0 {
		t.Fatal("the resubmitted message is not in work")
	}
	if d := f.e.Describe(rbKey("/work"), &back[len(back)-1]); d.DeadLetter != nil {
		t.Fatalf("back in the queue it died in, it is described as a dead letter: %+v", d.DeadLetter)
	}
	if _, _, err := f.e.Resubmit(f.clock.Now(), rbKey("/work"), back[len(back)-1].Seq); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("resubmitting a message that is not a dead letter: %v, want EINVALID", err)
	}
	if !back[len(back)-1].DueAt.Equal(f.clock.Now().Add(time.Second)) {
		t.Fatalf("resubmitted message due %v, want %v", back[len(back)-1].DueAt, f.clock.Now().Add(time.Second))
	}
	f.advance(time.Second)
	again := f.items("/dead")
	if len(again) != 1 {
		t.Fatalf("dead-letter queue holds %d messages, want the second one back", len(again))
	}
	if d := f.e.Describe(rbKey("/dead"), &again[0]); d.DeadLetter == nil || !strings.HasSuffix(d.DeadLetter.Description, "(x-death count 2)") {
		t.Fatalf("second death: %+v", d.DeadLetter)
	}
}
