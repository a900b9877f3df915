package wire

import (
	"bytes"
	"testing"
	"time"
)

// publishStream returns a basic.publish with its content header and a
// 256-octet body, as a client sends them.
func publishStream() []byte {
	props := Properties{ContentType: "application/json", DeliveryMode: 2, MessageID: "m-1", Timestamp: time.Unix(1700000000, 0)}
	b := AppendMethodFrame(nil, 1, &BasicPublish{Exchange: "orders", RoutingKey: "order.created"})
	return AppendContent(b, 1, ClassBasic, props.Append(nil), bytes.Repeat([]byte{'x'}, 256), 131072)
}

// BenchmarkDecodePublish reads a basic.publish, its content header and
// body, and decodes the method and the properties, as a server does for
// every message it is sent.
func BenchmarkDecodePublish(b *testing.B) {
	stream := publishStream()
	r := NewReader(&loopReader{data: stream})
	r.SetMaxFrame(131072)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := r.ReadFrame()
		if err != nil {
			b.Fatal(err)
		}
		m, err := ReadMethod(f.Payload)
		if err != nil || !HasContent(m) {
			b.Fatal(err)
		}
		decodeContent(b, r)
	}
}

// BenchmarkDecodePublishInto is BenchmarkDecodePublish decoding into a
// reused BasicPublish.
func BenchmarkDecodePublishInto(b *testing.B) {
	stream := publishStream()
	r := NewReader(&loopReader{data: stream})
	r.SetMaxFrame(131072)
	var pub BasicPublish
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := r.ReadFrame()
		if err != nil {
			b.Fatal(err)
		}
		if err := ReadMethodInto(f.Payload, &pub); err != nil {
			b.Fatal(err)
		}
		decodeContent(b, r)
	}
}

// decodeContent reads a content header and its body frame and decodes the
// properties.
func decodeContent(b *testing.B, r *Reader) {
	f, err := r.ReadFrame()
	if err != nil {
		b.Fatal(err)
	}
	h, err := ReadContentHeader(f.Payload)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := DecodeProperties(h.Props); err != nil {
		b.Fatal(err)
	}
	if f, err = r.ReadFrame(); err != nil || len(f.Payload) != int(h.BodySize) {
		b.Fatal(err)
	}
}

// BenchmarkDecodeAckInto decodes basic.ack into a reused value.
func BenchmarkDecodeAckInto(b *testing.B) {
	frame := AppendMethodFrame(nil, 1, &BasicAck{DeliveryTag: 123456, Multiple: true})
	payload := frame[7 : len(frame)-1]
	var ack BasicAck
	b.ReportAllocs()
	for b.Loop() {
		if err := ReadMethodInto(payload, &ack); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeDeliver encodes a basic.deliver with its content header
// and a 256-octet body, passing the publisher's raw properties through.
func BenchmarkEncodeDeliver(b *testing.B) {
	props := (&Properties{ContentType: "application/json", DeliveryMode: 2, MessageID: "m-1", Timestamp: time.Unix(1700000000, 0)}).Append(nil)
	body := bytes.Repeat([]byte{'x'}, 256)
	deliver := &BasicDeliver{ConsumerTag: "amq.ctag-abc", Exchange: "orders", RoutingKey: "order.created"}
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		deliver.DeliveryTag++
		dst = AppendMethodFrame(dst[:0], 1, deliver)
		dst = AppendContent(dst, 1, ClassBasic, props, body, 131072)
	}
	b.SetBytes(int64(len(dst)))
}

// BenchmarkEncodeProperties encodes properties with a small headers table.
func BenchmarkEncodeProperties(b *testing.B) {
	p := Properties{ContentType: "text/plain", DeliveryMode: 2, Headers: map[string]any{"x-retry": int32(3), "trace-id": "abc"}}
	dst := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		dst = p.Append(dst[:0])
	}
}
