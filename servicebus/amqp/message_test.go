package amqp

import (
	"errors"
	"fmt"
	"testing"
	"time"

	goamqp "github.com/Azure/go-amqp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// oracleCase is a message built with go-amqp and the same message as this
// package decodes it.
type oracleCase struct {
	name string
	go_  *goamqp.Message
	ours *Message
}

func oracleCases() []oracleCase {
	enqueued := time.UnixMilli(1700000000123).UTC()
	locked := enqueued.Add(30 * time.Second)
	lockToken := UUID{0x5a, 0x1c, 0x2e, 0x3f, 0x4b, 0x5d, 0x4e, 0x7f, 0x80, 0x91, 0xa2, 0xb3, 0xc4, 0xd5, 0xe6, 0xf7}
	msgUUID := UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	s := func(v string) *string { return &v }
	return []oracleCase{
		{
			name: "ServiceBusReceived",
			go_: &goamqp.Message{
				Header: &goamqp.MessageHeader{Durable: true, Priority: 4, TTL: 90 * time.Second, DeliveryCount: 2},
				DeliveryAnnotations: goamqp.Annotations{
					"x-opt-lock-token": goamqp.UUID(lockToken),
				},
				Annotations: goamqp.Annotations{
					"x-opt-sequence-number": int64(1 << 40),
					"x-opt-enqueued-time":   enqueued,
					"x-opt-locked-until":    locked,
					"x-opt-partition-key":   "pk",
					"x-opt-offset":          "12345",
				},
				Properties: &goamqp.MessageProperties{
					MessageID:     "mid-1",
					To:            s("queue1"),
					Subject:       s("subj"),
					ReplyTo:       s("replies"),
					CorrelationID: goamqp.UUID(msgUUID),
					ContentType:   s("application/json"),
					GroupID:       s("session-1"),
					GroupSequence: ptr(uint32(3)),
					CreationTime:  &enqueued,
				},
				ApplicationProperties: map[string]any{"tenant": "acme", "attempt": int32(1)},
				Data:                  [][]byte{[]byte(`{"a":1}`)},
			},
			ours: &Message{
				Header:              &Header{Durable: true, TTL: ptr(uint32(90000)), DeliveryCount: 2},
				DeliveryAnnotations: Map{{Symbol("x-opt-lock-token"), lockToken}},
				MessageAnnotations: Map{
					{Symbol("x-opt-sequence-number"), int64(1 << 40)},
					{Symbol("x-opt-enqueued-time"), enqueued},
					{Symbol("x-opt-locked-until"), locked},
					{Symbol("x-opt-partition-key"), "pk"},
					{Symbol("x-opt-offset"), "12345"},
				},
				Properties: &Properties{
					MessageID: "mid-1", To: "queue1", Subject: "subj", ReplyTo: "replies",
					CorrelationID: msgUUID, ContentType: "application/json", GroupID: "session-1",
					GroupSequence: ptr(uint32(3)), CreationTime: enqueued,
				},
				ApplicationProperties: Map{{"tenant", "acme"}, {"attempt", int32(1)}},
				Data:                  [][]byte{[]byte(`{"a":1}`)},
			},
		},
		{
			name: "ApplicationPropertiesManyTypes",
			go_: &goamqp.Message{
				Header: &goamqp.MessageHeader{Priority: 9, FirstAcquirer: true},
				Properties: &goamqp.MessageProperties{
					MessageID: uint64(42), UserID: []byte("user"), CorrelationID: []byte{9, 9},
					ContentEncoding: s("gzip"), AbsoluteExpiryTime: &locked, ReplyToGroupID: s("rg"),
				},
				ApplicationProperties: map[string]any{
					"bool": true, "u8": uint8(1), "u16": uint16(2), "u32": uint32(3), "u64": uint64(1 << 50),
					"i8": int8(-1), "i16": int16(-2), "i32": int32(-3), "i64": int64(-1 << 50),
					"f32": float32(1.5), "f64": 2.25, "str": "s", "bin": []byte{1, 2},
					"time": enqueued, "uuid": goamqp.UUID(msgUUID), "null": nil,
					"longs": []int64{1, 2, 3}, "strs": []string{"a", "b"},
				},
				Value: "the body",
			},
			ours: &Message{
				Header: &Header{Priority: ptr(uint8(9)), FirstAcquirer: true},
				Properties: &Properties{
					MessageID: uint64(42), UserID: []byte("user"), CorrelationID: []byte{9, 9},
					ContentEncoding: "gzip", AbsoluteExpiryTime: locked, ReplyToGroupID: "rg",
				},
				ApplicationProperties: Map{
					{"bool", true}, {"u8", uint8(1)}, {"u16", uint16(2)}, {"u32", uint32(3)}, {"u64", uint64(1 << 50)},
					{"i8", int8(-1)}, {"i16", int16(-2)}, {"i32", int32(-3)}, {"i64", int64(-1 << 50)},
					{"f32", float32(1.5)}, {"f64", 2.25}, {"str", "s"}, {"bin", []byte{1, 2}},
					{"time", enqueued}, {"uuid", msgUUID}, {"null", nil},
					{"longs", []int64{1, 2, 3}}, {"strs", []string{"a", "b"}},
				},
				Value:    "the body",
				HasValue: true,
			},
		},
		{
			name: "ValueMap",
			go_: &goamqp.Message{
				Value: map[string]any{"k": int64(1)},
			},
			ours: &Message{Value: Map{{"k", int64(1)}}, HasValue: true},
		},
		{
			name: "ValueList",
			go_:  &goamqp.Message{Value: []any{int64(1), "two", []byte{3}}},
			ours: &Message{Value: []any{int64(1), "two", []byte{3}}, HasValue: true},
		},
		{
			name: "ValueInt64",
			go_:  &goamqp.Message{Value: int64(-5000000000)},
			ours: &Message{Value: int64(-5000000000), HasValue: true},
		},
		{
			name: "Sequence",
			go_: &goamqp.Message{
				Sequence: [][]any{{int64(1), "a"}, {true}},
				Footer:   goamqp.Annotations{"x-footer": "f"},
			},
			ours: &Message{
				Sequence: [][]any{{int64(1), "a"}, {true}},
				Footer:   Map{{Symbol("x-footer"), "f"}},
			},
		},
		{
			name: "ManyDataSections",
			go_:  &goamqp.Message{Data: [][]byte{[]byte("one"), make([]byte, 300), {}}},
			ours: &Message{Data: [][]byte{[]byte("one"), make([]byte, 300), {}}},
		},
	}
}

// sortMaps compares Maps as sets of pairs, since go-amqp's are Go maps and
// encode in random order.
var sortMaps = cmpopts.SortSlices(func(a, b KV) bool { return fmt.Sprint(a.Key) < fmt.Sprint(b.Key) })

// TestOracleGoAMQPToOurs decodes messages encoded by go-amqp.
func TestOracleGoAMQPToOurs(t *testing.T) {
	for _, tt := range oracleCases() {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.go_.MarshalBinary()
			if err != nil {
				t.Fatalf("go-amqp MarshalBinary: %v", err)
			}
			got, err := UnmarshalMessage(b)
			if err != nil {
				t.Fatalf("UnmarshalMessage: %v", err)
			}
			if diff := cmp.Diff(tt.ours, got, sortMaps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("UnmarshalMessage (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOracleOursToGoAMQP has go-amqp decode messages this package encodes.
func TestOracleOursToGoAMQP(t *testing.T) {
	for _, tt := range oracleCases() {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.ours.MarshalBinary()
			if err != nil {
				t.Fatalf("MarshalBinary: %v", err)
			}
			var got goamqp.Message
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatalf("go-amqp UnmarshalBinary: %v", err)
			}
			if diff := cmp.Diff(tt.go_, &got, cmpopts.IgnoreUnexported(goamqp.Message{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("go-amqp UnmarshalBinary (-want +got):\n%s", diff)
			}
			// And our own decoder agrees with our encoder.
			again, err := UnmarshalMessage(b)
			if err != nil {
				t.Fatalf("UnmarshalMessage: %v", err)
			}
			if diff := cmp.Diff(tt.ours, again, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("UnmarshalMessage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessageEncoding(t *testing.T) {
	m := &Message{
		Header:             &Header{Durable: true},
		MessageAnnotations: Map{{Symbol("x"), int64(1)}},
		Properties:         &Properties{MessageID: "m"},
		Data:               [][]byte{{1}},
	}
	want := hexBytes(
		0x00, 0x53, 0x70, 0xc0, 2, 1, 0x41,
		0x00, 0x53, 0x72, 0xc1, 6, 2, 0xa3, 1, "x", 0x55, 1,
		0x00, 0x53, 0x73, 0xc0, 4, 1, 0xa1, 1, "m",
		0x00, 0x53, 0x75, 0xa0, 1, 1,
	)
	got, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MarshalBinary (-want +got):\n%s", diff)
	}
	for i := range len(got) {
		if _, err := UnmarshalMessage(got[:i]); err == nil && !sectionBoundary(got, i) {
			t.Errorf("UnmarshalMessage of the first %d of %d bytes succeeded", i, len(got))
		}
	}
}

// sectionBoundary reports whether the first i bytes of an encoded message
// end between sections, so that they are a valid message themselves.
func sectionBoundary(b []byte, i int) bool {
	secs, err := SplitSections(b)
	if err != nil {
		return false
	}
	n := 0
	for _, s := range secs {
		if n == i {
			return true
		}
		n += len(s.Raw)
	}
	return n == i
}

func TestMessageNullValue(t *testing.T) {
	b, err := (&Message{HasValue: true}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hexBytes(0x00, 0x53, 0x77, 0x40), b); diff != "" {
		t.Errorf("MarshalBinary (-want +got):\n%s", diff)
	}
	m, err := UnmarshalMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasValue || m.Value != nil {
		t.Errorf("decoded HasValue=%v Value=%v, want a present null", m.HasValue, m.Value)
	}
}

func TestMessageErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"NotDescribed", hexBytes(0x40)},
		{"UnknownSection", hexBytes(0x00, 0x53, 0x79, 0x40)},
		{"OutOfOrder", hexBytes(0x00, 0x53, 0x73, 0x45, 0x00, 0x53, 0x70, 0x45)},
		{"DuplicateHeader", hexBytes(0x00, 0x53, 0x70, 0x45, 0x00, 0x53, 0x70, 0x45)},
		{"MixedBody", hexBytes(0x00, 0x53, 0x75, 0xa0, 0, 0x00, 0x53, 0x76, 0x45)},
		{"TwoValues", hexBytes(0x00, 0x53, 0x77, 0x40, 0x00, 0x53, 0x77, 0x40)},
		{"DataNotBinary", hexBytes(0x00, 0x53, 0x75, 0xa1, 0)},
		{"AnnotationsNotMap", hexBytes(0x00, 0x53, 0x72, 0x45)},
		{"SequenceNotList", hexBytes(0x00, 0x53, 0x76, 0x40)},
		{"HeaderPriorityWrongType", hexBytes(0x00, 0x53, 0x70, 0xc0, 4, 2, 0x40, 0x52, 1)},
		{"Truncated", hexBytes(0x00, 0x53, 0x75, 0xb0, 0, 0, 1, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := UnmarshalMessage(tt.in)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("UnmarshalMessage error = %v, want a *DecodeError", err)
			}
		})
	}
	if _, err := (&Message{Data: [][]byte{{}}, Value: "x"}).MarshalBinary(); err == nil {
		t.Error("MarshalBinary of a mixed body succeeded")
	}
}

func TestMessageSymbolicSectionDescriptors(t *testing.T) {
	in := hexBytes(
		0x00, 0xa3, 16, "amqp:header:list", 0xc0, 2, 1, 0x41,
		0x00, 0xa3, 16, "amqp:data:binary", 0xa0, 2, "hi",
	)
	m, err := UnmarshalMessage(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &Message{Header: &Header{Durable: true}, Data: [][]byte{[]byte("hi")}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("UnmarshalMessage (-want +got):\n%s", diff)
	}
}
