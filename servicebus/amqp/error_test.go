package amqp

import (
	"bytes"
	"testing"
)

// issue 27: azure-servicebus 7.9 and later (its own AMQP stack) reads the
// error of a rejected outcome, and of a close, by index up to info, the
// third field: a list of two (condition and description, info left out as a
// trailing null) raised IndexError in its send callback, and the send of a
// message too large for the link never finished. Every error frame lapse
// writes has all three fields, nulls written, as the service's do.
func TestErrorFramesHaveAllThreeFields(t *testing.T) {
	for _, tt := range []struct {
		name string
		body Performative
	}{
		{"RejectedDisposition", &Disposition{Role: RoleReceiver, Settled: true,
			State: &Rejected{Error: &Error{Condition: "amqp:link:message-size-exceeded", Description: "too large"}}}},
		{"CloseWithoutDescription", &Close{Error: &Error{Condition: "amqp:internal-error"}}},
		{"Detach", &Detach{Handle: 1, Closed: true, Error: &Error{Condition: "amqp:not-found", Description: "no queue"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			frame, err := AppendFrame(nil, FrameAMQP, 0, tt.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The error composite: descriptor 0x1d, list8 header (0xc0),
			// size, then the count of fields.
			i := bytes.Index(frame, []byte{0x00, 0x53, 0x1d, 0xc0})
			if i < 0 || i+5 >= len(frame) {
				t.Fatalf("no error list (list8) in % x", frame)
			}
			if got := frame[i+5]; got != 3 {
				t.Errorf("error list of %d fields, want 3: % x", got, frame[i:])
			}
		})
	}
}
