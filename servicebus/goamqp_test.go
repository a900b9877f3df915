package servicebus_test

// Frame-level tests with go-amqp, the AMQP client under azservicebus, for
// what the SDK hides: settle modes, credit, multi-frame transfers, error
// conditions and dispositions (servicebus.md §2).

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// MustDialAMQP connects with go-amqp as azservicebus does (SASL ANONYMOUS)
// and puts a CBS token for each entity; the connection closes with the
// test.
func (f *fixture) MustDialAMQP(tb testing.TB, entities ...string) *amqp.Conn {
	tb.Helper()
	return MustDialAMQPTo(tb, f.ln.Addr().String(), entities...)
}

// MustDialAMQPTo is MustDialAMQP for a server at addr (a tap's, say).
func MustDialAMQPTo(tb testing.TB, addr string, entities ...string) *amqp.Conn {
	tb.Helper()
	c, err := amqp.Dial(ctx(tb), "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous(), HostName: addr})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	for _, e := range entities {
		aud := "amqp://" + addr + "/" + e
		resp, err := putToken(ctx(tb), c, aud, sas.Sign(servicebus.DefaultKey, aud, time.Now().Add(time.Hour)))
		if err != nil {
			tb.Fatalf("put-token for %s: %v", e, err)
		}
		if st := resp.ApplicationProperties["status-code"]; st != int32(200) {
			tb.Fatalf("put-token for %s: status-code %#v (%v)", e, st, resp.ApplicationProperties["status-description"])
		}
	}
	return c
}

// putToken puts a token on $cbs the way azservicebus does (servicebus.md
// §2.2): a request on a sender to $cbs on a session of its own, the
// response on a receiver from $cbs. It returns the response.
func putToken(ctx context.Context, c *amqp.Conn, audience, token string) (*amqp.Message, error) {
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer s.Close(ctx)
	snd, err := s.NewSender(ctx, "$cbs", nil)
	if err != nil {
		return nil, err
	}
	replyTo := "$cbs$$cbs-reply-to-" + uuid.NewString()
	rcv, err := s.NewReceiver(ctx, "$cbs", &amqp.ReceiverOptions{
		TargetAddress:             replyTo,
		SettlementMode:            amqp.ReceiverSettleModeFirst.Ptr(),
		RequestedSenderSettleMode: amqp.SenderSettleModeSettled.Ptr(),
		Credit:                    1000,
	})
	if err != nil {
		return nil, err
	}
	id := uuid.NewString()
	req := &amqp.Message{
		Value:      token,
		Properties: &amqp.MessageProperties{MessageID: id, ReplyTo: &replyTo},
		ApplicationProperties: map[string]any{
			"operation":  "put-token",
			"type":       "servicebus.windows.net:sastoken",
			"name":       audience,
			"expiration": strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10),
		},
	}
	if err := snd.Send(ctx, req, nil); err != nil {
		return nil, err
	}
	resp, err := rcv.Receive(ctx, nil)
	if err != nil {
		return nil, err
	}
	if resp.Properties == nil || resp.Properties.CorrelationID != id {
		return nil, errors.New("the put-token response does not carry the request's message-id as its correlation-id")
	}
	return resp, nil
}

// MustSession begins a session on c.
func MustSession(tb testing.TB, c *amqp.Conn) *amqp.Session {
	tb.Helper()
	s, err := c.NewSession(ctx(tb), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// MustSender attaches a sender to target as azservicebus does: snd mixed,
// rcv first.
func MustSender(tb testing.TB, s *amqp.Session, target string) *amqp.Sender {
	tb.Helper()
	snd, err := s.NewSender(ctx(tb), target, &amqp.SenderOptions{
		SettlementMode:              amqp.SenderSettleModeMixed.Ptr(),
		RequestedReceiverSettleMode: amqp.ReceiverSettleModeFirst.Ptr(),
	})
	if err != nil {
		tb.Fatalf("attaching a sender to %s: %v", target, err)
	}
	return snd
}

// peekLock are the options of azservicebus's peek-lock receiver: rcv
// second, manual credit.
func peekLock() *amqp.ReceiverOptions {
	return &amqp.ReceiverOptions{SettlementMode: amqp.ReceiverSettleModeSecond.Ptr(), Credit: -1}
}

// receiveAndDelete are the options of azservicebus's receive-and-delete
// receiver: rcv first, snd settled, manual credit.
func receiveAndDelete() *amqp.ReceiverOptions {
	return &amqp.ReceiverOptions{
		SettlementMode:            amqp.ReceiverSettleModeFirst.Ptr(),
		RequestedSenderSettleMode: amqp.SenderSettleModeSettled.Ptr(),
		Credit:                    -1,
	}
}

// MustReceiver attaches a receiver to source.
func MustReceiver(tb testing.TB, s *amqp.Session, source string, opts *amqp.ReceiverOptions) *amqp.Receiver {
	tb.Helper()
	r, err := s.NewReceiver(ctx(tb), source, opts)
	if err != nil {
		tb.Fatalf("attaching a receiver to %s: %v", source, err)
	}
	return r
}

// MustSend sends a message and waits for the server's outcome.
func MustSend(tb testing.TB, snd *amqp.Sender, m *amqp.Message) {
	tb.Helper()
	if err := snd.Send(ctx(tb), m, nil); err != nil {
		tb.Fatalf("sending: %v", err)
	}
}

// MustReceive issues one credit and returns the message it brings.
func MustReceive(tb testing.TB, r *amqp.Receiver) *amqp.Message {
	tb.Helper()
	if err := r.IssueCredit(1); err != nil {
		tb.Fatal(err)
	}
	m, err := r.Receive(ctx(tb), nil)
	if err != nil {
		tb.Fatalf("receiving from %s: %v", r.Address(), err)
	}
	return m
}

// counts returns what the engine holds in the entity at path (a queue,
// "q/$DeadLetterQueue", "t/Subscriptions/s").
func (f *fixture) counts(path string) core.Counts {
	f.tb.Helper()
	info, err := f.e.Info(f.clock.Now(), core.EntityKey{Protocol: core.ServiceBus, Name: path})
	if err != nil {
		f.tb.Fatalf("entity %s: %v", path, err)
	}
	return info.Counts
}

// remoteErr returns the condition of the AMQP error in err, or "".
func remoteErr(err error) amqp.ErrCond {
	var e *amqp.Error
	if errors.As(err, &e) {
		return e.Condition
	}
	var le *amqp.LinkError
	if errors.As(err, &le) && le.RemoteErr != nil {
		return le.RemoteErr.Condition
	}
	return ""
}

// dotnetOrder returns a lock token in .NET's GUID byte order, as the
// delivery tag carries it (servicebus.md §2.6).
func dotnetOrder(u amqp.UUID) []byte {
	return []byte{u[3], u[2], u[1], u[0], u[5], u[4], u[7], u[6],
		u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]}
}
