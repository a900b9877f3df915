package wire

import (
	"bytes"
	"fmt"
	"net"
)

// clientFrame is one frame the client sent, with its own copy of the
// payload.
type clientFrame struct {
	Frame
	method Method // decoded, for method frames
}

// scriptedServer answers an amqp091-go client with this codec: every
// synchronous method gets its -ok, a publish gets a basic.return and a
// confirm, a consume gets a delivery, and every frame the client sends is
// kept.
type scriptedServer struct {
	conn     net.Conn
	r        *Reader
	out      []byte
	frameMax uint32
	frames   []clientFrame
	gets     int
	confirms map[uint16]uint64 // channel -> last publish sequence number
	// published holds each publish's decoded properties and body.
	published []publishedMessage
}

// publishedMessage is a basic.publish as the server decoded it.
type publishedMessage struct {
	Method *BasicPublish
	Header ContentHeader
	Props  Properties
	Body   []byte
}

// deliveryProps are the properties the server sends with its delivery.
func deliveryProps() Properties {
	p := allProperties()
	p.Headers = everyFieldType()
	return p
}

// deliveryBody is the delivered body: over two frames at frame-max 4096.
func deliveryBody() []byte { return bytes.Repeat([]byte("lapse-body."), 1000) }

// send appends m to the output and writes it.
func (s *scriptedServer) send(channel uint16, m Method) error {
	s.out = AppendMethodFrame(s.out[:0], channel, m)
	_, err := s.conn.Write(s.out)
	return err
}

// sendContent writes a method with content.
func (s *scriptedServer) sendContent(channel uint16, m Method, props []byte, body []byte) error {
	s.out = AppendMethodFrame(s.out[:0], channel, m)
	s.out = AppendContent(s.out, channel, ClassBasic, props, body, s.frameMax)
	_, err := s.conn.Write(s.out)
	return err
}

// next reads the client's next frame other than a heartbeat, and keeps it.
func (s *scriptedServer) next() (clientFrame, error) {
	for {
		f, err := s.r.ReadFrame()
		if err != nil {
			return clientFrame{}, err
		}
		cf := clientFrame{Frame: Frame{Type: f.Type, Channel: f.Channel, Payload: bytes.Clone(f.Payload)}}
		if cf.Payload == nil {
			cf.Payload = []byte{}
		}
		if f.Type == FrameMethod {
			if cf.method, err = ReadMethod(f.Payload); err != nil {
				return clientFrame{}, err
			}
		}
		s.frames = append(s.frames, cf)
		if f.Type != FrameHeartbeat {
			return cf, nil
		}
	}
}

// serve runs the session until the client's connection.close.
func (s *scriptedServer) serve() error {
	h, err := s.r.ReadProtocolHeader()
	if err != nil {
		return err
	}
	if h != ProtocolHeader {
		return fmt.Errorf("protocol header %q", h)
	}
	err = s.send(0, &ConnectionStart{
		VersionMajor: 0, VersionMinor: 9,
		ServerProperties: map[string]any{
			"product": "lapse", "version": "test", "platform": "Go",
			"capabilities": map[string]any{
				"publisher_confirms": true, "exchange_exchange_bindings": true, "basic.nack": true,
				"consumer_cancel_notify": true, "connection.blocked": true, "consumer_priorities": true,
				"authentication_failure_close": true, "per_consumer_qos": true, "direct_reply_to": true,
			},
		},
		Mechanisms: "PLAIN AMQPLAIN",
		Locales:    "en_US",
	})
	if err != nil {
		return err
	}
	for {
		f, err := s.next()
		if err != nil {
			return err
		}
		if f.Type != FrameMethod {
			return fmt.Errorf("frame type %d where a method was due", f.Type)
		}
		done, err := s.handle(f.Channel, f.method)
		if err != nil || done {
			return err
		}
	}
}

// readContent reads the content header and body frames after a method.
func (s *scriptedServer) readContent(channel uint16) (ContentHeader, []byte, error) {
	f, err := s.next()
	if err != nil {
		return ContentHeader{}, nil, err
	}
	if f.Type != FrameHeader || f.Channel != channel {
		return ContentHeader{}, nil, fmt.Errorf("frame type %d on %d where a content header was due", f.Type, f.Channel)
	}
	h, err := ReadContentHeader(f.Payload)
	if err != nil {
		return ContentHeader{}, nil, err
	}
	var body []byte
	for uint64(len(body)) < h.BodySize {
		f, err := s.next()
		if err != nil {
			return ContentHeader{}, nil, err
		}
		if f.Type != FrameBody || f.Channel != channel {
			return ContentHeader{}, nil, fmt.Errorf("frame type %d where a body frame was due", f.Type)
		}
		body = append(body, f.Payload...)
	}
	return h, body, nil
}

// handle answers one method; done is true after connection.close.
func (s *scriptedServer) handle(ch uint16, m Method) (done bool, err error) {
	switch m := m.(type) {
	case *ConnectionStartOk:
		return false, s.send(0, &ConnectionTune{ChannelMax: 2047, FrameMax: 4096, Heartbeat: 0})
	case *ConnectionTuneOk:
		s.frameMax = m.FrameMax
		s.r.SetMaxFrame(m.FrameMax)
		return false, nil
	case *ConnectionOpen:
		return false, s.send(0, &ConnectionOpenOk{})
	case *ConnectionClose:
		return true, s.send(0, &ConnectionCloseOk{})
	case *ChannelOpen:
		return false, s.send(ch, &ChannelOpenOk{})
	case *ChannelFlow:
		return false, s.send(ch, &ChannelFlowOk{Active: m.Active})
	case *ChannelClose:
		return false, s.send(ch, &ChannelCloseOk{})
	case *ExchangeDeclare:
		return false, s.send(ch, &ExchangeDeclareOk{})
	case *ExchangeDelete:
		return false, s.send(ch, &ExchangeDeleteOk{})
	case *ExchangeBind:
		return false, s.send(ch, &ExchangeBindOk{})
	case *ExchangeUnbind:
		return false, s.send(ch, &ExchangeUnbindOk{})
	case *QueueDeclare:
		// A resource alarm comes and goes before the answer.
		if err := s.send(0, &ConnectionBlocked{Reason: "low on memory"}); err != nil {
			return false, err
		}
		if err := s.send(0, &ConnectionUnblocked{}); err != nil {
			return false, err
		}
		return false, s.send(ch, &QueueDeclareOk{Queue: m.Queue, MessageCount: 3, ConsumerCount: 1})
	case *QueueBind:
		return false, s.send(ch, &QueueBindOk{})
	case *QueueUnbind:
		return false, s.send(ch, &QueueUnbindOk{})
	case *QueuePurge:
		return false, s.send(ch, &QueuePurgeOk{MessageCount: 7})
	case *QueueDelete:
		return false, s.send(ch, &QueueDeleteOk{MessageCount: 8})
	case *BasicQos:
		return false, s.send(ch, &BasicQosOk{})
	case *ConfirmSelect:
		s.confirms[ch] = 0
		return false, s.send(ch, &ConfirmSelectOk{})
	case *BasicPublish:
		h, body, err := s.readContent(ch)
		if err != nil {
			return false, err
		}
		props, err := DecodeProperties(h.Props)
		if err != nil {
			return false, err
		}
		s.published = append(s.published, publishedMessage{m, h, props, body})
		if m.Mandatory {
			// Unroutable: back it goes, with the client's own properties.
			err := s.sendContent(ch, &BasicReturn{ReplyCode: NoRoute, ReplyText: "NO_ROUTE", Exchange: m.Exchange, RoutingKey: m.RoutingKey}, h.Props, body)
			if err != nil {
				return false, err
			}
		}
		if seq, ok := s.confirms[ch]; ok {
			s.confirms[ch] = seq + 1
			return false, s.send(ch, &BasicAck{DeliveryTag: seq + 1})
		}
		return false, nil
	case *BasicConsume:
		if err := s.send(ch, &BasicConsumeOk{ConsumerTag: m.ConsumerTag}); err != nil {
			return false, err
		}
		props := deliveryProps()
		deliver := &BasicDeliver{ConsumerTag: m.ConsumerTag, DeliveryTag: 1, Redelivered: true, Exchange: "ex", RoutingKey: "rk.a"}
		return false, s.sendContent(ch, deliver, props.Append(nil), deliveryBody())
	case *BasicCancel:
		return false, s.send(ch, &BasicCancelOk{ConsumerTag: m.ConsumerTag})
	case *BasicGet:
		s.gets++
		if s.gets > 1 {
			return false, s.send(ch, &BasicGetEmpty{})
		}
		props := Properties{Flags: FlagType | FlagReplyTo, Type: "", ReplyTo: "r", Priority: 1}
		return false, s.sendContent(ch, &BasicGetOk{DeliveryTag: 42, Redelivered: true, Exchange: "ex", RoutingKey: "rk", MessageCount: 5}, props.Append(nil), nil)
	case *BasicAck, *BasicNack, *BasicReject:
		return false, nil
	case *BasicRecover:
		return false, s.send(ch, &BasicRecoverOk{})
	case *TxSelect:
		return false, s.send(ch, &TxSelectOk{})
	case *TxCommit:
		return false, s.send(ch, &TxCommitOk{})
	case *TxRollback:
		return false, s.send(ch, &TxRollbackOk{})
	}
	return false, fmt.Errorf("no script for %T", m)
}
