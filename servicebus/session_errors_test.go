package servicebus_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Errors of session entities as the service gives them (issue 14.6).

func sessionMsg(body, session string) *azservicebus.Message {
	return &azservicebus.Message{Body: []byte(body), SessionID: &session}
}

// amqpCond returns the AMQP error condition and description inside an SDK
// error.
func amqpCond(err error) (amqp.ErrCond, string) {
	var e *amqp.Error
	if errors.As(err, &e) {
		return e.Condition, e.Description
	}
	return "", ""
}

// issue 14.6: a send without a session id to a session queue is refused
// with the service's text, which names no entity.
func TestSendWithoutSessionIDToSessionQueueRefusedWithServiceText(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("sq", func(p *atom.QueueProperties) { p.RequiresSession = true })
	s, err := f.MustClient().NewSender("sq", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx(t))
	err = s.SendMessage(ctx(t), msg("no session", 0), nil)
	cond, desc := amqpCond(err)
	const want = "The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have session support enabled can only receive messages that have the SessionId set to a valid value."
	if cond != amqp.ErrCondNotAllowed || desc != want {
		t.Fatalf("send without a session id: %v (%q, %q); want %s with %q", err, cond, desc, amqp.ErrCondNotAllowed, want)
	}
	if err := s.SendMessage(ctx(t), sessionMsg("s", "s1"), nil); err != nil {
		t.Fatalf("a message with a session id: %v", err)
	}
}

// issue 14.6: a plain receiver on a session entity gets amqp:not-allowed
// with the service's text and tracking tail.
func TestPlainReceiverOnSessionEntityNotAllowedWithServiceText(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("sq", func(p *atom.QueueProperties) { p.RequiresSession = true })
	f.MustTopic("t", nil)
	f.MustSubscription("t", "ss", func(p *atom.SubscriptionProperties) { p.RequiresSession = true })
	c := f.sb()
	for _, tc := range []struct{ queue, sub, tracker string }{
		{"sq", "", "SystemTracker:sbemulatorns:Queue:sq,"},
		{"t", "ss", "SystemTracker:sbemulatorns:Topic:t|ss,"},
	} {
		r := c.receiver(tc.queue, tc.sub, nil)
		_, err := r.ReceiveMessages(ctx(t), 1, nil)
		cond, desc := amqpCond(err)
		if cond != amqp.ErrCondNotAllowed ||
			!strings.HasPrefix(desc, "It is not possible for an entity that requires sessions to create a non-sessionful message receiver. TrackingId:") ||
			!strings.Contains(desc, tc.tracker) {
			t.Errorf("plain receiver on %s %s: %v (%q, %q)", tc.queue, tc.sub, err, cond, desc)
		}
	}
}

// issue 14.6: accepting a session on an entity without sessions fails as
// the service fails it: amqp:not-allowed, its text.
func TestAcceptSessionOnPlainEntityNotAllowed(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.MustClient()
	for name, accept := range map[string]func() (*azservicebus.SessionReceiver, error){
		"named": func() (*azservicebus.SessionReceiver, error) { return c.AcceptSessionForQueue(ctx(t), "q", "s1", nil) },
		"next":  func() (*azservicebus.SessionReceiver, error) { return c.AcceptNextSessionForQueue(ctx(t), "q", nil) },
	} {
		r, err := accept()
		if err == nil {
			r.Close(ctx(t))
			t.Errorf("%s: a session was accepted on a queue without sessions", name)
			continue
		}
		cond, desc := amqpCond(err)
		if cond != amqp.ErrCondNotAllowed || !strings.HasPrefix(desc, "A sessionful message receiver cannot be created on an entity that does not require sessions.") {
			t.Errorf("%s: %v (%q, %q); want %s and the service's text", name, err, cond, desc, amqp.ErrCondNotAllowed)
		}
	}
}

// issue 14.6: a topic message without a session id, copied to a
// subscription that requires sessions, is dead-lettered there with reason
// "Session ID is null." and the service's description; a subscription
// without sessions gets its copy as usual.
func TestTopicMessageWithoutSessionIDDeadLetteredInSessionSubscription(t *testing.T) {
	f := MustServer(t)
	f.MustTopic("t", nil, "plain")
	f.MustSubscription("t", "ss", func(p *atom.SubscriptionProperties) { p.RequiresSession = true })
	c := f.sb()
	c.send("t", msg("nosession", 0))
	if got := names(receive(t, c.receiver("t", "plain", nil), 10)); !slices.Equal(got, []string{"nosession"}) {
		t.Fatalf("plain subscription received %v", got)
	}
	got := receive(t, c.receiver("t", "ss", dlq()), 10)
	if len(got) != 1 || string(got[0].Body) != "nosession" {
		t.Fatalf("the session subscription's dead-letter queue has %v, want the message", names(got))
	}
	m := got[0]
	if m.DeadLetterReason == nil || *m.DeadLetterReason != "Session ID is null." ||
		m.DeadLetterErrorDescription == nil || *m.DeadLetterErrorDescription != "Session enabled entity doesn't allow a message whose session identifier is null." {
		t.Fatalf("dead-letter reason %v, description %v", m.DeadLetterReason, m.DeadLetterErrorDescription)
	}
}
