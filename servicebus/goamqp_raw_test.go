package servicebus_test

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/servicebus"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

// rawConn is an AMQP connection with one session, driven frame by frame
// with lapse's own codec, for what go-amqp will not send: a message over
// the link's max-message-size, a drain that leaves credit to use up.
type rawConn struct {
	tb  testing.TB
	nc  net.Conn
	br  *bufio.Reader
	buf []byte
	out uint32 // the session's next outgoing transfer id
	in  uint32 // and its next incoming one
}

// MustDialRaw connects with SASL PLAIN and the default key (which
// authorizes every entity without CBS), opens the connection with a
// max-frame-size of 65536 and begins a session on channel 0.
func (f *fixture) MustDialRaw(tb testing.TB) *rawConn {
	tb.Helper()
	nc, err := net.Dial("tcp", f.ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	r := &rawConn{tb: tb, nc: nc, br: bufio.NewReader(nc)}
	r.write(codec.HeaderSASL[:])
	r.readHeader(codec.HeaderSASL)
	rawNext[*codec.SASLMechanisms](r)
	k := servicebus.DefaultKey
	r.sendType(codec.FrameSASL, &codec.SASLInit{Mechanism: "PLAIN", InitialResponse: []byte("\x00" + k.Name + "\x00" + k.Value)}, nil)
	if o := rawNext[*codec.SASLOutcome](r); o.Code != codec.SASLCodeOK {
		tb.Fatalf("SASL PLAIN: outcome %d", o.Code)
	}
	r.write(codec.HeaderAMQP[:])
	r.readHeader(codec.HeaderAMQP)
	r.send(&codec.Open{ContainerID: "raw", Hostname: f.ln.Addr().String(), MaxFrameSize: 65536}, nil)
	rawNext[*codec.Open](r)
	r.send(&codec.Begin{IncomingWindow: 5000, OutgoingWindow: 5000}, nil)
	rawNext[*codec.Begin](r)
	return r
}

func (r *rawConn) write(b []byte) {
	r.tb.Helper()
	if _, err := r.nc.Write(b); err != nil {
		r.tb.Fatal(err)
	}
}

func (r *rawConn) readHeader(want [8]byte) {
	r.tb.Helper()
	var h [8]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil || h != want {
		r.tb.Fatalf("protocol header %q, %v; want %q", h, err, want)
	}
}

// send sends an AMQP frame on channel 0; a transfer counts toward the
// session's next-outgoing-id.
func (r *rawConn) send(p codec.Performative, payload []byte) {
	r.tb.Helper()
	r.sendType(codec.FrameAMQP, p, payload)
	if _, ok := p.(*codec.Transfer); ok {
		r.out++
	}
}

func (r *rawConn) sendType(typ codec.FrameType, p codec.Performative, payload []byte) {
	r.tb.Helper()
	b, err := codec.AppendFrame(nil, typ, 0, p, payload)
	if err != nil {
		r.tb.Fatal(err)
	}
	r.write(b)
}

// next reads the next frame that is not empty; its Payload is a copy.
func (r *rawConn) next() codec.Frame {
	r.tb.Helper()
	for {
		f, b, err := codec.ReadFrame(r.br, r.buf, 1<<20)
		r.buf = b
		if err != nil {
			r.tb.Fatalf("reading a frame: %v", err)
		}
		if f.Body == nil {
			continue
		}
		f.Payload = append([]byte(nil), f.Payload...)
		if _, ok := f.Body.(*codec.Transfer); ok {
			r.in++
		}
		return f
	}
}

// rawNext reads the next frame and fails unless its performative is a T.
func rawNext[T codec.Performative](r *rawConn) T {
	r.tb.Helper()
	f := r.next()
	p, ok := f.Body.(T)
	if !ok {
		var want T
		r.tb.Fatalf("got %T %+v, want %T", f.Body, f.Body, want)
	}
	return p
}

// flow sends a link's flow frame with the session's state.
func (r *rawConn) flow(handle, deliveryCount, credit uint32, drain bool) {
	r.tb.Helper()
	in := r.in
	r.send(&codec.Flow{NextIncomingID: &in, IncomingWindow: 5000, NextOutgoingID: r.out, OutgoingWindow: 5000,
		Handle: &handle, DeliveryCount: &deliveryCount, LinkCredit: &credit, Drain: drain}, nil)
}
