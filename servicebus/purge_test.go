package servicebus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/core"
)

// issue 15.11: the dashboard's purge of a Service Bus queue
// (core.Engine.PurgeAll) deletes every message, the locked, deferred and
// scheduled ones too; the receiver holding a purged message's lock then
// fails to complete it with the service's lock-lost error, and finds
// neither the deferred message (404, as the service answers for a missing
// one) nor any other.
func TestPurgedLockedMessageCannotBeCompleted(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	c.send("q", msg("locked", 0), msg("deferred", 0), msg("active", 0))
	s, err := c.c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if _, err := s.ScheduleMessages(ctx(t), []*azservicebus.Message{msg("scheduled", 0)}, f.clock.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	r := c.receiver("q", "", nil)
	got := receive(t, r, 2)
	if len(got) != 2 {
		t.Fatalf("received %v", names(got))
	}
	if err := r.DeferMessage(ctx(t), got[1], nil); err != nil {
		t.Fatal(err)
	}

	n, commit, err := f.e.PurgeAll(f.clock.Now(), core.EntityKey{Protocol: core.ServiceBus, Name: "q"})
	if err != nil || n != 4 {
		t.Fatalf("PurgeAll = %d, %v; want the 4 messages", n, err)
	}
	if err := commit.Wait(ctx(t)); err != nil {
		t.Fatal(err)
	}

	if err := r.CompleteMessage(ctx(t), got[0], nil); err == nil {
		t.Fatal("completing a purged locked message succeeded")
	} else if sbErr := (*azservicebus.Error)(nil); !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeLockLost {
		t.Fatalf("completing a purged locked message: %v, want CodeLockLost", err)
	}
	// The service answers 404 for a deferred message that is not there.
	deferred, err := r.ReceiveDeferredMessages(ctx(t), []int64{*got[1].SequenceNumber}, nil)
	if sbErr := (*azservicebus.Error)(nil); len(deferred) != 0 || !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeNotFound {
		t.Errorf("the purged deferred message: %v, %v; want CodeNotFound", names(deferred), err)
	}
	if left := bodies(t, r); len(left) != 0 {
		t.Errorf("messages after the purge: %v", left)
	}
}
