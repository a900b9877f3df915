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

// A refused link gets an attach with neither source nor target, then a
// detach with the error, as the service answers: go-amqp before 1.5.1
// (azservicebus 1.1 to 1.10) takes an attach that keeps either terminus
// for an open link, and a receive from a misspelt queue then returned
// nothing instead of amqp:not-found.
func TestRefusedAttachHasNeitherSourceNorTarget(t *testing.T) {
	f := MustServer(t)
	r := f.MustDialRaw(t)
	for i, role := range []bool{codec.RoleReceiver, codec.RoleSender} {
		as := map[bool]string{codec.RoleReceiver: "a receiver", codec.RoleSender: "a sender"}[role]
		a := &codec.Attach{Name: "missing", Handle: uint32(i), Role: role,
			Source: &codec.Source{Address: "nope"}, Target: &codec.Target{Address: "nope"}}
		if role == codec.RoleSender {
			zero := uint32(0)
			a.InitialDeliveryCount = &zero
		}
		r.send(a, nil)
		reply := rawNext[*codec.Attach](r)
		if reply.Source != nil || reply.Target != nil {
			t.Errorf("%s: refusing attach with source %+v and target %+v, want neither", as, reply.Source, reply.Target)
		}
		if role == codec.RoleReceiver && reply.InitialDeliveryCount == nil {
			t.Errorf("%s: the refusing sender's attach has no initial-delivery-count", as)
		}
		if d := rawNext[*codec.Detach](r); d.Error == nil || d.Error.Condition != "amqp:not-found" {
			t.Errorf("%s: detach %+v, want amqp:not-found", as, d.Error)
		}
	}
}
