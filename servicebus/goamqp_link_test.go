package servicebus_test

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/lapse-emulator/lapse/servicebus"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// TestGoAMQPSettleModesEchoed checks that the server's attach carries the
// settle modes the client asked for; go-amqp detaches when it does not
// (servicebus.md §2.3).
func TestGoAMQPSettleModesEchoed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		attach   func(t *testing.T, s *amqp.Session) error
		snd, rcv uint8
	}{
		{"SenderMixedFirst", func(t *testing.T, s *amqp.Session) error {
			_, err := s.NewSender(ctx(t), "q", &amqp.SenderOptions{
				SettlementMode:              amqp.SenderSettleModeMixed.Ptr(),
				RequestedReceiverSettleMode: amqp.ReceiverSettleModeFirst.Ptr(),
			})
			return err
		}, codec.SndMixed, codec.RcvFirst},
		{"PeekLockReceiverSecond", func(t *testing.T, s *amqp.Session) error {
			_, err := s.NewReceiver(ctx(t), "q", &amqp.ReceiverOptions{
				SettlementMode:            amqp.ReceiverSettleModeSecond.Ptr(),
				RequestedSenderSettleMode: amqp.SenderSettleModeUnsettled.Ptr(),
				Credit:                    -1,
			})
			return err
		}, codec.SndUnsettled, codec.RcvSecond},
		{"ReceiveAndDeleteSettledFirst", func(t *testing.T, s *amqp.Session) error {
			_, err := s.NewReceiver(ctx(t), "q", receiveAndDelete())
			return err
		}, codec.SndSettled, codec.RcvFirst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustServer(t)
			f.MustQueue("q", nil)
			tp := f.MustTap(t)
			c := MustDialAMQPTo(t, tp.Addr(), "q")
			if err := tc.attach(t, MustSession(t, c)); err != nil {
				t.Fatalf("attach: %v", err)
			}
			var got *codec.Attach
			for _, a := range performativesOf[*codec.Attach](tp.serverPerformatives()) {
				if (a.Source != nil && a.Source.Address == "q") || (a.Target != nil && a.Target.Address == "q") {
					got = a
				}
			}
			if got == nil {
				t.Fatal("the server sent no attach for q")
			}
			if got.SndSettleMode == nil || *got.SndSettleMode != tc.snd || got.RcvSettleMode == nil || *got.RcvSettleMode != tc.rcv {
				t.Errorf("server attach: snd-settle-mode %v rcv-settle-mode %v, want %d and %d",
					deref(got.SndSettleMode), deref(got.RcvSettleMode), tc.snd, tc.rcv)
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestGoAMQPMaxMessageSize checks the sender attach's max-message-size and
// that the server refuses a message over it, also one that arrives in
// several frames.
func TestGoAMQPMaxMessageSize(t *testing.T) {
	t.Run("DefaultOnSenderAttach", func(t *testing.T) {
		f := MustServer(t)
		f.MustQueue("q", nil)
		snd := MustSender(t, MustSession(t, f.MustDialAMQP(t, "q")), "q")
		if got := snd.MaxMessageSize(); got != 262144 {
			t.Fatalf("max-message-size %d, want 262144", got)
		}
		// go-amqp refuses a larger message itself, with the condition the
		// SDK maps to ErrMessageTooLarge
		err := snd.Send(ctx(t), amqp.NewMessage(make([]byte, 262144)), nil)
		if remoteErr(err) != amqp.ErrCondMessageSizeExceeded {
			t.Fatalf("sending 256 KiB of data: %v, want %s", err, amqp.ErrCondMessageSizeExceeded)
		}
	})
	t.Run("ServerRefusesLarger", func(t *testing.T) {
		f := MustServerWith(t, func(c *servicebus.Config) { c.MaxMessageSize = 1024 })
		f.MustQueue("q", nil)
		r := f.MustDialRaw(t)
		r.send(&codec.Attach{Name: "big", Handle: 0, Role: codec.RoleSender,
			SndSettleMode: ptrTo(codec.SndMixed), RcvSettleMode: ptrTo(codec.RcvFirst),
			Source: &codec.Source{Address: "raw"}, Target: &codec.Target{Address: "q"}, InitialDeliveryCount: ptrTo(uint32(0))}, nil)
		if a := rawNext[*codec.Attach](r); a.MaxMessageSize != 1024 {
			t.Fatalf("attach max-message-size %d, want 1024", a.MaxMessageSize)
		}
		if fl := rawNext[*codec.Flow](r); fl.LinkCredit == nil || *fl.LinkCredit == 0 {
			t.Fatalf("no credit for the sender: %+v", fl)
		}
		big, err := amqp.NewMessage(bytes.Repeat([]byte("x"), 1500)).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		// in two frames: 800 bytes, then the rest
		r.send(&codec.Transfer{Handle: 0, DeliveryID: ptrTo(uint32(0)), DeliveryTag: []byte("0"), MessageFormat: ptrTo(uint32(0)), More: true}, big[:800])
		r.send(&codec.Transfer{Handle: 0}, big[800:])
		d := rawNext[*codec.Disposition](r)
		rej, ok := d.State.(*codec.Rejected)
		if d.First != 0 || !d.Settled || !ok || rej.Error == nil || rej.Error.Condition != "amqp:link:message-size-exceeded" {
			t.Fatalf("disposition %+v state %+v, want delivery 0 settled rejected with amqp:link:message-size-exceeded", d, d.State)
		}
		small, _ := amqp.NewMessage([]byte("small")).MarshalBinary()
		r.send(&codec.Transfer{Handle: 0, DeliveryID: ptrTo(uint32(1)), DeliveryTag: []byte("1"), MessageFormat: ptrTo(uint32(0))}, small)
		if d := rawNext[*codec.Disposition](r); d.First != 1 {
			t.Fatalf("disposition %+v, want one for delivery 1", d)
		} else if _, ok := d.State.(*codec.Accepted); !ok {
			t.Fatalf("the small message: %+v, want accepted", d.State)
		}
		if c := f.counts("q"); c.Active != 1 {
			t.Fatalf("the queue holds %d messages, want only the small one", c.Active)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

// TestGoAMQPReceivedMessageTypes checks the AMQP types of what a received
// message carries, which the SDK asserts without checks
// (servicebus.md §2.6).
func TestGoAMQPReceivedMessageTypes(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	s := MustSession(t, f.MustDialAMQP(t, "q"))
	MustSend(t, MustSender(t, s, "q"), &amqp.Message{Data: [][]byte{[]byte("hello")}, ApplicationProperties: map[string]any{"k": "v"}})
	r := MustReceiver(t, s, "q", peekLock())
	m := MustReceive(t, r)

	if seq, ok := m.Annotations["x-opt-sequence-number"].(int64); !ok || seq != 1 {
		t.Errorf("x-opt-sequence-number %#v, want int64 1", m.Annotations["x-opt-sequence-number"])
	}
	if at, ok := m.Annotations["x-opt-enqueued-time"].(time.Time); !ok || !at.Equal(t0) {
		t.Errorf("x-opt-enqueued-time %#v, want the time.Time %v", m.Annotations["x-opt-enqueued-time"], t0)
	}
	if until, ok := m.Annotations["x-opt-locked-until"].(time.Time); !ok || !until.Equal(t0.Add(time.Minute)) {
		t.Errorf("x-opt-locked-until %#v, want the time.Time %v", m.Annotations["x-opt-locked-until"], t0.Add(time.Minute))
	}
	tok, ok := m.DeliveryAnnotations["x-opt-lock-token"].(amqp.UUID)
	if !ok {
		t.Fatalf("delivery annotation x-opt-lock-token %#v, want an amqp.UUID", m.DeliveryAnnotations["x-opt-lock-token"])
	}
	if !bytes.Equal(m.DeliveryTag, dotnetOrder(tok)) {
		t.Errorf("delivery tag %x, want the lock token %x in .NET GUID order %x", m.DeliveryTag, tok[:], dotnetOrder(tok))
	}
	if m.Header == nil || m.Header.DeliveryCount != 0 {
		t.Errorf("header %+v, want delivery-count 0 on the first delivery", m.Header)
	}
	if string(m.GetData()) != "hello" || m.ApplicationProperties["k"] != "v" {
		t.Errorf("body %q properties %v", m.GetData(), m.ApplicationProperties)
	}

	// dead-lettered: the reason and description as string properties
	err := r.RejectMessage(ctx(t), m, &amqp.Error{Condition: "com.microsoft:dead-letter",
		Info: map[string]any{"DeadLetterReason": "Bad", "DeadLetterErrorDescription": "it was bad"}})
	if err != nil {
		t.Fatalf("dead-lettering: %v", err)
	}
	dl := MustReceive(t, MustReceiver(t, s, "q/$DeadLetterQueue", peekLock()))
	if v, ok := dl.ApplicationProperties["DeadLetterReason"].(string); !ok || v != "Bad" {
		t.Errorf("DeadLetterReason %#v, want the string %q", dl.ApplicationProperties["DeadLetterReason"], "Bad")
	}
	if v, ok := dl.ApplicationProperties["DeadLetterErrorDescription"].(string); !ok || v != "it was bad" {
		t.Errorf("DeadLetterErrorDescription %#v, want the string %q", dl.ApplicationProperties["DeadLetterErrorDescription"], "it was bad")
	}
	if dl.ApplicationProperties["k"] != "v" || string(dl.GetData()) != "hello" {
		t.Errorf("the dead letter lost the message: body %q properties %v", dl.GetData(), dl.ApplicationProperties)
	}
}

// TestGoAMQPMultiFrameTransfer sends and receives a message larger than
// go-amqp's max-frame-size (65536), which both sides split into several
// transfer frames.
func TestGoAMQPMultiFrameTransfer(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	tp := f.MustTap(t)
	s := MustSession(t, MustDialAMQPTo(t, tp.Addr(), "q"))
	body := make([]byte, 200*1024)
	rng := rand.NewChaCha8([32]byte{1})
	rng.Read(body)
	MustSend(t, MustSender(t, s, "q"), amqp.NewMessage(body))
	for _, rd := range []struct {
		name string
		opts *amqp.ReceiverOptions
	}{{"PeekLock", peekLock()}, {"ReceiveAndDelete", receiveAndDelete()}} {
		r := MustReceiver(t, s, "q", rd.opts)
		m := MustReceive(t, r)
		if !bytes.Equal(m.GetData(), body) {
			t.Fatalf("%s: received %d bytes, not the %d sent", rd.name, len(m.GetData()), len(body))
		}
		if rd.name == "PeekLock" {
			if err := r.ReleaseMessage(ctx(t), m); err != nil {
				t.Fatal(err)
			}
		}
		r.Close(ctx(t))
	}
	// the server's transfers: more than one frame for each delivery, none
	// over the client's max-frame-size
	var frames, more int
	for _, conn := range tp.serverFrames() {
		for _, b := range conn {
			fr, _, err := codec.ParseFrame(b, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if tr, ok := fr.Body.(*codec.Transfer); ok {
				frames++
				if tr.More {
					more++
				}
				if len(b) > 65536 {
					t.Errorf("a transfer frame of %d bytes, over the client's max-frame-size 65536", len(b))
				}
			}
		}
	}
	if more < 2*3 {
		t.Errorf("the server sent %d transfer frames, %d with more=true; want each 200 KiB delivery in at least 4 frames", frames, more)
	}
}

// TestGoAMQPBatch sends a batch as azservicebus does: message-format
// 0x80013700 and one data section per encoded message
// (servicebus.md §2.3). Each becomes a message of its own.
func TestGoAMQPBatch(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	s := MustSession(t, f.MustDialAMQP(t, "q"))
	batch := &amqp.Message{Format: 0x80013700}
	for _, b := range []string{"one", "two", "three"} {
		m := &amqp.Message{Data: [][]byte{[]byte(b)}, ApplicationProperties: map[string]any{"body": b}}
		raw, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		batch.Data = append(batch.Data, raw)
	}
	MustSend(t, MustSender(t, s, "q"), batch)
	if c := f.counts("q"); c.Active != 3 {
		t.Fatalf("the queue holds %d messages, want 3", c.Active)
	}
	r := MustReceiver(t, s, "q", receiveAndDelete())
	for i, want := range []string{"one", "two", "three"} {
		m := MustReceive(t, r)
		if string(m.GetData()) != want || m.ApplicationProperties["body"] != want {
			t.Errorf("message %d: body %q properties %v, want %q", i, m.GetData(), m.ApplicationProperties, want)
		}
		if seq := m.Annotations["x-opt-sequence-number"]; seq != int64(i+1) {
			t.Errorf("message %d: sequence number %v, want %d", i, seq, i+1)
		}
	}
}

// TestGoAMQPAttachErrors checks the error conditions of refused attaches
// and put-tokens (servicebus.md §2.2, §2.3, §2.8).
func TestGoAMQPAttachErrors(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	f.MustQueue("sessions", func(p *atom.QueueProperties) { p.RequiresSession = true })

	t.Run("UnknownEntitySender", func(t *testing.T) {
		s := MustSession(t, f.MustDialAMQP(t, "nope"))
		_, err := s.NewSender(ctx(t), "nope", nil)
		if remoteErr(err) != amqp.ErrCondNotFound {
			t.Fatalf("attaching a sender to an unknown queue: %v, want %s", err, amqp.ErrCondNotFound)
		}
	})
	t.Run("UnknownEntityReceiver", func(t *testing.T) {
		s := MustSession(t, f.MustDialAMQP(t, "nope"))
		_, err := s.NewReceiver(ctx(t), "nope", peekLock())
		if remoteErr(err) != amqp.ErrCondNotFound {
			t.Fatalf("attaching a receiver to an unknown queue: %v, want %s", err, amqp.ErrCondNotFound)
		}
	})
	t.Run("NoToken", func(t *testing.T) {
		s := MustSession(t, f.MustDialAMQP(t))
		_, err := s.NewSender(ctx(t), "q", nil)
		if remoteErr(err) != amqp.ErrCondUnauthorizedAccess {
			t.Fatalf("sender without a token: %v, want %s", err, amqp.ErrCondUnauthorizedAccess)
		}
		_, err = s.NewReceiver(ctx(t), "q", peekLock())
		if remoteErr(err) != amqp.ErrCondUnauthorizedAccess {
			t.Fatalf("receiver without a token: %v, want %s", err, amqp.ErrCondUnauthorizedAccess)
		}
	})
	t.Run("TokenForAnotherEntity", func(t *testing.T) {
		s := MustSession(t, f.MustDialAMQP(t, "sessions"))
		_, err := s.NewSender(ctx(t), "q", nil)
		if remoteErr(err) != amqp.ErrCondUnauthorizedAccess {
			t.Fatalf("sender with a token for another queue: %v, want %s", err, amqp.ErrCondUnauthorizedAccess)
		}
	})
	t.Run("PutTokenSignedByAnotherKey", func(t *testing.T) {
		c := f.MustDialAMQP(t)
		addr := f.ln.Addr().String()
		aud := "amqp://" + addr + "/q"
		resp, err := putToken(ctx(t), c, aud, sas.Sign(sas.Key{Name: servicebus.DefaultKey.Name, Value: "another key"}, aud, time.Now().Add(time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		if st, ok := resp.ApplicationProperties["status-code"].(int32); !ok || st != 401 {
			t.Fatalf("status-code %#v, want the int32 401", resp.ApplicationProperties["status-code"])
		}
		// and the token authorizes nothing
		_, err = MustSession(t, c).NewSender(ctx(t), "q", nil)
		if remoteErr(err) != amqp.ErrCondUnauthorizedAccess {
			t.Fatalf("sender after a refused token: %v, want %s", err, amqp.ErrCondUnauthorizedAccess)
		}
	})
	t.Run("ReceiverOnSessionQueue", func(t *testing.T) {
		s := MustSession(t, f.MustDialAMQP(t, "sessions"))
		_, err := s.NewReceiver(ctx(t), "sessions", peekLock())
		if err == nil {
			t.Fatal("a receiver without a session filter attached to a queue that requires sessions")
		}
		if c := remoteErr(err); c != amqp.ErrCondNotAllowed {
			t.Fatalf("receiver on a session queue: %v, want %s", err, amqp.ErrCondNotAllowed)
		}
	})
	t.Run("SessionStillUsable", func(t *testing.T) {
		// a refused attach detaches the link only: the session goes on
		s := MustSession(t, f.MustDialAMQP(t, "q"))
		if _, err := s.NewSender(ctx(t), "nope", nil); err == nil {
			t.Fatal("attached to an unknown queue")
		}
		MustSend(t, MustSender(t, s, "q"), amqp.NewMessage([]byte("after")))
	})
}

// MustDeleteQueue deletes a queue through the administration API, as
// the SDK's admin client does.
func (f *fixture) MustDeleteQueue(tb testing.TB, name string) {
	tb.Helper()
	u := f.admin.URL + "/" + name + "?api-version=2024-05"
	req, err := http.NewRequestWithContext(ctx(tb), http.MethodDelete, u, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", sas.Sign(servicebus.DefaultKey, u, time.Now().Add(time.Hour)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("DELETE /%s: %s", name, resp.Status)
	}
}

// TestGoAMQPServerDetachKeepsSession deletes a queue under an attached
// receiver: the server detaches the link with amqp:not-found, and the
// client's answering detach leaves the session usable.
func TestGoAMQPServerDetachKeepsSession(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	f.MustQueue("q2", nil)
	s := MustSession(t, f.MustDialAMQP(t, "q", "q2"))
	r := MustReceiver(t, s, "q", peekLock())
	if err := r.IssueCredit(1); err != nil {
		t.Fatal(err)
	}
	f.MustDeleteQueue(t, "q")
	if _, err := r.Receive(ctx(t), nil); remoteErr(err) != amqp.ErrCondNotFound {
		t.Fatalf("receiving from a deleted queue: %v, want %s", err, amqp.ErrCondNotFound)
	}
	MustSend(t, MustSender(t, s, "q2"), amqp.NewMessage([]byte("after")))
}

// TestServerDetachIgnoresFramesInFlight plays the race the test above
// can lose: the client's flow for a link crosses the server's detach of
// it. Until the client answers the detach, frames for the handle are
// ignored (§2.6.5), and the session stays up for the next link on the
// same handle.
func TestServerDetachIgnoresFramesInFlight(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	f.MustQueue("q2", nil)
	r := f.MustDialRaw(t)
	r.send(&codec.Attach{Name: "rcv", Handle: 0, Role: codec.RoleReceiver,
		SndSettleMode: ptrTo(codec.SndUnsettled), RcvSettleMode: ptrTo(codec.RcvFirst),
		Source: &codec.Source{Address: "q"}, Target: &codec.Target{Address: "raw"}}, nil)
	rawNext[*codec.Attach](r)
	f.MustDeleteQueue(t, "q")
	if d := rawNext[*codec.Detach](r); d.Handle != 0 || d.Error == nil || d.Error.Condition != "amqp:not-found" {
		t.Fatalf("detach %+v, want handle 0 with amqp:not-found", d)
	}
	r.flow(0, 0, 10, false) // sent before the client read the detach
	r.send(&codec.Detach{Handle: 0, Closed: true}, nil)
	r.send(&codec.Attach{Name: "snd", Handle: 0, Role: codec.RoleSender,
		SndSettleMode: ptrTo(codec.SndMixed), RcvSettleMode: ptrTo(codec.RcvFirst),
		Source: &codec.Source{Address: "raw"}, Target: &codec.Target{Address: "q2"}, InitialDeliveryCount: ptrTo(uint32(0))}, nil)
	if a := rawNext[*codec.Attach](r); a.Name != "snd" || a.Target == nil || a.Target.Address != "q2" {
		t.Fatalf("attach %+v, want the sender to q2", a)
	}
}

// TestGoAMQPSessionCountsTransferFrames checks the server's session
// next-outgoing-id (§2.5.6) against the transfer frames it sent, for
// deliveries whose size is right at a frame boundary.
func TestGoAMQPSessionCountsTransferFrames(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	tp := f.MustTap(t)
	s := MustSession(t, MustDialAMQPTo(t, tp.Addr(), "q"))
	snd := MustSender(t, s, "q")
	r := MustReceiver(t, s, "q", receiveAndDelete())
	// one message to learn what the server adds to a body of this size
	MustSend(t, snd, amqp.NewMessage(make([]byte, 65000)))
	MustReceive(t, r)
	var payload int
	for _, conn := range tp.serverFrames() {
		for _, b := range conn {
			if fr, _, err := codec.ParseFrame(b, 1<<20); err == nil {
				if _, ok := fr.Body.(*codec.Transfer); ok {
					payload = max(payload, len(fr.Payload)) // not the put-token's response
				}
			}
		}
	}
	overhead := payload - 65000
	// bodies whose deliveries fill the first frame to the last byte or
	// nearly: 65536 less the frame header and the transfer performative
	for body := 65536 - 8 - 64 - overhead; body <= 65536-8-24-overhead; body++ {
		MustSend(t, snd, amqp.NewMessage(make([]byte, body)))
		MustReceive(t, r)
	}
	if err := r.IssueCredit(1); err != nil {
		t.Fatal(err)
	}
	if err := r.DrainCredit(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	// the transfers of the receiver's session before the drain reply; a
	// session that ended left its channel to the next one
	sent := map[uint16]uint32{}
	var last *codec.Flow
	var lastSent uint32
	for _, conn := range tp.serverFrames() {
		for _, b := range conn {
			fr, _, err := codec.ParseFrame(b, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			switch p := fr.Body.(type) {
			case *codec.Begin:
				sent[fr.Channel] = 0
			case *codec.Transfer:
				sent[fr.Channel]++
			case *codec.Flow:
				if p.Drain {
					last, lastSent = p, sent[fr.Channel]
				}
			}
		}
	}
	if last == nil {
		t.Fatal("no drain reply")
	}
	if last.NextOutgoingID != lastSent {
		t.Fatalf("the server's next-outgoing-id is %d after it sent %d transfer frames", last.NextOutgoingID, lastSent)
	}
}

// A sender closed while its deliveries are still being committed gets no
// disposition after its detach: go-amqp ends the session on a disposition
// for a link it has let go. The session stays up for the next link.
func TestNoDispositionAfterSenderDetach(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	s := MustSession(t, f.MustDialAMQP(t, "q"))
	for round := range 20 {
		snd, err := s.NewSender(ctx(t), "q", nil)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for range 100 {
			if _, err := snd.SendWithReceipt(ctx(t), amqp.NewMessage([]byte("m")), nil); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if err := snd.Close(ctx(t)); err != nil {
			t.Fatalf("round %d: closing the sender: %v", round, err)
		}
	}
	// Every message was stored, and the session still receives.
	if got := f.counts("q").Active; got != 2000 {
		t.Errorf("%d messages stored, want 2000", got)
	}
	MustReceive(t, MustReceiver(t, s, "q", receiveAndDelete()))
}

// A receiver closed while the server streams its credit gets no transfer
// after its detach: go-amqp ends the session on a transfer for a link it
// has let go. The session stays up for the next link.
func TestNoTransferAfterReceiverDetach(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	s := MustSession(t, f.MustDialAMQP(t, "q"))
	snd := MustSender(t, s, "q")
	// Enough for 20 rounds of 100 credits taken in receive-and-delete
	// mode (what was taken and not sent before a detach is lost, as at
	// most once allows).
	for range 4000 {
		if _, err := snd.SendWithReceipt(ctx(t), amqp.NewMessage(make([]byte, 1000)), nil); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 20 {
		r, err := s.NewReceiver(ctx(t), "q", &amqp.ReceiverOptions{Credit: 100,
			SettlementMode: amqp.ReceiverSettleModeFirst.Ptr(), RequestedSenderSettleMode: amqp.SenderSettleModeSettled.Ptr()})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := r.Receive(ctx(t), nil); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := r.Close(ctx(t)); err != nil {
			t.Fatalf("round %d: closing the receiver: %v", round, err)
		}
	}
	MustReceive(t, MustReceiver(t, s, "q", receiveAndDelete()))
}
