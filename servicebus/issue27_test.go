package servicebus_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// What the SDKs' own tests found lapse doing differently from the service
// (issue 27, "Found by the SDKs' own tests").

// states peeks at every message of r's entity: body and state.
func states(t *testing.T, r *azservicebus.Receiver) map[string]azservicebus.MessageState {
	t.Helper()
	seq := int64(0)
	msgs, err := r.PeekMessages(ctx(t), 100, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &seq})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]azservicebus.MessageState{}
	for _, m := range msgs {
		out[string(m.Body)] = m.State
	}
	return out
}

func TestIssue27_1_ADeferredMessageGivenBackStaysDeferred_SB9(t *testing.T) {
	// A deferred message received by its sequence number and then
	// abandoned, or whose lock runs out, is deferred still: the next
	// receive-by-sequence-number gets it and a plain receive does not.
	// lapse made it active: the second receiveDeferredMessages found
	// nothing and a plain receive got it.
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	// rule: SB-9
	c.send("q", msg("d", 0))
	r := c.receiver("q", "", nil)
	got := receive(t, r, 1)
	if len(got) != 1 {
		t.Fatalf("received %v", names(got))
	}
	seq := *got[0].SequenceNumber
	if err := r.DeferMessage(ctx(t), got[0], nil); err != nil {
		t.Fatal(err)
	}
	takeDeferred := func(step string) *azservicebus.ReceivedMessage {
		t.Helper()
		d, err := r.ReceiveDeferredMessages(ctx(t), []int64{seq}, nil)
		if err != nil || len(d) != 1 {
			t.Fatalf("%s: receive deferred: %v %v", step, names(d), err)
		}
		return d[0]
	}
	m := takeDeferred("after defer")
	if err := r.AbandonMessage(ctx(t), m, nil); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, r, 1); len(got) != 0 {
		t.Fatalf("after abandon a plain receive got %v", names(got))
	}
	if s := states(t, r)["d"]; s != azservicebus.MessageStateDeferred {
		t.Fatalf("after abandon the message's state is %v", s)
	}
	takeDeferred("after abandon")
	// Its lock runs out on the moved clock: deferred again.
	f.advance(2 * time.Minute)
	if got := receive(t, r, 1); len(got) != 0 {
		t.Fatalf("after the lock ran out a plain receive got %v", names(got))
	}
	m = takeDeferred("after the lock ran out")
	if m.DeliveryCount != 4 {
		t.Errorf("delivery count %d, want 4 (received, then taken three times)", m.DeliveryCount)
	}
	if err := r.CompleteMessage(ctx(t), m, nil); err != nil {
		t.Fatal(err)
	}
	if got := states(t, r); len(got) != 0 {
		t.Fatalf("after complete: %v", got)
	}
}

func TestIssue27_1_ASessionsDeferredMessageGivenBackStaysDeferred_SB9(t *testing.T) {
	// The same in a session: abandoned after receive-by-sequence-number,
	// the message is deferred still, and the session hands out nothing.
	f := MustServer(t)
	f.MustQueue("sq", func(p *atom.QueueProperties) { p.RequiresSession = true })
	c := f.sb()
	// rule: SB-9
	m := msg("d", 0)
	m.SessionID = to.Ptr("s")
	c.send("sq", m)
	r := c.accept("sq", "s", nil)
	got := receiveSession(t, r, 1)
	if len(got) != 1 {
		t.Fatalf("received %v", names(got))
	}
	seq := *got[0].SequenceNumber
	if err := r.DeferMessage(ctx(t), got[0], nil); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"after defer", "after abandon"} {
		d, err := r.ReceiveDeferredMessages(ctx(t), []int64{seq}, nil)
		if err != nil || len(d) != 1 {
			t.Fatalf("%s: receive deferred: %v %v", step, names(d), err)
		}
		if err := r.AbandonMessage(ctx(t), d[0], nil); err != nil {
			t.Fatal(err)
		}
		if got := receiveSession(t, r, 1); len(got) != 0 {
			t.Fatalf("%s: a plain receive got %v", step, names(got))
		}
	}
}

func TestIssue27_2_RulesListedOnAnOpenManagementLinkAreTheSubscriptionsAsItIsNow(t *testing.T) {
	// A management link attached to a subscription that is then deleted
	// and made again serves the new subscription: enumerate-rules lists
	// its rules ($Default), not the old one's. The Java SDK keeps its
	// management links open across such a delete; on lapse its new rule
	// manager listed the old subscription's rules.
	f := MustServer(t)
	f.MustTopic("t", nil, "s")
	if err := f.s.AddRule("t", "s", atom.RuleProperties{Name: "old", Filter: atom.Filter{Type: atom.SQLFilter, SQLExpression: "1=1"}}); err != nil {
		t.Fatal(err)
	}
	s := MustSession(t, f.MustDialAMQP(t, "t/Subscriptions/s"))
	node := "t/Subscriptions/s/$management"
	snd, err := s.NewSender(ctx(t), node, nil)
	if err != nil {
		t.Fatal(err)
	}
	replyTo := "rules-reply"
	rcv, err := s.NewReceiver(ctx(t), node, &amqp.ReceiverOptions{TargetAddress: replyTo, Credit: 10})
	if err != nil {
		t.Fatal(err)
	}
	// enumerate returns the rules' count and their descriptions as text
	// (go-amqp decodes the described rule descriptions into a type of its
	// own, which only prints).
	enumerate := func(step string) (int, string) {
		t.Helper()
		req := &amqp.Message{Value: map[string]any{"top": int32(100), "skip": int32(0)},
			Properties:            &amqp.MessageProperties{MessageID: step, ReplyTo: &replyTo},
			ApplicationProperties: map[string]any{"operation": "com.microsoft:enumerate-rules"}}
		if err := snd.Send(ctx(t), req, nil); err != nil {
			t.Fatal(err)
		}
		resp, err := rcv.Receive(ctx(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		rcv.AcceptMessage(ctx(t), resp)
		if code := resp.ApplicationProperties["statusCode"]; code != int32(200) {
			t.Fatalf("%s: status %v %v", step, code, resp.ApplicationProperties["statusDescription"])
		}
		body, _ := resp.Value.(map[string]any)
		rules, _ := body["rules"].([]any)
		return len(rules), fmt.Sprint(rules)
	}
	if n, text := enumerate("before"); n != 2 || !strings.Contains(text, "$Default") || !strings.Contains(text, "old") {
		t.Fatalf("rules before: %d %s", n, text)
	}
	ac := f.MustAdmin("SAS_KEY_VALUE")
	if _, err := ac.DeleteSubscription(ctx(t), "t", "s", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CreateSubscription(ctx(t), "t", "s", nil); err != nil {
		t.Fatal(err)
	}
	if n, text := enumerate("after"); n != 1 || !strings.Contains(text, "$Default") {
		t.Fatalf("rules on the same link after the subscription was made again: %d %s, want $Default alone", n, text)
	}
}

func TestIssue27_3_SQLFilterPropertyNamesMatchWithoutRegardToCase(t *testing.T) {
	// A subscription's SQL filter Color = 'yellow' takes a message whose
	// application property is color; its action's SET Shade names the
	// message's shade. lapse matched none (names were looked up exactly).
	// A correlation filter's properties still match by exact name.
	f := MustServer(t)
	f.MustTopic("t", nil)
	f.MustSubscription("t", "sql", nil)
	f.MustSubscription("t", "corr", nil)
	ac := f.MustAdmin("SAS_KEY_VALUE")
	for _, sub := range []string{"sql", "corr"} {
		if _, err := ac.DeleteRule(ctx(t), "t", sub, "$Default", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.s.AddRule("t", "sql", atom.RuleProperties{Name: "yellow",
		Filter: atom.Filter{Type: atom.SQLFilter, SQLExpression: "Color = 'yellow'"},
		Action: &atom.Action{SQLExpression: "SET Shade = 'light'"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.AddRule("t", "corr", atom.RuleProperties{Name: "yellow",
		Filter: atom.Filter{Type: atom.CorrelationFilter, Correlation: atom.Correlation{Properties: map[string]any{"Color": "yellow"}}}}); err != nil {
		t.Fatal(err)
	}
	c := f.sb()
	c.send("t", &azservicebus.Message{Body: []byte("y"), ApplicationProperties: map[string]any{"color": "yellow", "shade": "dark"}},
		&azservicebus.Message{Body: []byte("b"), ApplicationProperties: map[string]any{"color": "blue"}})
	got := receive(t, c.receiver("t", "sql", nil), 10)
	if len(got) != 1 || string(got[0].Body) != "y" {
		t.Fatalf("the SQL filter's subscription got %v, want [y]", names(got))
	}
	if p := got[0].ApplicationProperties; p["shade"] != "light" || p["Shade"] != nil {
		t.Errorf("after SET Shade: %v", p)
	}
	if got := receive(t, c.receiver("t", "corr", nil), 10); len(got) != 0 {
		t.Fatalf("the correlation filter's subscription got %v, want none", names(got))
	}
}

func TestIssue27_4_AMessageSentScheduledSaysSoWhenReceived_SB4(t *testing.T) {
	// Once its time has come, a scheduled message is received and peeked
	// with the state scheduled (x-opt-message-state 2), as the service
	// gives it; lapse said active. A message sent plainly is active.
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	// rule: SB-4
	snd, err := c.c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close(ctx(t))
	if _, err := snd.ScheduleMessages(ctx(t), []*azservicebus.Message{{Body: []byte("later")}}, t0.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	if err := snd.SendMessage(ctx(t), &azservicebus.Message{Body: []byte("now")}, nil); err != nil {
		t.Fatal(err)
	}
	r := c.receiver("q", "", nil)
	f.advance(2 * time.Minute)
	want := map[string]azservicebus.MessageState{"later": azservicebus.MessageStateScheduled, "now": azservicebus.MessageStateActive}
	if got := states(t, r); got["later"] != want["later"] || got["now"] != want["now"] {
		t.Errorf("peeked states %v, want %v", got, want)
	}
	got := receiveAtLeast(t, r, 2)
	if len(got) != 2 {
		t.Fatalf("received %v", names(got))
	}
	for _, m := range got {
		if m.State != want[string(m.Body)] {
			t.Errorf("received %s in state %v, want %v", m.Body, m.State, want[string(m.Body)])
		}
	}
}
