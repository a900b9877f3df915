package rabbitmq_test

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/rabbitmq/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// FuzzConnection sends arbitrary bytes on an open connection, after the
// handshake and channel 1's channel.open: whatever they are, the server
// answers or closes that connection, and goes on serving others.
func FuzzConnection(f *testing.F) {
	frames := func(ms ...wire.Method) []byte {
		var b []byte
		for _, m := range ms {
			b = wire.AppendMethodFrame(b, 1, m)
		}
		return b
	}
	publish := func(props wire.Properties, body string) []byte {
		b := wire.AppendMethodFrame(nil, 1, &wire.BasicPublish{RoutingKey: "q"})
		return wire.AppendContent(b, 1, wire.ClassBasic, props.Append(nil), []byte(body), 4096)
	}
	f.Add(frames(&wire.QueueDeclare{Queue: "q", Arguments: map[string]any{"x-message-ttl": int32(100)}}))
	f.Add(append(frames(&wire.QueueDeclare{Queue: "q"}), publish(wire.Properties{Expiration: "5", Headers: map[string]any{"CC": []any{"q"}}}, "m")...))
	f.Add(frames(&wire.ConfirmSelect{}, &wire.TxSelect{}, &wire.BasicAck{DeliveryTag: 5, Multiple: true}))
	f.Add(frames(&wire.ExchangeDeclare{Exchange: "x", Type: "topic"}, &wire.QueueBind{Queue: "", Exchange: "x", RoutingKey: "#"}))
	f.Add(frames(&wire.BasicConsume{Queue: "q"}, &wire.BasicQos{PrefetchCount: 1, Global: true}, &wire.BasicRecover{Requeue: true}))
	f.Add(wire.AppendFrame(nil, wire.FrameBody, 1, []byte("body without a publish")))
	f.Add(wire.AppendFrame(nil, wire.FrameHeader, 1, []byte{0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}))
	s := MustServer(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		c := MustRawOpen(t, s, 0)
		c.send(1, &wire.ChannelOpen{})
		c.expect(&wire.ChannelOpenOk{})
		c.nc.Write(in)
		c.nc.(*net.TCPConn).CloseWrite()
		// The server answers what it can and closes once the input ends.
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.Copy(io.Discard, c.nc); err != nil {
			t.Fatalf("the server did not close the connection: %v", err)
		}
		// Others are served.
		conn, err := amqp.Dial(s.url)
		if err != nil {
			t.Fatalf("a new connection after %q: %v", in, err)
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDeclare("", false, true, true, false, nil); err != nil {
			t.Fatalf("declaring after %q: %v", in, err)
		}
	})
}

// clientMethods are the methods a client sends on a channel.
var clientMethods = []wire.Method{
	&wire.QueueDeclare{}, &wire.QueueBind{}, &wire.QueueUnbind{}, &wire.QueuePurge{}, &wire.QueueDelete{},
	&wire.ExchangeDeclare{}, &wire.ExchangeDelete{}, &wire.ExchangeBind{}, &wire.ExchangeUnbind{},
	&wire.BasicQos{}, &wire.BasicConsume{}, &wire.BasicCancel{}, &wire.BasicPublish{}, &wire.BasicGet{},
	&wire.BasicAck{}, &wire.BasicReject{}, &wire.BasicRecoverAsync{}, &wire.BasicRecover{}, &wire.BasicNack{},
	&wire.TxSelect{}, &wire.TxCommit{}, &wire.TxRollback{}, &wire.ConfirmSelect{}, &wire.ChannelFlow{},
	&wire.ChannelClose{}, &wire.ChannelCloseOk{}, &wire.AccessRequest{},
}

// FuzzMethods sends well-formed methods with arbitrary arguments: each
// piece of the input (split at 0xFF) is one method, chosen by its first
// octet, its arguments the rest, sent only when they decode; a publish is
// followed by a small content. The server must answer or close, and keep
// serving others.
func FuzzMethods(f *testing.F) {
	seed := func(ms ...wire.Method) []byte {
		var b []byte
		for _, m := range ms {
			for i, cm := range clientMethods {
				cc, cmid := cm.ClassMethod()
				if c, mid := m.ClassMethod(); c == cc && mid == cmid {
					p := wire.AppendMethodFrame(nil, 0, m)
					b = append(append(b, byte(i)), p[11:len(p)-1]...)
					b = append(b, 0xFF)
				}
			}
		}
		return b
	}
	f.Add(seed(&wire.QueueDeclare{Queue: "q", Arguments: map[string]any{"x-message-ttl": int32(0), "x-dead-letter-exchange": ""}},
		&wire.BasicConsume{Queue: "q"}, &wire.BasicPublish{RoutingKey: "q"}, &wire.BasicAck{DeliveryTag: 1}))
	f.Add(seed(&wire.ConfirmSelect{}, &wire.BasicPublish{Exchange: "amq.topic", RoutingKey: "a.b", Mandatory: true},
		&wire.QueueDeclare{Arguments: map[string]any{"x-max-length": int8(1), "x-overflow": "reject-publish"}}))
	f.Add(seed(&wire.TxSelect{}, &wire.BasicPublish{RoutingKey: "q"}, &wire.BasicGet{Queue: "q"}, &wire.TxCommit{},
		&wire.BasicNack{Multiple: true, Requeue: true}))
	s := MustServer(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		c := MustRawOpen(t, s, 0)
		c.send(1, &wire.ChannelOpen{})
		c.expect(&wire.ChannelOpenOk{})
		var out []byte
		for piece := range bytes.SplitSeq(in, []byte{0xFF}) {
			if len(piece) == 0 {
				continue
			}
			m := clientMethods[int(piece[0])%len(clientMethods)]
			cls, mid := m.ClassMethod()
			payload := append([]byte{byte(cls >> 8), byte(cls), byte(mid >> 8), byte(mid)}, piece[1:]...)
			if _, err := wire.ReadMethod(payload); err != nil {
				continue
			}
			out = wire.AppendFrame(out, wire.FrameMethod, 1, payload)
			if _, ok := m.(*wire.BasicPublish); ok {
				props := wire.Properties{Expiration: "0", DeliveryMode: 2}
				out = wire.AppendContent(out, 1, wire.ClassBasic, props.Append(nil), []byte("body"), 4096)
			}
		}
		c.nc.Write(out)
		c.nc.(*net.TCPConn).CloseWrite()
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.Copy(io.Discard, c.nc); err != nil {
			t.Fatalf("the server did not close the connection: %v", err)
		}
		conn, err := amqp.Dial(s.url)
		if err != nil {
			t.Fatalf("a new connection: %v", err)
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDeclare("", false, true, true, false, nil); err != nil {
			t.Fatalf("declaring: %v", err)
		}
	})
}
