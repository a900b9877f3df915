package servicebus_test

// Sandboxes: the tests of AMQP connections that name a sandbox's key, on
// the default world's listener (sandbox_admin_test.go has the fixture).

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	"github.com/google/uuid"
	"github.com/lapse-emulator/lapse/servicebus"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// MustClientAs returns an azservicebus client of the default world's
// listener whose connection string names key, closed with the test. It
// does not retry, so that a refusal is seen at once.
func (w *worlds) MustClientAs(key sas.Key) *azservicebus.Client {
	w.def.tb.Helper()
	cs := "Endpoint=sb://" + w.def.ln.Addr().String() + ";SharedAccessKeyName=" + key.Name +
		";SharedAccessKey=" + key.Value + ";UseDevelopmentEmulator=true;"
	c, err := azservicebus.NewClientFromConnectionString(cs, &azservicebus.ClientOptions{
		RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
	if err != nil {
		w.def.tb.Fatal(err)
	}
	w.def.tb.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func sendTo(tb testing.TB, c *azservicebus.Client, queue string, m *azservicebus.Message) error {
	tb.Helper()
	s, err := c.NewSender(queue, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close(context.Background())
	return s.SendMessage(ctx(tb), m, nil)
}

func receiverOf(tb testing.TB, c *azservicebus.Client, queue string, opts *azservicebus.ReceiverOptions) *azservicebus.Receiver {
	tb.Helper()
	r, err := c.NewReceiverForQueue(queue, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close(context.Background()) })
	return r
}

func isUnauthorized(err error) bool {
	var se *azservicebus.Error
	return errors.As(err, &se) && se.Code == azservicebus.CodeUnauthorizedAccess
}

func TestSandbox_KeyNameRoutesConnection(t *testing.T) {
	w := MustWorlds(t)
	w.MustOrders(t)
	sbx, def := w.MustClientAs(sandboxKey), w.MustClientAs(servicebus.DefaultKey)
	if err := sendTo(t, sbx, "orders", msg("sandbox", time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := sendTo(t, def, "orders", msg("default", time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := names(receiveAtLeast(t, receiverOf(t, sbx, "orders", nil), 1)); !slices.Equal(got, []string{"sandbox"}) {
		t.Fatalf("the sandbox's receiver got %v, want [sandbox]", got)
	}
	if got := names(receiveAtLeast(t, receiverOf(t, def, "orders", nil), 1)); !slices.Equal(got, []string{"default"}) {
		t.Fatalf("the default world's receiver got %v, want [default]", got)
	}
	if n := w.sbx.s.Connections(); n != 1 {
		t.Fatalf("the sandbox serves %d connections, want the sandbox client's", n)
	}
	if n := w.def.s.Connections(); n != 1 {
		t.Fatalf("the default world serves %d connections, want the default client's", n)
	}
}

func TestSandbox_ClockExpiresOnlyItsWorld(t *testing.T) {
	w := MustWorlds(t)
	w.MustOrders(t)
	sbx, def := w.MustClientAs(sandboxKey), w.MustClientAs(servicebus.DefaultKey)
	if err := sendTo(t, sbx, "orders", msg("sandbox", time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := sendTo(t, def, "orders", msg("default", time.Minute)); err != nil {
		t.Fatal(err)
	}
	w.sbx.advance(61 * time.Second)
	if got := names(receiveAtLeast(t, receiverOf(t, sbx, "orders", dlq()), 1)); !slices.Equal(got, []string{"sandbox"}) {
		t.Fatalf("the sandbox's dead-letter queue holds %v, want [sandbox]", got)
	}
	if got := names(receive(t, receiverOf(t, sbx, "orders", nil), 10)); len(got) != 0 {
		t.Fatalf("the sandbox's queue still holds %v", got)
	}
	if got := names(receiveAtLeast(t, receiverOf(t, def, "orders", nil), 1)); !slices.Equal(got, []string{"default"}) {
		t.Fatalf("the default world's queue holds %v, want [default]", got)
	}
	if got := names(receive(t, receiverOf(t, def, "orders", dlq()), 10)); len(got) != 0 {
		t.Fatalf("the default world's dead-letter queue holds %v", got)
	}
}

func TestSandbox_ConnectionRefusedForWrongKeyOrUnknownKeyName(t *testing.T) {
	w := MustWorlds(t)
	w.MustOrders(t)
	for name, k := range map[string]sas.Key{
		"SandboxKeyNameWrongKey": {Name: sandboxKey.Name, Value: "d3Jvbmc="},
		"UnknownKeyName":         {Name: "sbx-nope", Value: sandboxKey.Value},
	} {
		t.Run(name, func(t *testing.T) {
			err := sendTo(t, w.MustClientAs(k), "orders", msg("x", 0))
			if !isUnauthorized(err) {
				t.Fatalf("sending: %v, want %s", err, azservicebus.CodeUnauthorizedAccess)
			}
			// the put-token's answer is the one a wrong default key gets
			aud := "amqp://" + w.def.ln.Addr().String() + "/orders"
			c := w.def.MustDialAMQP(t)
			got := mustPut(t, newCBSPair(t, c), aud, sas.Sign(k, aud, time.Now().Add(time.Hour)))
			want := mustPut(t, newCBSPair(t, c), aud, sas.Sign(sas.Key{Name: servicebus.DefaultKey.Name, Value: "d3Jvbmc="}, aud, time.Now().Add(time.Hour)))
			if got != want || got.status != 401 {
				t.Fatalf("put-token answered %+v, want %+v", got, want)
			}
		})
	}
	if n := w.sbx.s.Connections(); n != 0 {
		t.Fatalf("the sandbox serves %d connections after refused tokens", n)
	}
}

func TestSandbox_BoundConnectionRefusesAnotherWorldsToken(t *testing.T) {
	w := MustWorlds(t)
	w.MustOrders(t)
	aud := "amqp://" + w.def.ln.Addr().String() + "/orders"
	for name, keys := range map[string][2]sas.Key{
		"BoundToSandbox": {sandboxKey, servicebus.DefaultKey},
		"BoundToDefault": {servicebus.DefaultKey, sandboxKey},
	} {
		t.Run(name, func(t *testing.T) {
			c := w.def.MustDialAMQP(t)
			cbs := newCBSPair(t, c)
			if r := mustPut(t, cbs, aud, sas.Sign(keys[0], aud, time.Now().Add(time.Hour))); r.status != 200 {
				t.Fatalf("first put-token: %+v", r)
			}
			if r := mustPut(t, cbs, aud, sas.Sign(keys[1], aud, time.Now().Add(time.Hour))); r.status != 401 {
				t.Fatalf("put-token of the other world's key: %+v, want 401", r)
			}
		})
	}
}

func TestSandbox_CBSLinkServesAfterMove(t *testing.T) {
	w := MustWorlds(t)
	w.MustOrders(t)
	c := w.def.MustDialAMQP(t)
	cbs := newCBSPair(t, c)
	addr := w.def.ln.Addr().String()
	for _, e := range []string{"orders", "orders/$deadletterqueue"} {
		aud := "amqp://" + addr + "/" + e
		if r := mustPut(t, cbs, aud, sas.Sign(sandboxKey, aud, time.Now().Add(time.Hour))); r.status != 200 {
			t.Fatalf("put-token for %s on one $cbs link pair: %+v", e, r)
		}
	}
	s := MustSession(t, c)
	MustSend(t, MustSender(t, s, "orders"), amqp.NewMessage([]byte("moved")))
	r, err := s.NewReceiver(ctx(t), "orders/$deadletterqueue", peekLock())
	if err != nil {
		t.Fatalf("a receiver on the second token's entity: %v", err)
	}
	r.Close(ctx(t))
	if got := w.sbx.stored("orders"); !slices.Equal(got, []string{"moved"}) {
		t.Fatalf("the sandbox's orders holds %v, want [moved]", got)
	}
}

func TestSandbox_PlainUserNameRoutesConnection(t *testing.T) {
	w := MustWorlds(t)
	w.MustOrders(t)
	addr := w.def.ln.Addr().String()
	dial := func(k sas.Key) (*amqp.Conn, error) {
		c, err := amqp.Dial(ctx(t), "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(k.Name, k.Value), HostName: addr})
		if err == nil {
			t.Cleanup(func() { c.Close() })
		}
		return c, err
	}
	c, err := dial(sandboxKey)
	if err != nil {
		t.Fatalf("SASL PLAIN with the sandbox's key: %v", err)
	}
	MustSend(t, MustSender(t, MustSession(t, c), "orders"), amqp.NewMessage([]byte("plain")))
	if got := w.sbx.stored("orders"); !slices.Equal(got, []string{"plain"}) {
		t.Fatalf("the sandbox's orders holds %v, want [plain]", got)
	}
	if got := w.def.stored("orders"); len(got) != 0 {
		t.Fatalf("the default world's orders holds %v", got)
	}
	if _, err := dial(sas.Key{Name: sandboxKey.Name, Value: "d3Jvbmc="}); err == nil {
		t.Fatal("SASL PLAIN with the sandbox's key name and a wrong key succeeded")
	}
}

func TestSandbox_ClosingSandboxEndsMovedConnection(t *testing.T) {
	w := MustWorlds(t)
	w.MustOrders(t)
	c := w.def.MustDialAMQP(t)
	aud := "amqp://" + w.def.ln.Addr().String() + "/orders"
	if r := mustPut(t, newCBSPair(t, c), aud, sas.Sign(sandboxKey, aud, time.Now().Add(time.Hour))); r.status != 200 {
		t.Fatalf("put-token: %+v", r)
	}
	rcv, err := MustSession(t, c).NewReceiver(ctx(t), "orders", peekLock())
	if err != nil {
		t.Fatal(err)
	}
	cx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.sbx.s.Close(cx); err != nil {
		t.Fatalf("closing the sandbox's server: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the connection moved to the sandbox outlived its server")
	}
	if _, err := rcv.Receive(ctx(t), nil); err == nil {
		t.Fatal("a receiver of the closed sandbox received")
	}
}

// cbsPair is one $cbs link pair, on which a client puts several tokens
// (the .NET SDK keeps one per connection).
type cbsPair struct {
	snd     *amqp.Sender
	rcv     *amqp.Receiver
	replyTo string
}

func newCBSPair(tb testing.TB, c *amqp.Conn) *cbsPair {
	tb.Helper()
	s := MustSession(tb, c)
	p := &cbsPair{replyTo: "$cbs$$cbs-reply-to-" + uuid.NewString()}
	var err error
	if p.snd, err = s.NewSender(ctx(tb), "$cbs", nil); err != nil {
		tb.Fatal(err)
	}
	if p.rcv, err = s.NewReceiver(ctx(tb), "$cbs", &amqp.ReceiverOptions{TargetAddress: p.replyTo, Credit: 100}); err != nil {
		tb.Fatal(err)
	}
	return p
}

// putAnswer is a put-token's status code and description.
type putAnswer struct {
	status int32
	desc   string
}

// mustPut puts a token on p and returns the answer.
func mustPut(tb testing.TB, p *cbsPair, audience, token string) putAnswer {
	tb.Helper()
	id := uuid.NewString()
	req := &amqp.Message{
		Value:      token,
		Properties: &amqp.MessageProperties{MessageID: id, ReplyTo: &p.replyTo},
		ApplicationProperties: map[string]any{
			"operation": "put-token", "type": "servicebus.windows.net:sastoken", "name": audience,
		},
	}
	if err := p.snd.Send(ctx(tb), req, nil); err != nil {
		tb.Fatal(err)
	}
	resp, err := p.rcv.Receive(ctx(tb), nil)
	if err != nil {
		tb.Fatal(err)
	}
	p.rcv.AcceptMessage(ctx(tb), resp)
	if resp.Properties == nil || resp.Properties.CorrelationID != id {
		tb.Fatalf("a put-token answer to another request: %+v", resp.Properties)
	}
	st, _ := resp.ApplicationProperties["status-code"].(int32)
	desc, _ := resp.ApplicationProperties["status-description"].(string)
	return putAnswer{status: st, desc: desc}
}
