package servicebus_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Every SB rule of SEMANTICS.md through azservicebus, on the frozen clock.

func ptr[T any](v T) *T { return &v }

// sbClient bundles what a test uses.
type sbClient struct {
	f *fixture
	c *azservicebus.Client
}

func (f *fixture) sb() *sbClient { return &sbClient{f: f, c: f.MustClient()} }

// send sends messages to a queue or topic.
func (c *sbClient) send(to string, msgs ...*azservicebus.Message) {
	c.f.tb.Helper()
	s, err := c.c.NewSender(to, nil)
	if err != nil {
		c.f.tb.Fatal(err)
	}
	defer s.Close(context.Background())
	for _, m := range msgs {
		if err := s.SendMessage(ctx(c.f.tb), m, nil); err != nil {
			c.f.tb.Fatal(err)
		}
	}
}

// receiver opens a peek-lock receiver on a queue, or on a subscription
// when sub is set.
func (c *sbClient) receiver(queue, sub string, opts *azservicebus.ReceiverOptions) *azservicebus.Receiver {
	c.f.tb.Helper()
	var r *azservicebus.Receiver
	var err error
	if sub != "" {
		r, err = c.c.NewReceiverForSubscription(queue, sub, opts)
	} else {
		r, err = c.c.NewReceiverForQueue(queue, opts)
	}
	if err != nil {
		c.f.tb.Fatal(err)
	}
	c.f.tb.Cleanup(func() { r.Close(context.Background()) })
	return r
}

func dlq() *azservicebus.ReceiverOptions {
	return &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter}
}

// receive receives up to n messages; when none come within a short while,
// it returns none.
func receive(tb testing.TB, r *azservicebus.Receiver, n int) []*azservicebus.ReceivedMessage {
	tb.Helper()
	c, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	msgs, err := r.ReceiveMessages(c, n, nil)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		tb.Fatal(err)
	}
	return msgs
}

// receiveAtLeast receives until it has want messages or 5 s have passed:
// ReceiveMessages returns once the first message has come and a little
// more time has passed, so under load one call may return fewer than are
// there.
func receiveAtLeast(tb testing.TB, r *azservicebus.Receiver, want int) []*azservicebus.ReceivedMessage {
	tb.Helper()
	var got []*azservicebus.ReceivedMessage
	for deadline := time.Now().Add(5 * time.Second); len(got) < want && time.Now().Before(deadline); {
		got = append(got, receive(tb, r, 10)...)
	}
	return got
}

// bodies peeks at every message of a receiver's entity.
func bodies(tb testing.TB, r *azservicebus.Receiver) []string {
	tb.Helper()
	seq := int64(0)
	msgs, err := r.PeekMessages(ctx(tb), 100, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &seq})
	if err != nil {
		tb.Fatal(err)
	}
	out := []string{}
	for _, m := range msgs {
		out = append(out, string(m.Body))
	}
	return out
}

func names(msgs []*azservicebus.ReceivedMessage) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, string(m.Body))
	}
	return out
}

func msg(body string, ttl time.Duration) *azservicebus.Message {
	m := &azservicebus.Message{Body: []byte(body)}
	if ttl > 0 {
		m.TimeToLive = &ttl
	}
	return m
}

func TestExpiryCountsFromEnqueue(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	// rule: SB-1
	c.send("q", msg("a", 10*time.Minute))
	f.advance(9 * time.Minute)
	c.send("q", msg("b", 10*time.Minute))
	f.advance(time.Minute)
	r := c.receiver("q", "", nil)
	got := receive(t, r, 10)
	if !slices.Equal(names(got), []string{"b"}) {
		t.Fatalf("after 10 minutes, received %v; want only b (a expired at enqueue + TTL)", names(got))
	}
	m := got[0]
	if m.EnqueuedTime == nil || !m.EnqueuedTime.Equal(t0.Add(9*time.Minute)) || m.ExpiresAt == nil || !m.ExpiresAt.Equal(t0.Add(19*time.Minute)) {
		t.Fatalf("enqueued %v expires %v; want %v and %v", m.EnqueuedTime, m.ExpiresAt, t0.Add(9*time.Minute), t0.Add(19*time.Minute))
	}
}

func TestEntityDefaultTTLIsDefaultAndCeiling(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = time.Hour })
	c := f.sb()
	// rule: SB-2
	c.send("q", msg("long", 2*time.Hour), msg("none", 0), msg("short", 30*time.Minute))
	r := c.receiver("q", "", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	f.advance(30 * time.Minute)
	if got := bodies(t, r); !slices.Equal(got, []string{"long", "none"}) {
		t.Fatalf("after 30 minutes: %v, want long and none", got)
	}
	f.advance(30 * time.Minute)
	if got := bodies(t, r); len(got) != 0 {
		t.Fatalf("after the entity's 1 h default: %v, want nothing (the 2 h TTL is cut to 1 h)", got)
	}
}

func TestReceivedTTLIsTheEffectiveOne(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = time.Hour })
	c := f.sb()
	// rule: SB-2
	c.send("q", msg("none", 0), msg("long", 2*time.Hour))
	got := receive(t, c.receiver("q", "", nil), 10)
	if len(got) != 2 || got[0].TimeToLive == nil || *got[0].TimeToLive != time.Hour || *got[1].TimeToLive != time.Hour {
		t.Fatalf("received %v; want both with TimeToLive 1h", names(got))
	}
}

func TestNothingSetNeverExpires(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	// rule: SB-3
	c.send("q", msg("forever", 0))
	f.advance(10 * 365 * 24 * time.Hour)
	if got := bodies(t, c.receiver("q", "", nil)); !slices.Equal(got, []string{"forever"}) {
		t.Fatalf("after 10 years: %v", got)
	}
}

func TestScheduledMessageExpiresFromItsScheduledTime(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	s, err := c.c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	// rule: SB-4
	at := t0.Add(5 * time.Minute)
	seqs, err := s.ScheduleMessages(ctx(t), []*azservicebus.Message{msg("scheduled", 10*time.Minute), msg("cancelled", 0)}, at, nil)
	if err != nil || len(seqs) != 2 {
		t.Fatalf("ScheduleMessages = %v, %v", seqs, err)
	}
	if err := s.CancelScheduledMessages(ctx(t), seqs[1:], nil); err != nil {
		t.Fatal(err)
	}
	m := msg("annotated", 10*time.Minute)
	m.ScheduledEnqueueTime = &at
	if err := s.SendMessage(ctx(t), m, nil); err != nil {
		t.Fatal(err)
	}
	r := c.receiver("q", "", nil)
	peeked, err := r.PeekMessages(ctx(t), 10, &azservicebus.PeekMessagesOptions{FromSequenceNumber: ptr(int64(0))})
	if err != nil || len(peeked) != 2 || peeked[0].State != azservicebus.MessageStateScheduled {
		t.Fatalf("peek before the scheduled time: %d messages, %v", len(peeked), err)
	}
	f.advance(4 * time.Minute)
	if got := receive(t, r, 10); len(got) != 0 {
		t.Fatalf("before the scheduled time, received %v", names(got))
	}
	f.advance(10 * time.Minute) // +14 min: 9 minutes after the scheduled enqueue
	got := receiveAtLeast(t, r, 2)
	// In either order, as a queue without sessions promises none: under
	// load, one call got "annotated" before "scheduled", both on their
	// first delivery (1 run in 60 with two cores busy). azservicebus
	// explains it: the empty receive above leaves its credit on the link,
	// so both go out as the clock moves, between two ReceiveMessages
	// calls, when the SDK's releaser releases what arrives (a release
	// counts no delivery); the next call can take "annotated" before
	// "scheduled" is back.
	ns := names(got)
	slices.Sort(ns)
	if !slices.Equal(ns, []string{"annotated", "scheduled"}) {
		t.Fatalf("at +14 min received %v; want the two scheduled ones, not the cancelled", names(got))
	}
	for _, m := range got {
		if err := r.AbandonMessage(ctx(t), m, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.advance(time.Minute) // +15 min = scheduled time + TTL
	if got := bodies(t, r); len(got) != 0 {
		t.Fatalf("at the scheduled time + TTL: %v, want nothing", got)
	}
}

func TestSubscriptionCopyGetsTheSmallestTTL(t *testing.T) {
	f := MustServer(t)
	f.MustTopic("t", func(p *atom.TopicProperties) { p.DefaultMessageTimeToLive = 5 * time.Minute })
	f.MustSubscription("t", "s", func(p *atom.SubscriptionProperties) { p.DefaultMessageTimeToLive = 10 * time.Minute })
	f.MustSubscription("t", "short", func(p *atom.SubscriptionProperties) { p.DefaultMessageTimeToLive = 2 * time.Minute })
	c := f.sb()
	// rule: SB-5
	c.send("t", msg("m", time.Hour))
	rs, rshort := c.receiver("t", "s", nil), c.receiver("t", "short", nil)
	f.advance(2 * time.Minute)
	if got := bodies(t, rshort); len(got) != 0 {
		t.Fatalf("subscription with a 2 min default still has %v", got)
	}
	if got := bodies(t, rs); len(got) != 1 {
		t.Fatalf("subscription s lost its copy too early: %v", got)
	}
	f.advance(3 * time.Minute)
	if got := bodies(t, rs); len(got) != 0 {
		t.Fatalf("after the topic's 5 min default: %v, want nothing", got)
	}
}

func TestReceiveNeverReturnsExpired(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	// rule: SB-6
	c.send("q", msg("old", time.Minute), msg("new", time.Hour))
	f.advance(time.Minute)
	got := receive(t, c.receiver("q", "", nil), 10)
	if !slices.Equal(names(got), []string{"new"}) {
		t.Fatalf("received %v, want only the live message", names(got))
	}
}

func TestLockedMessageDoesNotExpire(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) {
		p.LockDuration = 5 * time.Minute
		p.DeadLetteringOnMessageExpiration = true
	})
	c := f.sb()
	// rule: SB-7
	c.send("q", msg("completed", time.Minute), msg("abandoned", time.Minute), msg("lock-lost", time.Minute))
	r := c.receiver("q", "", nil)
	got := receive(t, r, 3)
	if len(got) != 3 {
		t.Fatalf("received %v", names(got))
	}
	f.advance(2 * time.Minute) // expired, but locked
	if err := r.CompleteMessage(ctx(t), got[0], nil); err != nil {
		t.Fatalf("completing a locked message past its expiry: %v", err)
	}
	if err := r.AbandonMessage(ctx(t), got[1], nil); err != nil {
		t.Fatal(err)
	}
	d := c.receiver("q", "", dlq())
	if got := bodies(t, d); !slices.Equal(got, []string{"abandoned"}) {
		t.Fatalf("dead letters after abandon: %v, want only the abandoned one (completed in time is never dead-lettered)", got)
	}
	f.advance(3 * time.Minute) // the third one's lock runs out
	if got := bodies(t, d); !slices.Equal(got, []string{"abandoned", "lock-lost"}) {
		t.Fatalf("dead letters after the lock ran out: %v", got)
	}
	if err := r.CompleteMessage(ctx(t), got[2], nil); err == nil {
		t.Fatal("completing a message whose lock ran out succeeded")
	} else if sbErr := (*azservicebus.Error)(nil); !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeLockLost {
		t.Fatalf("completing after the lock ran out: %v, want CodeLockLost", err)
	}
}

func TestExpiredMessagesAreDeadLetteredWhenAsked(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("dl", func(p *atom.QueueProperties) { p.DeadLetteringOnMessageExpiration = true })
	f.MustQueue("drop", nil)
	c := f.sb()
	// rule: SB-8
	c.send("dl", msg("x", time.Minute))
	c.send("drop", msg("y", time.Minute))
	f.advance(14 * 24 * time.Hour) // the dead-letter queue does not observe TTL
	got := receive(t, c.receiver("dl", "", dlq()), 10)
	if len(got) != 1 || got[0].DeadLetterReason == nil || *got[0].DeadLetterReason != "TTLExpiredException" || got[0].DeadLetterErrorDescription == nil {
		t.Fatalf("dead letters: %v", names(got))
	}
	if got := bodies(t, c.receiver("drop", "", dlq())); len(got) != 0 {
		t.Fatalf("without DeadLetteringOnMessageExpiration the message should be dropped, DLQ has %v", got)
	}
}

func TestDeferredMessagesExpireOnlyWhenReceived(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.DeadLetteringOnMessageExpiration = true })
	c := f.sb()
	// rule: SB-9
	c.send("q", msg("late", time.Minute), msg("live", time.Hour))
	r := c.receiver("q", "", nil)
	got := receive(t, r, 2)
	if len(got) != 2 {
		t.Fatalf("received %v", names(got))
	}
	for _, m := range got {
		if err := r.DeferMessage(ctx(t), m, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.advance(2 * time.Minute)
	if got := bodies(t, r); !slices.Equal(got, []string{"late", "live"}) {
		t.Fatalf("peek after expiry: %v; deferred messages stay visible", got)
	}
	d := c.receiver("q", "", dlq())
	if got := bodies(t, d); len(got) != 0 {
		t.Fatalf("a deferred message expired on its own: DLQ %v", got)
	}
	deferred, err := r.ReceiveDeferredMessages(ctx(t), []int64{*got[0].SequenceNumber, *got[1].SequenceNumber}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(deferred), []string{"live"}) {
		t.Fatalf("receive-by-sequence-number returned %v, want only the live one", names(deferred))
	}
	if err := r.CompleteMessage(ctx(t), deferred[0], nil); err != nil {
		t.Fatal(err)
	}
	if got := bodies(t, d); !slices.Equal(got, []string{"late"}) {
		t.Fatalf("the expired deferred message should be dead-lettered when received: DLQ %v", got)
	}
}

func TestIdleQueueIsDeleted(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("idle", func(p *atom.QueueProperties) { p.AutoDeleteOnIdle = 5 * time.Minute })
	f.MustQueue("peeked", func(p *atom.QueueProperties) { p.AutoDeleteOnIdle = 5 * time.Minute })
	c := f.sb()
	// rule: SB-10
	f.advance(4 * time.Minute)
	bodies(t, c.receiver("peeked", "", nil)) // a peek is a use
	f.advance(time.Minute)
	if got := f.s.Entities(); !slices.Equal(got, []string{"peeked"}) {
		t.Fatalf("entities after 5 idle minutes: %v, want only the peeked queue", got)
	}
	if err := f.s.CreateQueue("short", func() atom.QueueProperties {
		p := atom.DefaultQueue()
		p.AutoDeleteOnIdle = 4 * time.Minute
		return p
	}()); err == nil {
		t.Fatal("AutoDeleteOnIdle under 5 minutes was accepted")
	}
}

func TestPeekShowsTheStoredTTL(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = time.Hour })
	c := f.sb()
	// rule: SB-11
	c.send("q", msg("own", 10*time.Minute), msg("default", 0))
	r := c.receiver("q", "", nil)
	peeked, err := r.PeekMessages(ctx(t), 10, &azservicebus.PeekMessagesOptions{FromSequenceNumber: ptr(int64(0))})
	if err != nil || len(peeked) != 2 {
		t.Fatalf("peek: %d, %v", len(peeked), err)
	}
	if peeked[0].ExpiresAt == nil || !peeked[0].ExpiresAt.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("peek of a message with its own TTL: ExpiresAt %v, want %v", peeked[0].ExpiresAt, t0.Add(10*time.Minute))
	}
	if peeked[1].TimeToLive != nil && *peeked[1].TimeToLive != 0 {
		t.Fatalf("peek of a message with only the entity default shows TTL %v; the service computes it on receive", *peeked[1].TimeToLive)
	}
	got := receive(t, r, 2)
	if len(got) != 2 || got[1].ExpiresAt == nil || !got[1].ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("received %v; the default-TTL message should expire at %v", names(got), t0.Add(time.Hour))
	}
}

func TestDefaultTTLChangeAppliesToLaterMessages(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = time.Hour })
	c := f.sb()
	// rule: SB-12
	c.send("q", msg("before", 0))
	p := atom.DefaultQueue()
	p.DefaultMessageTimeToLive = 10 * time.Minute
	if err := f.s.UpdateQueue("q", p); err != nil {
		t.Fatal(err)
	}
	c.send("q", msg("after", 0))
	f.advance(10 * time.Minute)
	r := c.receiver("q", "", nil)
	if got := bodies(t, r); !slices.Equal(got, []string{"before"}) {
		t.Fatalf("after 10 minutes: %v, want the message sent before the change only", got)
	}
	f.advance(50 * time.Minute)
	if got := bodies(t, r); len(got) != 0 {
		t.Fatalf("after an hour: %v", got)
	}
	_ = adapters.TimeSpanMax
}

func TestReceivingFromASubscriptionKeepsItsTopic(t *testing.T) {
	f := MustServer(t)
	f.MustTopic("t", func(p *atom.TopicProperties) { p.AutoDeleteOnIdle = 5 * time.Minute }, "s")
	c := f.sb()
	c.send("t", msg("m", 0))
	f.advance(4 * time.Minute)
	// rule: SB-10
	if got := receive(t, c.receiver("t", "s", nil), 1); len(got) != 1 {
		t.Fatalf("received %v", names(got))
	}
	f.advance(2 * time.Minute)
	if got := f.s.Entities(); !slices.Equal(got, []string{"t", "t/Subscriptions/s"}) {
		t.Fatalf("entities 6 minutes after the send, 2 after a receive on the subscription: %v", got)
	}
	f.advance(5 * time.Minute)
	if got := f.s.Entities(); len(got) != 0 {
		t.Fatalf("entities after 5 idle minutes: %v", got)
	}
}

// rule: SB-4. A message scheduled on a topic is cancelled by one number
// for all its subscription copies; the server keeps that number only while
// a copy can still be cancelled, not for ever.
func TestTopicScheduleNumbersAreKeptOnlyWhileCancellable(t *testing.T) {
	f := MustServer(t)
	f.MustTopic("t", nil)
	f.MustSubscription("t", "s", nil)
	f.MustSubscription("t", "s2", nil)
	c := f.sb()
	s, err := c.c.NewSender("t", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	schedule := func(n int, at time.Time) []int64 {
		t.Helper()
		var seqs []int64
		for n > 0 {
			batch := make([]*azservicebus.Message, min(n, 500))
			for i := range batch {
				batch[i] = msg("m", 0)
			}
			got, err := s.ScheduleMessages(ctx(t), batch, at, nil)
			if err != nil || len(got) != len(batch) {
				t.Fatalf("ScheduleMessages = %d numbers, %v", len(got), err)
			}
			seqs = append(seqs, got...)
			n -= len(batch)
		}
		return seqs
	}
	schedule(1500, t0.Add(time.Minute))
	f.advance(2 * time.Minute) // the 1,500 are enqueued: past cancelling
	later := schedule(600, t0.Add(time.Hour))
	if n := f.s.ScheduledOnTopics(); n > 600 {
		t.Errorf("the server keeps %d topic schedule numbers, want at most the 600 still scheduled", n)
	}
	// The ones still scheduled are cancelled by their numbers, in both
	// subscriptions.
	if err := s.CancelScheduledMessages(ctx(t), later, nil); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"t/Subscriptions/s", "t/Subscriptions/s2"} {
		if got := f.counts(sub); got.Active != 1500 || got.Scheduled != 0 {
			t.Errorf("%s holds %+v, want the 1,500 enqueued and none of the cancelled", sub, got)
		}
	}
}
