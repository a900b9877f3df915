package servicebus_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// deliveredHeaders returns the header section, as written, of every
// message the server sent through the tap, by body: the messages of
// deliveries and those inside $management replies (peek).
func deliveredHeaders(t *testing.T, tp *tap) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	add := func(raw []byte) {
		secs, err := codec.SplitSections(raw)
		if err != nil {
			t.Fatalf("a message the server sent does not split: %v", err)
		}
		m, err := codec.UnmarshalMessage(raw)
		if err != nil {
			t.Fatalf("a message the server sent does not decode: %v", err)
		}
		body := string(bytes.Join(m.Data, nil))
		var hdr []byte
		for _, s := range secs {
			if s.Code == 0x70 {
				hdr = s.Raw
			}
		}
		out[body] = append(out[body], hdr)
	}
	for _, conn := range tp.serverFrames() {
		for _, b := range conn {
			f, _, err := codec.ParseFrame(b, 1<<20)
			if err != nil {
				t.Fatalf("a frame the server sent does not decode: %v", err)
			}
			if _, ok := f.Body.(*codec.Transfer); !ok {
				continue
			}
			m, err := codec.UnmarshalMessage(f.Payload)
			if err != nil {
				t.Fatalf("a transfer's message does not decode: %v", err)
			}
			if _, reply := m.ApplicationProperties.Get("statusCode"); !reply {
				add(f.Payload)
				continue
			}
			body, _ := m.Value.(codec.Map)
			list, _ := body.Get("messages")
			entries, _ := list.([]any)
			for _, e := range entries {
				entry, _ := e.(codec.Map)
				if raw, ok := entry.Get("message"); ok {
					add(raw.([]byte))
				}
			}
		}
	}
	return out
}

func TestDeliveredHeaderCarriesDeliveryCountAtZero(t *testing.T) {
	// issue 13.2: the header of every message the server hands out, on
	// receive and on peek, carries delivery-count even at 0, as the
	// service's do; ttl only when the message has one; durable, priority
	// and first-acquirer only as the sender set them.
	f := MustServer(t)
	f.MustQueue("q", nil)
	f.MustQueue("ttl", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = time.Hour })
	tp := f.MustTap(t)
	s := MustSession(t, MustDialAMQPTo(t, tp.Addr(), "q", "ttl"))
	MustSend(t, MustSender(t, s, "q"), &amqp.Message{Data: [][]byte{[]byte("plain")}})
	MustSend(t, MustSender(t, s, "q"), &amqp.Message{Header: &amqp.MessageHeader{Durable: true, Priority: 9}, Data: [][]byte{[]byte("durable")}})
	MustSend(t, MustSender(t, s, "ttl"), &amqp.Message{Data: [][]byte{[]byte("ttl")}})
	r := MustReceiver(t, s, "q", peekLock())
	for range 2 {
		if err := r.AcceptMessage(ctx(t), MustReceive(t, r)); err != nil {
			t.Fatal(err)
		}
	}
	MustReceive(t, MustReceiver(t, s, "ttl", peekLock()))

	// peek (a $management reply) and azservicebus's delivery count
	sb, err := azservicebus.NewClientFromConnectionString("Endpoint=sb://"+tp.Addr()+";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx(t))
	rcv, err := sb.NewReceiverForQueue("ttl", nil)
	if err != nil {
		t.Fatal(err)
	}
	// locked by its first delivery: that delivery counts once it fails
	if ms, err := rcv.PeekMessages(ctx(t), 10, nil); err != nil || len(ms) != 1 || ms[0].DeliveryCount != 1 {
		t.Fatalf("peek: %v, %v; want one message that azservicebus counts as delivered once", ms, err)
	}
	sb.Close(ctx(t))
	s.Close(ctx(t))
	tp.mu.Lock()
	for _, c := range tp.conns {
		c.client.Close() // go-amqp's connection, which stays open until the test ends
	}
	tp.mu.Unlock()
	tp.waitClosed()

	// header: list of 5, null durable, priority, ttl, first-acquirer, then
	// delivery-count uint0
	zero := []byte{0x00, 0x53, 0x70, 0xc0, 6, 5, 0x40, 0x40, 0x40, 0x40, 0x43}
	want := map[string][][]byte{
		"plain":   {zero},
		"durable": {{0x00, 0x53, 0x70, 0xc0, 7, 5, 0x41, 0x50, 9, 0x40, 0x40, 0x43}},
		// ttl 3600000 ms
		"ttl": {
			{0x00, 0x53, 0x70, 0xc0, 10, 5, 0x40, 0x40, 0x70, 0x00, 0x36, 0xee, 0x80, 0x40, 0x43}, // received
			{0x00, 0x53, 0x70, 0xc0, 6, 5, 0x40, 0x40, 0x40, 0x40, 0x43},                          // peeked: the message's own, none (SB-11)
		},
	}
	got := deliveredHeaders(t, tp)
	for body, w := range want {
		if len(got[body]) != len(w) {
			t.Errorf("%s: the server sent it %d times, want %d", body, len(got[body]), len(w))
			continue
		}
		for i := range w {
			if !bytes.Equal(got[body][i], w[i]) {
				t.Errorf("%s (%d): header % x, want % x", body, i, got[body][i], w[i])
			}
		}
	}
}
