package servicebus_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/servicebus"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

// A client whose open asks for an idle time-out gets empty frames from
// lapse while nothing else is sent, at half its time-out (100 ms at least,
// on the wall clock, as the peer counts): the writer sends them, as it
// sends every other frame.
func TestKeepAliveFramesWhileIdle(t *testing.T) {
	f := MustServer(t)
	nc, err := net.Dial("tcp", f.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	r := &rawConn{tb: t, nc: nc, br: bufio.NewReader(nc)}
	r.write(codec.HeaderSASL[:])
	r.readHeader(codec.HeaderSASL)
	rawNext[*codec.SASLMechanisms](r)
	k := servicebus.DefaultKey
	r.sendType(codec.FrameSASL, &codec.SASLInit{Mechanism: "PLAIN", InitialResponse: []byte("\x00" + k.Name + "\x00" + k.Value)}, nil)
	rawNext[*codec.SASLOutcome](r)
	r.write(codec.HeaderAMQP[:])
	r.readHeader(codec.HeaderAMQP)
	r.send(&codec.Open{ContainerID: "idle", Hostname: f.ln.Addr().String(), IdleTimeOut: 200}, nil)
	rawNext[*codec.Open](r)
	start := time.Now()
	for i := 0; i < 3; i++ {
		fr, b, err := codec.ReadFrame(r.br, r.buf, 1<<20)
		r.buf = b
		if err != nil {
			t.Fatalf("waiting for empty frame %d: %v", i+1, err)
		}
		if fr.Body != nil {
			t.Fatalf("got %T, want an empty frame", fr.Body)
		}
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("3 empty frames in %v, want one per 100 ms at most", d)
	}
}
