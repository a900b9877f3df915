package amqp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	goamqp "github.com/Azure/go-amqp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fakeServer answers a go-amqp client with this package's codec, just far
// enough for a send and a receive, and records every frame the client sent.
type fakeServer struct {
	conn     net.Conn
	buf      []byte
	out      []byte
	recorded []byte // the client's frames, protocol headers left out
	received []*Message
	deliver  []byte // encoded message to give a receiving link
	outcomes []DeliveryState
}

func (s *fakeServer) send(typ FrameType, ch uint16, p Performative, payload []byte) error {
	var err error
	if s.out, err = AppendFrame(s.out[:0], typ, ch, p, payload); err != nil {
		return err
	}
	_, err = s.conn.Write(s.out)
	return err
}

func (s *fakeServer) read() (Frame, error) {
	var f Frame
	var err error
	f, s.buf, err = ReadFrame(s.conn, s.buf, 1<<16)
	if err == nil {
		s.recorded = append(s.recorded, s.buf...)
	}
	return f, err
}

func (s *fakeServer) header(want [8]byte) error {
	var h [8]byte
	if _, err := io.ReadFull(s.conn, h[:]); err != nil {
		return err
	}
	if h != want {
		return fmt.Errorf("protocol header %q, want %q", h, want)
	}
	_, err := s.conn.Write(want[:])
	return err
}

func (s *fakeServer) serve() error {
	if err := s.header(HeaderSASL); err != nil {
		return err
	}
	if err := s.send(FrameSASL, 0, &SASLMechanisms{Mechanisms: []Symbol{"ANONYMOUS"}}, nil); err != nil {
		return err
	}
	if f, err := s.read(); err != nil {
		return err
	} else if _, ok := f.Body.(*SASLInit); !ok {
		return fmt.Errorf("got %T, want sasl-init", f.Body)
	}
	if err := s.send(FrameSASL, 0, &SASLOutcome{Code: SASLCodeOK}, nil); err != nil {
		return err
	}
	if err := s.header(HeaderAMQP); err != nil {
		return err
	}
	var nextDelivery uint32
	var partial []byte
	for {
		f, err := s.read()
		if err != nil {
			return err
		}
		var reply Performative
		switch b := f.Body.(type) {
		case nil:
			continue
		case *Open:
			reply = &Open{ContainerID: "lapse-test", MaxFrameSize: 1 << 16, ChannelMax: ptr(uint16(7))}
		case *Begin:
			reply = &Begin{RemoteChannel: &f.Channel, IncomingWindow: 5000, OutgoingWindow: 5000, HandleMax: ptr(uint32(15))}
		case *Attach:
			a := *b
			a.Role = !b.Role
			if b.Role == RoleSender {
				if err := s.send(FrameAMQP, f.Channel, &a, nil); err != nil {
					return err
				}
				reply = &Flow{IncomingWindow: 5000, NextIncomingID: ptr(uint32(0)), NextOutgoingID: 0, OutgoingWindow: 5000,
					Handle: &b.Handle, DeliveryCount: ptr(uint32(0)), LinkCredit: ptr(uint32(10))}
			} else {
				a.InitialDeliveryCount = ptr(uint32(0))
				reply = &a
			}
		case *Flow:
			if b.Handle == nil || b.LinkCredit == nil || *b.LinkCredit == 0 || s.deliver == nil {
				continue
			}
			// Deliver in two transfers to exercise continuation frames.
			half := len(s.deliver) / 2
			first := &Transfer{Handle: *b.Handle, DeliveryID: &nextDelivery, DeliveryTag: []byte("tag-1"),
				MessageFormat: ptr(uint32(0)), Settled: ptr(false), More: true}
			if err := s.send(FrameAMQP, f.Channel, first, s.deliver[:half]); err != nil {
				return err
			}
			if err := s.send(FrameAMQP, f.Channel, &Transfer{Handle: *b.Handle}, s.deliver[half:]); err != nil {
				return err
			}
			s.deliver = nil
			continue
		case *Transfer:
			partial = append(partial, f.Payload...)
			if b.More {
				continue
			}
			m, err := UnmarshalMessage(partial)
			if err != nil {
				return err
			}
			partial = nil
			s.received = append(s.received, m)
			if b.Settled != nil && *b.Settled {
				continue
			}
			reply = &Disposition{Role: RoleReceiver, First: *b.DeliveryID, Settled: true, State: &Accepted{}}
		case *Disposition:
			s.outcomes = append(s.outcomes, b.State)
			continue
		case *Detach:
			reply = &Detach{Handle: b.Handle, Closed: b.Closed}
		case *End:
			reply = &End{}
		case *Close:
			if err := s.send(FrameAMQP, 0, &Close{}, nil); err != nil {
				return err
			}
			// Read until the client hangs up.
			for {
				if _, err := s.read(); err != nil {
					return nil
				}
			}
		default:
			return fmt.Errorf("unexpected %T", b)
		}
		if err := s.send(FrameAMQP, f.Channel, reply, nil); err != nil {
			return err
		}
	}
}

// runConversation has a go-amqp client send sent and receive the message
// deliver encodes, against fakeServer.
func runConversation(t *testing.T, sent *goamqp.Message, deliver []byte) (*fakeServer, *goamqp.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A loopback TCP connection rather than net.Pipe: go-amqp expects a
	// closed socket's error, not io.ErrClosedPipe, when it hangs up.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := &fakeServer{deliver: deliver}
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		s.conn = c
		done <- s.serve()
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}

	conn, err := goamqp.NewConn(ctx, client, &goamqp.ConnOptions{SASLType: goamqp.SASLTypeAnonymous(), ContainerID: "client-1"})
	if err != nil {
		t.Fatalf("NewConn: %v", err)
	}
	sess, err := conn.NewSession(ctx, nil)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	snd, err := sess.NewSender(ctx, "queue1", nil)
	if err != nil {
		t.Fatalf("NewSender: %v", err)
	}
	if err := snd.Send(ctx, sent, nil); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if err := snd.Close(ctx); err != nil {
		t.Fatalf("Sender.Close: %v", err)
	}
	rcv, err := sess.NewReceiver(ctx, "queue1", &goamqp.ReceiverOptions{Credit: 5})
	if err != nil {
		t.Fatalf("NewReceiver: %v", err)
	}
	got, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if err := rcv.AcceptMessage(ctx, got); err != nil {
		t.Fatalf("AcceptMessage: %v", err)
	}
	if err := rcv.Close(ctx); err != nil {
		t.Fatalf("Receiver.Close: %v", err)
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatalf("Session.Close: %v", err)
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("Conn.Close: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	return s, got
}

// TestGoAMQPClientConversation runs a real client against frames this
// package writes and reads: SASL, open, begin, attach both ways, a transfer
// each way (one split over two frames), dispositions, detach, end, close.
func TestGoAMQPClientConversation(t *testing.T) {
	for _, c := range oracleCases() {
		t.Run(c.name, func(t *testing.T) {
			deliver, err := c.ours.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			s, got := runConversation(t, c.go_, deliver)
			if len(s.received) != 1 {
				t.Fatalf("server received %d messages, want 1", len(s.received))
			}
			if diff := cmp.Diff(c.ours, s.received[0], sortMaps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("message the client sent (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.go_, got, cmpopts.IgnoreUnexported(goamqp.Message{}),
				cmpopts.IgnoreFields(goamqp.Message{}, "DeliveryTag"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("message the client received (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]DeliveryState{&Accepted{}}, s.outcomes); diff != "" {
				t.Errorf("client dispositions (-want +got):\n%s", diff)
			}
		})
	}
}

// recordedConversations returns, per oracle case, the frames a go-amqp
// client sent in TestGoAMQPClientConversation, as fuzz seeds.
func recordedConversations(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	for _, c := range oracleCases() {
		deliver, err := c.ours.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		s, _ := runConversation(t, c.go_, deliver)
		out[c.name] = bytes.Clone(s.recorded)
	}
	return out
}
