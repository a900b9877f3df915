package servicebus_test

import (
	"fmt"
	"testing"

	"github.com/Azure/go-amqp"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

// MustFill sends n messages "0", "1", … to queue q on a connection of its
// own.
func (f *fixture) MustFill(tb testing.TB, q string, n int) {
	tb.Helper()
	snd := MustSender(tb, MustSession(tb, f.MustDialAMQP(tb, q)), q)
	for i := range n {
		MustSend(tb, snd, amqp.NewMessage([]byte(fmt.Sprint(i))))
	}
}

// drainReplies returns the server's flow frames with drain set.
func drainReplies(ps []codec.Performative) []*codec.Flow {
	var out []*codec.Flow
	for _, fl := range performativesOf[*codec.Flow](ps) {
		if fl.Drain && fl.Handle != nil {
			out = append(out, fl)
		}
	}
	return out
}

// TestGoAMQPCredit checks that the server sends no more than the link
// credit and honours drain (§2.6.7).
func TestGoAMQPCredit(t *testing.T) {
	t.Run("ExactlyTheCredit", func(t *testing.T) {
		f := MustServer(t)
		f.MustQueue("q", nil)
		f.MustFill(t, "q", 5)
		r := MustReceiver(t, MustSession(t, f.MustDialAMQP(t, "q")), "q", peekLock())
		if err := r.IssueCredit(3); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			m, err := r.Receive(ctx(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(m.GetData()) != fmt.Sprint(i) {
				t.Fatalf("message %d is %q", i, m.GetData())
			}
		}
		// the drain's reply comes after whatever the server sent before it
		if err := r.DrainCredit(ctx(t), nil); err != nil {
			t.Fatal(err)
		}
		if m := r.Prefetched(); m != nil {
			t.Fatalf("a fourth message %q arrived on a credit of 3", m.GetData())
		}
		if c := f.counts("q"); c.Locked != 3 || c.Active != 2 {
			t.Fatalf("counts %+v, want 3 locked and 2 active", c)
		}
	})
	t.Run("GoAMQPDrainOnEmptyQueue", func(t *testing.T) {
		f := MustServer(t)
		f.MustQueue("q", nil)
		tp := f.MustTap(t)
		r := MustReceiver(t, MustSession(t, MustDialAMQPTo(t, tp.Addr(), "q")), "q", peekLock())
		if err := r.IssueCredit(5); err != nil {
			t.Fatal(err)
		}
		if err := r.DrainCredit(ctx(t), nil); err != nil {
			t.Fatalf("drain: %v", err)
		}
		ds := drainReplies(tp.serverPerformatives())
		if len(ds) != 1 || ds[0].LinkCredit == nil || *ds[0].LinkCredit != 0 {
			t.Fatalf("the server's drain replies %+v, want one with link-credit 0", ds)
		}
		// credit issued after the drain brings the next message
		f.MustFill(t, "q", 1)
		if m := MustReceive(t, r); string(m.GetData()) != "0" {
			t.Fatalf("after the drain: %q", m.GetData())
		}
	})
	t.Run("DrainUsesUpCreditLeft", func(t *testing.T) {
		// go-amqp drains with link-credit 0; JS's rhea drains with the
		// credit it has left, which the server must use up by advancing
		// the delivery-count (servicebus.md §4).
		f := MustServer(t)
		f.MustQueue("q", nil)
		f.MustFill(t, "q", 2)
		r := f.MustDialRaw(t)
		r.send(&codec.Attach{Name: "rd", Handle: 0, Role: codec.RoleReceiver,
			SndSettleMode: ptrTo(codec.SndSettled), RcvSettleMode: ptrTo(codec.RcvFirst),
			Source: &codec.Source{Address: "q"}, Target: &codec.Target{Address: "raw"}}, nil)
		a := rawNext[*codec.Attach](r)
		if a.InitialDeliveryCount == nil || *a.InitialDeliveryCount != 0 {
			t.Fatalf("attach initial-delivery-count %v, want 0", deref(a.InitialDeliveryCount))
		}
		drain := func(deliveryCount, credit uint32, wantBodies ...string) {
			t.Helper()
			r.flow(0, deliveryCount, credit, true)
			for _, want := range wantBodies {
				fr := r.next()
				tr, ok := fr.Body.(*codec.Transfer)
				if !ok {
					t.Fatalf("got %T %+v, want the transfer of %q", fr.Body, fr.Body, want)
				}
				var m amqp.Message
				if err := m.UnmarshalBinary(fr.Payload); err != nil || string(m.GetData()) != want || tr.Settled == nil || !*tr.Settled {
					t.Fatalf("transfer %+v of %q (%v), want %q pre-settled", tr, m.GetData(), err, want)
				}
			}
			fl := rawNext[*codec.Flow](r)
			want := deliveryCount + credit
			if !fl.Drain || fl.Handle == nil || *fl.Handle != a.Handle || fl.LinkCredit == nil || *fl.LinkCredit != 0 ||
				fl.DeliveryCount == nil || *fl.DeliveryCount != want {
				t.Fatalf("drain reply %+v (delivery-count %v, credit %v), want drain, delivery-count %d, credit 0",
					fl, deref(fl.DeliveryCount), deref(fl.LinkCredit), want)
			}
		}
		drain(0, 5, "0", "1")
		f.MustFill(t, "q", 2)
		// the count went to 5: credit 1 from there is one message
		drain(5, 1, "0")
		if c := f.counts("q"); c.Active != 1 {
			t.Fatalf("counts %+v, want the second message still there", c)
		}
	})
}

// TestGoAMQPDispositions checks the outcomes a peek-lock receiver sends
// (servicebus.md §2.5) and, with rcv-settle second, that the server
// answers each with a settled disposition.
func TestGoAMQPDispositions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		settle func(t *testing.T, r *amqp.Receiver, m *amqp.Message) error
		echo   codec.DeliveryState
		check  func(t *testing.T, f *fixture, s *amqp.Session)
	}{
		{"Accepted", func(t *testing.T, r *amqp.Receiver, m *amqp.Message) error {
			return r.AcceptMessage(ctx(t), m)
		}, &codec.Accepted{}, func(t *testing.T, f *fixture, s *amqp.Session) {
			if c := f.counts("q"); c.Active+c.Locked != 0 {
				t.Fatalf("after accepted: counts %+v, want the queue empty", c)
			}
		}},
		{"ReleasedDoesNotCount", func(t *testing.T, r *amqp.Receiver, m *amqp.Message) error {
			return r.ReleaseMessage(ctx(t), m)
		}, &codec.Released{}, func(t *testing.T, f *fixture, s *amqp.Session) {
			m := MustReceive(t, MustReceiver(t, s, "q", peekLock()))
			if m.Header == nil || m.Header.DeliveryCount != 0 {
				t.Fatalf("after released: header %+v, want delivery-count 0", m.Header)
			}
		}},
		{"ModifiedCounts", func(t *testing.T, r *amqp.Receiver, m *amqp.Message) error {
			// Abandon: delivery-failed false, and the count goes up anyway
			return r.ModifyMessage(ctx(t), m, &amqp.ModifyMessageOptions{Annotations: amqp.Annotations{"x-custom": "changed"}})
		}, &codec.Modified{}, func(t *testing.T, f *fixture, s *amqp.Session) {
			m := MustReceive(t, MustReceiver(t, s, "q", peekLock()))
			if m.Header == nil || m.Header.DeliveryCount != 1 {
				t.Fatalf("after modified: header %+v, want delivery-count 1", m.Header)
			}
		}},
		{"RejectedDeadLetter", func(t *testing.T, r *amqp.Receiver, m *amqp.Message) error {
			return r.RejectMessage(ctx(t), m, &amqp.Error{Condition: "com.microsoft:dead-letter", Description: "dead-letter",
				Info: map[string]any{"DeadLetterReason": "Poison", "DeadLetterErrorDescription": "cannot parse", "Extra": "kept"}})
		}, &codec.Rejected{}, func(t *testing.T, f *fixture, s *amqp.Session) {
			if c := f.counts("q"); c.Active+c.Locked != 0 {
				t.Fatalf("after dead-lettering: counts %+v, want the queue empty", c)
			}
			m := MustReceive(t, MustReceiver(t, s, "q/$DeadLetterQueue", peekLock()))
			if m.ApplicationProperties["DeadLetterReason"] != "Poison" || m.ApplicationProperties["DeadLetterErrorDescription"] != "cannot parse" ||
				m.ApplicationProperties["Extra"] != "kept" {
				t.Fatalf("the dead letter's properties %v", m.ApplicationProperties)
			}
			if string(m.GetData()) != "0" {
				t.Fatalf("the dead letter's body %q", m.GetData())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustServer(t)
			f.MustQueue("q", nil)
			f.MustFill(t, "q", 1)
			tp := f.MustTap(t)
			s := MustSession(t, MustDialAMQPTo(t, tp.Addr(), "q"))
			r := MustReceiver(t, s, "q", peekLock())
			m := MustReceive(t, r)
			if err := tc.settle(t, r, m); err != nil {
				t.Fatalf("settling: %v", err)
			}
			var got []*codec.Disposition
			for _, d := range performativesOf[*codec.Disposition](tp.serverPerformatives()) {
				if d.Role == codec.RoleSender {
					got = append(got, d)
				}
			}
			if len(got) != 1 || !got[0].Settled || fmt.Sprintf("%T", got[0].State) != fmt.Sprintf("%T", tc.echo) {
				t.Fatalf("the server's dispositions as sender %+v, want one settled %T", got, tc.echo)
			}
			if rej, ok := got[0].State.(*codec.Rejected); ok && rej.Error != nil {
				t.Fatalf("the server echoed rejected with an error %v, which fails DeadLetterMessage", rej.Error)
			}
			tc.check(t, f, s)
		})
	}
}
