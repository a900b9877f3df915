package servicebus_test

import (
	"testing"

	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

// issue 16.8: a frame over the max-frame-size lapse announced in its open
// closes the connection with amqp:connection:framing-error (§2.7.1), from
// the frame's header alone; a client on another connection is untouched.
func TestOversizedFrameClosesWithFramingError(t *testing.T) {
	f := MustServer(t)
	other := f.MustDialRaw(t)
	r := f.MustDialRaw(t)
	// A header announcing 2 GiB - 1 with nothing after it: lapse must not
	// wait for the body before it answers.
	r.write([]byte{0x7f, 0xff, 0xff, 0xff, 2, 0, 0, 0})
	cl := rawNext[*codec.Close](r)
	if cl.Error == nil || cl.Error.Condition != "amqp:connection:framing-error" {
		t.Fatalf("closed with %+v, want amqp:connection:framing-error", cl.Error)
	}
	// One byte over the limit (256 KiB): the header says it all.
	r2 := f.MustDialRaw(t)
	r2.write([]byte{0x00, 0x04, 0x00, 0x01, 2, 0, 0, 0})
	if cl := rawNext[*codec.Close](r2); cl.Error == nil || cl.Error.Condition != "amqp:connection:framing-error" {
		t.Fatalf("a frame of 256 KiB + 1: closed with %+v, want amqp:connection:framing-error", cl.Error)
	}
	other.send(&codec.End{}, nil)
	rawNext[*codec.End](other)
}

// A detach or an end for a session that has just ended (rhea detaches a
// session receiver after its own end when it gives up waiting, as
// @azure/service-bus 7.5 does on an acceptNextSession that finds nothing)
// is dropped, as the service drops it: the connection and its other
// sessions go on. Any other frame for a channel without a session still
// closes the connection with a framing error.
func TestDetachAndEndForAnEndedSessionAreDropped(t *testing.T) {
	f := MustServer(t)
	r := f.MustDialRaw(t)
	r.send(&codec.Attach{Name: "late", Handle: 0, Role: codec.RoleReceiver, Source: &codec.Source{Address: "q"}, Target: &codec.Target{}}, nil)
	r.send(&codec.End{}, nil)
	r.send(&codec.Detach{Handle: 0, Closed: true}, nil)
	r.send(&codec.End{}, nil)
	// Whatever lapse answered to the attach and the end, the connection
	// must still take a new session.
	r.send(&codec.Begin{IncomingWindow: 5000, OutgoingWindow: 5000}, nil)
	for began := false; !began; {
		switch b := r.next().Body.(type) {
		case *codec.Begin:
			began = true
		case *codec.Close:
			t.Fatalf("the connection closed: %+v", b.Error)
		}
	}
	r.send(&codec.Close{}, nil)
	rawNext[*codec.Close](r)

	r2 := f.MustDialRaw(t)
	r2.send(&codec.End{}, nil)
	rawNext[*codec.End](r2)
	in := uint32(0)
	r2.send(&codec.Flow{NextIncomingID: &in, IncomingWindow: 5000, OutgoingWindow: 5000}, nil)
	if cl := rawNext[*codec.Close](r2); cl.Error == nil || cl.Error.Condition != "amqp:connection:framing-error" {
		t.Fatalf("a flow for an ended session: closed with %+v, want amqp:connection:framing-error", cl.Error)
	}
}
