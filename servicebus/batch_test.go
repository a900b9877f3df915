package servicebus_test

import (
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// sendBatch sends msgs to a queue or topic in one batch (one transfer of
// message-format 0x80013700) and returns the send's error.
func (c *sbClient) sendBatch(to string, msgs ...*azservicebus.Message) error {
	c.f.tb.Helper()
	s, err := c.c.NewSender(to, nil)
	if err != nil {
		c.f.tb.Fatal(err)
	}
	defer s.Close(ctx(c.f.tb))
	b, err := s.NewMessageBatch(ctx(c.f.tb), nil)
	if err != nil {
		c.f.tb.Fatal(err)
	}
	for _, m := range msgs {
		if err := b.AddMessage(m, nil); err != nil {
			c.f.tb.Fatal(err)
		}
	}
	return s.SendMessageBatch(ctx(c.f.tb), b, nil)
}

// stored returns the bodies of the items of entity name, in order.
func (f *fixture) stored(name string) []string {
	f.tb.Helper()
	items, err := f.e.Items(f.clock.Now(), sbKey(name), 0)
	if err != nil {
		f.tb.Fatal(err)
	}
	out := []string{}
	for _, it := range items {
		m, err := amqp.UnmarshalMessage(it.Body)
		if err != nil || len(m.Data) != 1 {
			f.tb.Fatalf("item %d of %s is not a message with one data section: %v", it.Seq, name, err)
		}
		out = append(out, string(m.Data[0]))
	}
	return out
}

// idMsg is a message with a body, an id and, unless it is "", a
// session id.
func idMsg(body, id, session string) *azservicebus.Message {
	m := &azservicebus.Message{Body: []byte(body), MessageID: ptr(id)}
	if session != "" {
		m.SessionID = ptr(session)
	}
	return m
}

func TestBatchIsStoredWholeOrNotAtAll(t *testing.T) {
	// issue 25.2: a batch with one message the queue refuses (no session
	// id in a queue that requires sessions) fails, and stores none of the
	// others: the client that sends it again stores each message once.
	for _, tc := range []struct {
		name string
		set  func(*atom.QueueProperties)
	}{
		{"Queue", nil},
		{"DuplicateDetection", func(p *atom.QueueProperties) {
			// a refused send records none of its ids: its retry is
			// no duplicate
			p.RequiresDuplicateDetection = true
			p.DuplicateDetectionHistoryTimeWindow = 10 * time.Minute
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustServer(t)
			f.MustQueue("sq", func(p *atom.QueueProperties) {
				p.RequiresSession = true
				if tc.set != nil {
					tc.set(p)
				}
			})
			c := &sbClient{f: f, c: f.MustClientWith(noRetries())}
			err := c.sendBatch("sq", idMsg("a", "1", "s"), idMsg("b", "2", ""), idMsg("c", "3", "s"))
			if err == nil {
				t.Fatal("a batch with a message without a session id was accepted by a queue that requires sessions")
			}
			if got := f.stored("sq"); len(got) != 0 {
				t.Fatalf("the refused batch stored %v, want nothing", got)
			}
			if err := c.sendBatch("sq", idMsg("a", "1", "s"), idMsg("b", "2", "s"), idMsg("c", "3", "s")); err != nil {
				t.Fatal(err)
			}
			if got := f.stored("sq"); !slices.Equal(got, []string{"a", "b", "c"}) {
				t.Fatalf("after the retry the queue holds %v, want a, b, c once each", got)
			}
		})
	}
}

func TestDuplicateDetectionWithinABatch(t *testing.T) {
	// The second message of a batch with the id of the first is a
	// duplicate of it, though neither was stored when it was checked.
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) {
		p.RequiresDuplicateDetection = true
		p.DuplicateDetectionHistoryTimeWindow = 10 * time.Minute
	})
	c := f.sb()
	if err := c.sendBatch("q", idMsg("a", "1", ""), idMsg("b", "1", ""), idMsg("c", "2", "")); err != nil {
		t.Fatal(err)
	}
	if got := f.stored("q"); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("the queue holds %v, want a and c", got)
	}
}

func TestTopicNumbersItsMessagesOnce(t *testing.T) {
	// issue 25.3: the copies of a topic's message carry the topic's
	// sequence number, whatever each subscription held before.
	f := MustServer(t)
	f.MustTopic("t", nil, "s1")
	c := f.sb()
	c.send("t", msg("early", 0)) // s1 has a copy, s2 does not exist yet
	f.MustSubscription("t", "s2", nil)
	c.send("t", msg("m", 0))
	var seqs []int64
	for _, sub := range []string{"s1", "s2"} {
		r := c.receiver("t", sub, nil)
		ms, err := r.PeekMessages(ctx(t), 10, &azservicebus.PeekMessagesOptions{FromSequenceNumber: ptr(int64(0))})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if string(m.Body) == "m" {
				seqs = append(seqs, *m.SequenceNumber)
			}
		}
	}
	if len(seqs) != 2 || seqs[0] != seqs[1] || seqs[0] != 2 {
		t.Fatalf("the copies of m carry %v, want the topic's number 2 in both", seqs)
	}
}

func TestCancelScheduledOnATopicAfterARestart(t *testing.T) {
	// issue 25.3: a topic's schedule numbers are the topic's, kept in the
	// store: after a restart a new message does not take the number of
	// one scheduled before, and cancelling that number cancels the first.
	store := core.NewMemStore()
	f := MustServerOn(t, store, t0)
	f.MustTopic("t", nil, "s1", "s2")
	schedule := func(f *fixture, body string) int64 {
		t.Helper()
		s, err := f.MustClient().NewSender("t", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx(t))
		seqs, err := s.ScheduleMessages(ctx(t), []*azservicebus.Message{msg(body, 0)}, t0.Add(time.Hour), nil)
		if err != nil || len(seqs) != 1 {
			t.Fatalf("ScheduleMessages = %v, %v", seqs, err)
		}
		return seqs[0]
	}
	first := schedule(f, "first")
	f.close()
	f = MustServerOn(t, store, t0)
	second := schedule(f, "second")
	if second == first {
		t.Errorf("after a restart the topic gave %d again", first)
	}
	s, err := f.MustClient().NewSender("t", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx(t))
	if err := s.CancelScheduledMessages(ctx(t), []int64{first}, nil); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"t/Subscriptions/s1", "t/Subscriptions/s2"} {
		if got := f.stored(sub); !slices.Equal(got, []string{"second"}) {
			t.Errorf("%s holds %v after cancelling %d, want second only", sub, got, first)
		}
	}
}
