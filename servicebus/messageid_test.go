package servicebus_test

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// serviceMessageID is the form of a message-id the service gives: a GUID
// as 32 lower-case hex digits.
var serviceMessageID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// peekIDs peeks at up to 100 messages from the start of queue (or
// topic's subscription sub) and returns their bodies and message-ids.
func (c *sbClient) peekIDs(tb testing.TB, queue, sub string) (bodies, ids []string) {
	tb.Helper()
	r := c.receiver(queue, sub, nil)
	ms, err := r.PeekMessages(ctx(tb), 100, &azservicebus.PeekMessagesOptions{FromSequenceNumber: ptr(int64(1))})
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range ms {
		bodies, ids = append(bodies, string(m.Body)), append(ids, m.MessageID)
	}
	return bodies, ids
}

func TestMessageWithoutIDGetsOneOfItsOwn(t *testing.T) {
	// issue 13.1: a message sent without a message-id gets one from the
	// server, a GUID, stored with it: peek, receive, the dead-letter queue
	// and a restart all show the same id.
	store := core.NewMemStore()
	f := MustServerOn(t, store, t0)
	f.MustQueue("q", nil)
	f.MustTopic("t", nil, "s1", "s2")
	c := f.sb()
	c.send("q", &azservicebus.Message{Body: []byte("a")}, &azservicebus.Message{Body: []byte("b")},
		&azservicebus.Message{Body: []byte("mine"), MessageID: ptr("my-id")})
	bodies, peeked := c.peekIDs(t, "q", "")
	if !slices.Equal(bodies, []string{"a", "b", "mine"}) {
		t.Fatalf("peeked %v", bodies)
	}
	for i, id := range peeked {
		if bodies[i] == "mine" {
			if id != "my-id" {
				t.Errorf("the message sent with id my-id shows %q", id)
			}
			continue
		}
		if !serviceMessageID.MatchString(id) {
			t.Errorf("message %s: message-id %q, want a GUID of 32 hex digits", bodies[i], id)
		}
		if slices.Index(peeked, id) != i {
			t.Errorf("message %s: message-id %q is not its own", bodies[i], id)
		}
	}

	r := c.receiver("q", "", nil)
	var got []*azservicebus.ReceivedMessage
	for len(got) < 3 {
		more, err := r.ReceiveMessages(ctx(t), 3-len(got), nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, more...)
	}
	var received []string
	for _, m := range got {
		received = append(received, m.MessageID)
	}
	if !slices.Equal(received, peeked) {
		t.Errorf("received message-ids %v, peeked %v", received, peeked)
	}
	if err := r.DeadLetterMessage(ctx(t), got[0], nil); err != nil {
		t.Fatal(err)
	}
	if dl := receive(t, c.receiver("q", "", dlq()), 1); dl[0].MessageID != peeked[0] {
		t.Errorf("the dead letter's message-id is %q, was %q", dl[0].MessageID, peeked[0])
	}

	// a topic's subscriptions get copies of one message: one id
	c.send("t", &azservicebus.Message{Body: []byte("news")})
	_, s1 := c.peekIDs(t, "t", "s1")
	_, s2 := c.peekIDs(t, "t", "s2")
	if len(s1) != 1 || len(s2) != 1 || !serviceMessageID.MatchString(s1[0]) || s1[0] != s2[0] {
		t.Errorf("the subscriptions' copies have message-ids %v and %v, want one GUID", s1, s2)
	}

	c.c.Close(ctx(t))
	f.close()
	g := MustServerOn(t, store, t0.Add(time.Minute))
	d := g.sb()
	if _, after := d.peekIDs(t, "q", ""); !slices.Equal(after, peeked[1:]) {
		t.Errorf("after a restart the message-ids are %v, were %v", after, peeked[1:])
	}
	if _, after := d.peekIDs(t, "t", "s1"); !slices.Equal(after, s1) {
		t.Errorf("after a restart the subscription's message-id is %v, was %v", after, s1)
	}
}

func TestDuplicateDetectionKeysOnTheGivenMessageID(t *testing.T) {
	// issue 13.1: duplicate detection keys on the id the server gave a
	// message sent without one.
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) {
		p.RequiresDuplicateDetection = true
		p.DuplicateDetectionHistoryTimeWindow = 10 * time.Minute
	})
	c := f.sb()
	c.send("q", &azservicebus.Message{Body: []byte("first")}, &azservicebus.Message{Body: []byte("second")})
	_, ids := c.peekIDs(t, "q", "")
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("two messages without ids stored with ids %v, want two different ones", ids)
	}
	c.send("q", &azservicebus.Message{Body: []byte("repeat"), MessageID: ptr(ids[0])})
	if bodies, _ := c.peekIDs(t, "q", ""); !slices.Equal(bodies, []string{"first", "second"}) {
		t.Fatalf("the queue holds %v: a message with the id the server gave the first was not taken for a duplicate", bodies)
	}
}

func TestGivenMessageIDKeepsTheOtherSections(t *testing.T) {
	// issue 13.1: giving a message its id changes nothing else it carries,
	// whether it came with a properties section or without one.
	f := MustServer(t)
	f.MustQueue("q", nil)
	s := MustSession(t, f.MustDialAMQP(t, "q"))
	snd := MustSender(t, s, "q")
	MustSend(t, snd, &amqp.Message{
		Header:                &amqp.MessageHeader{Durable: true, Priority: 7},
		Annotations:           amqp.Annotations{"x-custom": "annotated"},
		ApplicationProperties: map[string]any{"k": "v"},
		Data:                  [][]byte{[]byte("no properties")},
		Footer:                amqp.Annotations{"x-footer": "f"},
	})
	MustSend(t, snd, &amqp.Message{
		Properties: &amqp.MessageProperties{Subject: ptr("news"), CorrelationID: "c-1"},
		Value:      "properties without an id",
	})
	r := MustReceiver(t, s, "q", peekLock())

	m := MustReceive(t, r)
	if m.Properties == nil {
		t.Fatal("the message has no properties: no message-id")
	}
	if id, _ := m.Properties.MessageID.(string); !serviceMessageID.MatchString(id) {
		t.Errorf("message-id %#v, want a GUID of 32 hex digits", m.Properties.MessageID)
	}
	if !m.Header.Durable || m.Header.Priority != 7 || m.Annotations["x-custom"] != "annotated" || m.ApplicationProperties["k"] != "v" ||
		string(m.GetData()) != "no properties" || m.Footer["x-footer"] != "f" {
		t.Errorf("the message changed: header %+v annotations %v properties %v body %q footer %v",
			m.Header, m.Annotations, m.ApplicationProperties, m.GetData(), m.Footer)
	}

	m = MustReceive(t, r)
	if id, _ := m.Properties.MessageID.(string); !serviceMessageID.MatchString(id) {
		t.Errorf("message-id %#v, want a GUID of 32 hex digits", m.Properties.MessageID)
	}
	if m.Properties.Subject == nil || *m.Properties.Subject != "news" || m.Properties.CorrelationID != "c-1" || m.Value != "properties without an id" {
		t.Errorf("the message changed: properties %+v value %#v", m.Properties, m.Value)
	}
}
