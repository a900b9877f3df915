package servicebus_test

import (
	"context"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/servicebus"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

// SS-3: the hooks of the clock move that lost a session return once the
// client has answered the detach of the link that held it, not only once
// the detach is written: a client whose reader is behind (the Java SDK's
// reactor thread on a loaded machine) would otherwise still settle a
// message of the link after the clock call returned, a disposition that
// crosses the detach and gets no answer (CI: the Java SDK's complete then
// waited out its minute). The wait is long in this test, so that only the
// answer can end it.
func TestSS3_ALostSessionsHooksWaitForTheClientsAnswerToTheDetach(t *testing.T) {
	servicebus.SetDetachWait(t, time.Minute)
	f, r := MustSessionHolder(t)

	// The clock moves past the session's one-minute lock; the move, as the
	// control API's, returns once the hooks have run.
	hooks := make(chan error, 1)
	go func() {
		now, err := f.clock.Advance(90 * time.Second)
		if err == nil {
			_, err = f.e.ApplyDue(context.Background(), now)
		}
		if err == nil {
			err = f.e.WaitHooks(context.Background())
		}
		hooks <- err
	}()
	for {
		d, ok := r.next().Body.(*codec.Detach)
		if !ok {
			continue // a flow
		}
		if d.Handle != 2 || d.Error == nil || d.Error.Condition != "com.microsoft:session-lock-lost" {
			t.Fatalf("detach %+v, want handle 2 with com.microsoft:session-lock-lost", d)
		}
		break
	}
	select {
	case err := <-hooks:
		t.Fatalf("the hooks returned (%v) before the client answered the detach", err)
	default:
	}
	r.send(&codec.Detach{Handle: 2, Closed: true}, nil)
	select {
	case err := <-hooks:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the hooks still wait, 30 s after the client answered the detach")
	}
}

// MustSessionHolder starts a server with session queue sq holding one
// message of session a, and a raw client whose link of handle 2 holds
// session a, with its message delivered, on the frozen clock.
func MustSessionHolder(t *testing.T) (*fixture, *txnRaw) {
	t.Helper()
	f := MustServer(t)
	f.sessionQueue("sq", nil)
	r := f.MustTxnRaw(t)
	r.attachSender(1, "sq", nil)
	r.dispositionFor(r.transferOn(1, &codec.Message{Properties: &codec.Properties{GroupID: "a"}, Data: [][]byte{[]byte("a1")}}, nil))
	r.receiveSession(2, "sq", "a")
	return f, r
}
