package amqp

import (
	"bytes"
	"testing"
	"time"
)

// benchMessage is a typical Service Bus message as a server delivers it.
func benchMessage() *Message {
	now := time.UnixMilli(1700000000123).UTC()
	return &Message{
		Header:              &Header{Durable: true, DeliveryCount: 1},
		DeliveryAnnotations: Map{{Symbol("x-opt-lock-token"), UUID{1, 2, 3}}},
		MessageAnnotations: Map{
			{Symbol("x-opt-sequence-number"), int64(123456)},
			{Symbol("x-opt-enqueued-time"), now},
			{Symbol("x-opt-locked-until"), now.Add(time.Minute)},
		},
		Properties:            &Properties{MessageID: "6b2f1a5e-0c7d-4f2a-9b1e-3c5d7e9f1a2b", ContentType: "application/json"},
		ApplicationProperties: Map{{"tenant", "acme"}, {"attempt", int32(1)}},
		Data:                  [][]byte{bytes.Repeat([]byte("x"), 1024)},
	}
}

func benchTransfer() *Transfer {
	id := uint32(42)
	format := uint32(0)
	settled := false
	return &Transfer{Handle: 1, DeliveryID: &id, DeliveryTag: []byte("0123456789abcdef"), MessageFormat: &format, Settled: &settled}
}

func BenchmarkEncodeTransferAndMessage(b *testing.B) {
	m, tr := benchMessage(), benchTransfer()
	var payload, frame []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if payload, err = AppendMessage(payload[:0], m); err != nil {
			b.Fatal(err)
		}
		if frame, err = AppendFrame(frame[:0], FrameAMQP, 0, tr, payload); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(frame)))
}

func BenchmarkDecodeTransferAndMessage(b *testing.B) {
	payload, err := benchMessage().MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	frame, err := AppendFrame(nil, FrameAMQP, 0, benchTransfer(), payload)
	if err != nil {
		b.Fatal(err)
	}
	r := bytes.NewReader(frame)
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(frame)
		f, nb, err := ReadFrame(r, buf, 1<<16)
		if err != nil {
			b.Fatal(err)
		}
		buf = nb
		if _, err := UnmarshalMessage(f.Payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeTransferFrame(b *testing.B) {
	frame, err := AppendFrame(nil, FrameAMQP, 0, benchTransfer(), []byte("payload"))
	if err != nil {
		b.Fatal(err)
	}
	r := bytes.NewReader(frame)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(frame)
		if _, buf, err = ReadFrame(r, buf, 1<<16); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSplitSections(b *testing.B) {
	payload, err := benchMessage().MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SplitSections(payload); err != nil {
			b.Fatal(err)
		}
	}
}
