package servicebus_test

import (
	"math"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Issue 31.2: the message properties the service sets, read through
// azservicebus. The service's behaviour comes from what its users
// reported, each named at its test.

// The service does not write the entity's default TTL into the message:
// a peek shows no TTL (azure-service-bus issue 432: ExpiresAt and
// TimeToLive at their largest on peek, with a one-day queue), and no
// creation-time or absolute-expiry-time is added, on peek or on receive;
// the receive path gives the effective TTL in the header (SB-11).
func TestIssue31_2_TheEntitysDefaultTTLAddsNoExpiryProperties_SB11(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = 24 * time.Hour })
	c := f.sb()
	// rule: SB-11
	c.send("q", msg("m", 0))
	r := c.receiver("q", "", nil)
	seq := int64(0)
	peeked, err := r.PeekMessages(ctx(t), 1, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &seq})
	if err != nil || len(peeked) != 1 {
		t.Fatalf("peek: %d messages, %v", len(peeked), err)
	}
	got := receive(t, r, 1)
	if len(got) != 1 {
		t.Fatalf("received %v", names(got))
	}
	for _, m := range []*azservicebus.ReceivedMessage{peeked[0], got[0]} {
		if p := m.RawAMQPMessage.Properties; p != nil && (p.CreationTime != nil || p.AbsoluteExpiryTime != nil) {
			t.Errorf("the service adds no creation-time (%v) nor absolute-expiry-time (%v)", p.CreationTime, p.AbsoluteExpiryTime)
		}
	}
	if ttl := peeked[0].TimeToLive; ttl != nil && *ttl != 0 {
		t.Errorf("peek shows a TTL of %v; the message carried none", *ttl)
	}
	if ttl := got[0].TimeToLive; ttl == nil || *ttl != 24*time.Hour {
		t.Errorf("receive shows a TTL of %v, want the queue's 24h", ttl)
	} else if want := got[0].EnqueuedTime.Add(24 * time.Hour); !got[0].ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt %v, want %v", got[0].ExpiresAt, want)
	}
}

// A TTL longer than the header's uint32 of milliseconds (49.7 days) comes
// as the largest one, 49.17:02:47.295, as users saw it from the service
// (azure-service-bus issue 678, azure-sdk-for-net issue 38875). Left out,
// azservicebus reads 0 and puts ExpiresAt at the enqueued time, as if the
// message had expired on arrival.
func TestIssue31_2_ATTLBeyondTheHeaderComesAsItsLargest_SB11(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = 60 * 24 * time.Hour })
	c := f.sb()
	// rule: SB-11
	c.send("q", msg("m", 0))
	got := receive(t, c.receiver("q", "", nil), 1)
	if len(got) != 1 {
		t.Fatalf("received %v", names(got))
	}
	want := time.Duration(math.MaxUint32) * time.Millisecond
	if ttl := got[0].TimeToLive; ttl == nil || *ttl != want {
		t.Fatalf("TTL %v, want %v", ttl, want)
	}
	if !got[0].ExpiresAt.After(*got[0].EnqueuedTime) {
		t.Errorf("ExpiresAt %v is not after the enqueued time %v", got[0].ExpiresAt, got[0].EnqueuedTime)
	}
}

// A defer counts the delivery: the deferred message's delivery count, on
// peek and on receive by sequence number, counts the delivery that
// deferred it (the JavaScript SDK's own deferred-message tests: 0 on the
// first receive, 1 once deferred, 2 after a second defer; azservicebus
// adds one), and the defer that reaches MaxDeliveryCount dead-letters the
// message as an abandon would (azure-service-bus issue 375, by design).
func TestIssue31_2_ADeferCountsTheDelivery_SB9(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	f.MustQueue("once", func(p *atom.QueueProperties) { p.MaxDeliveryCount = 1 })
	c := f.sb()
	// rule: SB-9
	c.send("q", msg("d", 0))
	r := c.receiver("q", "", nil)
	got := receive(t, r, 1)
	if len(got) != 1 || got[0].DeliveryCount != 1 {
		t.Fatalf("received %v", got)
	}
	seq := *got[0].SequenceNumber
	if err := r.DeferMessage(ctx(t), got[0], nil); err != nil {
		t.Fatal(err)
	}
	from := int64(0)
	peeked, err := r.PeekMessages(ctx(t), 1, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &from})
	if err != nil || len(peeked) != 1 || peeked[0].DeliveryCount != 2 {
		t.Fatalf("peek of the deferred message: %v %v, want delivery count 2", peeked, err)
	}
	for round, want := range []uint32{2, 3} {
		d, err := r.ReceiveDeferredMessages(ctx(t), []int64{seq}, nil)
		if err != nil || len(d) != 1 || d[0].DeliveryCount != want {
			t.Fatalf("receive deferred, round %d: %v %v, want delivery count %d", round, d, err, want)
		}
		if err := r.DeferMessage(ctx(t), d[0], nil); err != nil {
			t.Fatal(err)
		}
	}

	c.send("once", msg("x", 0))
	r = c.receiver("once", "", nil)
	got = receive(t, r, 1)
	if len(got) != 1 {
		t.Fatalf("received %v", names(got))
	}
	if err := r.DeferMessage(ctx(t), got[0], nil); err != nil {
		t.Fatalf("the defer that reaches the limit: %v", err)
	}
	if left, err := r.PeekMessages(ctx(t), 1, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &from}); err != nil || len(left) != 0 {
		t.Fatalf("the queue still holds %v (%v)", left, err)
	}
	dead := receive(t, c.receiver("once", "", dlq()), 1)
	if len(dead) != 1 || dead[0].DeadLetterReason == nil || *dead[0].DeadLetterReason != "MaxDeliveryCountExceeded" {
		t.Fatalf("dead letters %v", dead)
	}
}
