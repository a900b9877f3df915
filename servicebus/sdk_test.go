package servicebus_test

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func TestSendReceiveComplete(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("orders", nil)
	c := f.MustClient()
	snd, err := c.NewSender("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close(ctx(t))
	if err := snd.SendMessage(ctx(t), &azservicebus.Message{Body: []byte("hello")}, nil); err != nil {
		t.Fatal(err)
	}
	rcv, err := c.NewReceiverForQueue("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close(ctx(t))
	msgs, err := rcv.ReceiveMessages(ctx(t), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || string(msgs[0].Body) != "hello" {
		t.Fatalf("received %d messages: %+v", len(msgs), msgs)
	}
	m := msgs[0]
	if m.SequenceNumber == nil || *m.SequenceNumber != 1 || m.DeliveryCount != 1 || m.LockedUntil == nil || m.EnqueuedTime == nil {
		t.Fatalf("message properties: seq %v count %d lockedUntil %v enqueued %v", m.SequenceNumber, m.DeliveryCount, m.LockedUntil, m.EnqueuedTime)
	}
	if err := rcv.CompleteMessage(ctx(t), m, nil); err != nil {
		t.Fatal(err)
	}
	peeked, err := rcv.PeekMessages(ctx(t), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(peeked) != 0 {
		t.Fatalf("after complete, peek shows %d messages", len(peeked))
	}
}
