package rabbitmq_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// issue 16.7: a message over max_message_size (128 MiB) closes the channel
// with 406 PRECONDITION_FAILED naming the message's real size, in RabbitMQ
// 3.10's words, and leaves the connection and its other channels open.
func TestPublishOverMaxMessageSizeNamesItsSize(t *testing.T) {
	f := MustServer(t)
	conn := f.MustDial()
	good, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, good, "q", nil)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	const size = 128<<20 + 1
	if err := ch.Publish("", "q", false, false, amqp.Publishing{Body: make([]byte, size)}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-closed:
		want := "PRECONDITION_FAILED - message size 134217729 is larger than configured max size 134217728"
		if e == nil || e.Code != 406 || e.Reason != want {
			t.Fatalf("channel closed with %v, want 406 %q", e, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the channel was not closed")
	}
	MustPublish(t, good, "", "q", amqp.Publishing{Body: []byte("small")})
	if got := drain(t, good, "q"); !cmp.Equal(got, []string{"small"}) {
		t.Fatalf("the queue holds %q", got)
	}
}

// issue 16.8: a frame over the negotiated frame-max closes the connection
// with 501 FRAME_ERROR in RabbitMQ 3.10's words: the payload size announced
// and the largest payload frame-max leaves room for (frame-max - 8), decided
// from the frame's header; a payload of frame-max octets is still read.
func TestOversizedFrameClosesWithFrameTooLarge(t *testing.T) {
	f := MustServer(t)
	for _, tt := range []struct {
		name   string
		header []byte
		code   uint16
		text   string
	}{
		{"Huge", []byte{wire.FrameBody, 0, 1, 0x7f, 0xff, 0xff, 0xff}, wire.FrameError,
			"FRAME_ERROR - type 3, all octets = <<>>: {frame_too_large,2147483647,4088}"},
		{"OneOverFrameMax", []byte{wire.FrameMethod, 0, 0, 0, 0, 0x10, 0x01}, wire.FrameError,
			"FRAME_ERROR - type 1, all octets = <<>>: {frame_too_large,4097,4088}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := MustRawOpen(t, f, 0) // frame-max 4096
			c.nc.Write(tt.header)
			cl := c.expect(&wire.ConnectionClose{}).(*wire.ConnectionClose)
			if cl.ReplyCode != tt.code || cl.ReplyText != tt.text {
				t.Fatalf("closed with %d %q, want %d %q", cl.ReplyCode, cl.ReplyText, tt.code, tt.text)
			}
		})
	}
	// A body frame of frame-max octets passes the size check (RabbitMQ
	// tolerates the 8 octets of overhead) and is refused for what it is.
	c := MustRawOpen(t, f, 0)
	c.send(1, &wire.ChannelOpen{})
	c.expect(&wire.ChannelOpenOk{})
	c.nc.Write(wire.AppendFrame(nil, wire.FrameBody, 1, make([]byte, 4096)))
	if cl := c.expect(&wire.ConnectionClose{}).(*wire.ConnectionClose); cl.ReplyCode != wire.UnexpectedFrame {
		t.Fatalf("a body frame of frame-max octets: closed with %d %q, want 505", cl.ReplyCode, cl.ReplyText)
	}
}
