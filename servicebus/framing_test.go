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
