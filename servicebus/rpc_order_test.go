package servicebus_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/servicebus"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// rpcLinks is a pair of links to a request-response node ($cbs or an
// entity's $management) on a rawConn: requests go out on req, responses
// come back on the server's handle resp.
type rpcLinks struct {
	req     uint32 // our handle of the request link
	resp    uint32 // the server's handle of the response link
	replyTo string
}

// attachRPC attaches a request link to node addr with handle h and a
// response link with handle h+1, and gives the response link credit.
func (r *rawConn) attachRPC(name, addr string, h uint32) rpcLinks {
	r.tb.Helper()
	zero := uint32(0)
	mixed, first, settled := codec.SndMixed, codec.RcvFirst, codec.SndSettled
	r.send(&codec.Attach{Name: name + "-requests", Handle: h, Role: codec.RoleSender,
		SndSettleMode: &mixed, RcvSettleMode: &first,
		Source: &codec.Source{Address: name}, Target: &codec.Target{Address: addr}, InitialDeliveryCount: &zero}, nil)
	rawNext[*codec.Attach](r)
	rawNext[*codec.Flow](r) // the server's credit
	replyTo := name + "-replies"
	r.send(&codec.Attach{Name: replyTo, Handle: h + 1, Role: codec.RoleReceiver,
		SndSettleMode: &settled, RcvSettleMode: &first,
		Source: &codec.Source{Address: addr}, Target: &codec.Target{Address: replyTo}}, nil)
	a := rawNext[*codec.Attach](r)
	r.flow(h+1, 0, 5000, false)
	return rpcLinks{req: h, resp: a.Handle, replyTo: replyTo}
}

// request sends an unsettled request with message-id id on l and returns
// its delivery-id.
func (r *rawConn) request(l rpcLinks, id string, props codec.Map, body any) uint32 {
	r.tb.Helper()
	m := &codec.Message{
		Properties:            &codec.Properties{MessageID: id, ReplyTo: l.replyTo},
		ApplicationProperties: props,
		Value:                 body, HasValue: true,
	}
	b, err := m.MarshalBinary()
	if err != nil {
		r.tb.Fatal(err)
	}
	did, format, unsettled := r.out, uint32(0), false
	r.send(&codec.Transfer{Handle: l.req, DeliveryID: &did, DeliveryTag: []byte(id), MessageFormat: &format, Settled: &unsettled}, b)
	return did
}

// TestRPCDispositionBeforeReply sends many requests of every $management
// operation and put-tokens on $cbs over one connection, each unsettled,
// and reads the frames the server writes back in their order.
func TestRPCDispositionBeforeReply(t *testing.T) {
	// issue 13.3: the disposition that settles a request is written before
	// the transfer of its reply, for every operation: uamqp (Python
	// azure-servicebus up to 7.8) fails a reply whose request it has not
	// seen settled.
	const rounds = 10
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.LockDuration = 5 * time.Minute })
	f.MustTopic("t", nil, "s")
	for i := range rounds {
		if err := f.s.AddRule("t", "s", atom.RuleProperties{Name: fmt.Sprintf("old%d", i), Filter: atom.Filter{Type: atom.TrueFilter}}); err != nil {
			t.Fatal(err)
		}
	}

	// Messages to work on: deferred ones to receive by sequence number,
	// locked ones to renew and complete by lock token.
	sb := f.MustClient()
	snd, err := sb.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * rounds {
		if err := snd.SendMessage(ctx(t), &azservicebus.Message{Body: fmt.Appendf(nil, "m%d", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rcv, err := sb.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	var locked []*azservicebus.ReceivedMessage
	for len(locked) < 3*rounds {
		got, err := rcv.ReceiveMessages(ctx(t), 3*rounds-len(locked), nil)
		if err != nil {
			t.Fatal(err)
		}
		locked = append(locked, got...)
	}
	var deferred []int64
	for _, m := range locked[:rounds] {
		if err := rcv.DeferMessage(ctx(t), m, nil); err != nil {
			t.Fatal(err)
		}
		deferred = append(deferred, *m.SequenceNumber)
	}
	locked = locked[rounds:]

	r := f.MustDialRaw(t)
	q := r.attachRPC("q-mgmt", "q/$management", 0)
	sub := r.attachRPC("s-mgmt", "t/Subscriptions/s/$management", 2)
	cbs := r.attachRPC("cbs", "$cbs", 4)

	op := func(name string) codec.Map {
		return codec.Map{{Key: "operation", Value: name}, {Key: "server-timeout", Value: uint64(60000)}}
	}
	scheduled, err := (&codec.Message{
		MessageAnnotations: codec.Map{{Key: codec.Symbol("x-opt-scheduled-enqueue-time"), Value: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}},
		Data:               [][]byte{[]byte("later")},
	}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	aud := "amqp://" + f.ln.Addr().String() + "/q"
	token := sas.Sign(servicebus.DefaultKey, aud, time.Now().Add(time.Hour))

	type sent struct{ op, id string }
	byDelivery := map[uint32]sent{}
	req := func(l rpcLinks, opName, id string, props codec.Map, body any) {
		byDelivery[r.request(l, id, props, body)] = sent{op: opName, id: id}
	}
	for i := range rounds {
		id := func(op string) string { return fmt.Sprintf("%s-%d", op, i) }
		req(q, "peek", id("peek"), op("com.microsoft:peek-message"),
			codec.Map{{Key: "from-sequence-number", Value: int64(1)}, {Key: "message-count", Value: int32(5)}})
		req(q, "receive-by-sequence-number", id("receive-by-sequence-number"), op("com.microsoft:receive-by-sequence-number"),
			codec.Map{{Key: "sequence-numbers", Value: []int64{deferred[i]}}, {Key: "receiver-settle-mode", Value: uint32(1)}})
		req(q, "renew-lock", id("renew-lock"), op("com.microsoft:renew-lock"),
			codec.Map{{Key: "lock-tokens", Value: []codec.UUID{codec.UUID(locked[i].LockToken)}}})
		req(q, "update-disposition", id("update-disposition"), op("com.microsoft:update-disposition"),
			codec.Map{{Key: "disposition-status", Value: "completed"}, {Key: "lock-tokens", Value: []codec.UUID{codec.UUID(locked[rounds+i].LockToken)}}})
		req(q, "schedule-message", id("schedule-message"), codec.Map{{Key: "operation", Value: "com.microsoft:schedule-message"}},
			codec.Map{{Key: "messages", Value: []any{codec.Map{{Key: "message-id", Value: id("scheduled")}, {Key: "message", Value: scheduled}}}}})
		req(q, "cancel-scheduled-message", id("cancel-scheduled-message"), codec.Map{{Key: "operation", Value: "com.microsoft:cancel-scheduled-message"}},
			codec.Map{{Key: "sequence-numbers", Value: []int64{1 << 40}}})
		req(sub, "add-rule", id("add-rule"), op("com.microsoft:add-rule"),
			codec.Map{{Key: "rule-name", Value: fmt.Sprintf("new%d", i)}, {Key: "rule-description", Value: codec.Map{
				{Key: "sql-filter", Value: codec.Map{{Key: "expression", Value: "1=1"}}}}}})
		req(sub, "remove-rule", id("remove-rule"), op("com.microsoft:remove-rule"),
			codec.Map{{Key: "rule-name", Value: fmt.Sprintf("old%d", i)}})
		req(sub, "enumerate-rules", id("enumerate-rules"), op("com.microsoft:enumerate-rules"),
			codec.Map{{Key: "top", Value: int32(100)}, {Key: "skip", Value: int32(0)}})
		req(cbs, "put-token", id("put-token"), codec.Map{
			{Key: "operation", Value: "put-token"}, {Key: "type", Value: "servicebus.windows.net:sastoken"}, {Key: "name", Value: aud}}, token)
	}

	// Read what the server writes until every request has its disposition
	// and its reply, noting where each came.
	settledAt := map[uint32]int{}
	replyAt := map[string]int{}
	status := map[string]any{}
	for at := 0; len(settledAt) < len(byDelivery) || len(replyAt) < len(byDelivery); at++ {
		f := r.next()
		switch p := f.Body.(type) {
		case *codec.Disposition:
			if p.Role != codec.RoleReceiver {
				continue
			}
			last := p.First
			if p.Last != nil {
				last = *p.Last
			}
			for d := p.First; d <= last; d++ {
				if _, ok := settledAt[d]; !ok {
					settledAt[d] = at
				}
				if _, ok := p.State.(*codec.Accepted); !ok {
					t.Errorf("request %s was settled with %#v, want accepted", byDelivery[d].id, p.State)
				}
			}
		case *codec.Transfer:
			if p.Handle != q.resp && p.Handle != sub.resp && p.Handle != cbs.resp {
				t.Fatalf("a transfer on handle %d, which is no response link", p.Handle)
			}
			m, err := codec.UnmarshalMessage(f.Payload)
			if err != nil {
				t.Fatalf("a reply does not decode: %v", err)
			}
			corr, _ := m.Properties.CorrelationID.(string)
			replyAt[corr] = at
			st, ok := m.ApplicationProperties.Get("statusCode")
			if !ok {
				st, _ = m.ApplicationProperties.Get("status-code")
			}
			status[corr] = st
		}
	}
	early := map[string]int{}
	for d, s := range byDelivery {
		if replyAt[s.id] < settledAt[d] {
			early[s.op]++
		}
		if status[s.id] != int32(200) {
			t.Errorf("%s: status %#v, want 200", s.id, status[s.id])
		}
	}
	for opName, n := range early {
		t.Errorf("%s: %d of %d replies came before the request's disposition", opName, n, rounds)
	}
}
