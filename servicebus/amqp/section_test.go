package amqp

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitSections(t *testing.T) {
	m := &Message{
		Header:                &Header{Durable: true, DeliveryCount: 1},
		DeliveryAnnotations:   Map{{Symbol("x-opt-lock-token"), UUID{1}}},
		MessageAnnotations:    Map{{Symbol("x-opt-sequence-number"), int64(7)}},
		Properties:            &Properties{MessageID: "id"},
		ApplicationProperties: Map{{"k", "v"}},
		Data:                  [][]byte{[]byte("a"), []byte("b")},
		Footer:                Map{},
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	secs, err := SplitSections(b)
	if err != nil {
		t.Fatal(err)
	}
	var codes []uint64
	var joined []byte
	for _, s := range secs {
		codes = append(codes, s.Code)
		joined = append(joined, s.Raw...)
	}
	if diff := cmp.Diff([]uint64{0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x75, 0x78}, codes); diff != "" {
		t.Errorf("section codes (-want +got):\n%s", diff)
	}
	if !bytes.Equal(joined, b) {
		t.Errorf("sections do not add up to the message")
	}

	// Rewrite the header and message annotations, keep the rest as is.
	var out []byte
	for _, s := range secs {
		switch s.Code {
		case 0x70:
			out, err = AppendSection(out, 0x70, &Header{Durable: true, DeliveryCount: 2})
		case 0x72:
			out, err = AppendSection(out, 0x72, Map{{Symbol("x-opt-sequence-number"), int64(8)}})
		default:
			out = append(out, s.Raw...)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := UnmarshalMessage(out)
	if err != nil {
		t.Fatal(err)
	}
	want := *m
	want.Header = &Header{Durable: true, DeliveryCount: 2}
	want.MessageAnnotations = Map{{Symbol("x-opt-sequence-number"), int64(8)}}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("rewritten message (-want +got):\n%s", diff)
	}
}

func TestSplitSectionsValueAndSymbolic(t *testing.T) {
	in := hexBytes(
		0x00, 0xa3, 16, "amqp:header:list", 0x45,
		0x00, 0x53, 0x77, 0x00, 0x53, 0x24, 0x45,
	)
	secs, err := SplitSections(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Section{{Code: 0x70, Raw: in[:20]}, {Code: 0x77, Raw: in[20:]}}
	if diff := cmp.Diff(want, secs); diff != "" {
		t.Errorf("SplitSections (-want +got):\n%s", diff)
	}
}

func TestSplitSectionsErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"NotDescribed", hexBytes(0xa0, 0)},
		{"UnknownCode", hexBytes(0x00, 0x53, 0x6f, 0x45)},
		{"DataNotBinary", hexBytes(0x00, 0x53, 0x75, 0x45)},
		{"HeaderNotList", hexBytes(0x00, 0x53, 0x70, 0x40)},
		{"AnnotationsNotMap", hexBytes(0x00, 0x53, 0x72, 0x45)},
		{"Truncated", hexBytes(0x00, 0x53, 0x75, 0xa0, 5, 1)},
		{"BadNestedValue", hexBytes(0x00, 0x53, 0x74, 0xc1, 3, 2, 0xa1, 0x01)},
		{"ValueTruncated", hexBytes(0x00, 0x53, 0x77)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := SplitSections(tt.in)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("SplitSections error = %v, want a *DecodeError", err)
			}
		})
	}
}

func TestHeaderAppendCountedWritesDeliveryCountAtZero(t *testing.T) {
	// issue 13.2: a delivered message's header carries delivery-count even
	// when it is 0; the other fields at their defaults stay out.
	tests := []struct {
		name string
		h    *Header
		want []byte
	}{
		{"Zero", &Header{}, hexBytes(0x00, 0x53, 0x70, 0xc0, 6, 5, 0x40, 0x40, 0x40, 0x40, 0x43)},
		{"TTL", &Header{TTL: ptr(uint32(60000))}, hexBytes(0x00, 0x53, 0x70, 0xc0, 10, 5, 0x40, 0x40, 0x70, 0x00, 0x00, 0xea, 0x60, 0x40, 0x43)},
		{"Count", &Header{Durable: true, DeliveryCount: 2}, hexBytes(0x00, 0x53, 0x70, 0xc0, 7, 5, 0x41, 0x40, 0x40, 0x40, 0x52, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.h.AppendCounted(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("AppendCounted = % x, want % x", got, tt.want)
			}
			m, err := UnmarshalMessage(got)
			if err != nil || m.Header == nil || m.Header.DeliveryCount != tt.h.DeliveryCount {
				t.Fatalf("decodes to %+v, %v", m, err)
			}
		})
	}
}

func TestAppendSection(t *testing.T) {
	tests := []struct {
		name string
		code uint64
		v    any
		want []byte
	}{
		{"Header", 0x70, &Header{Durable: true}, hexBytes(0x00, 0x53, 0x70, 0xc0, 2, 1, 0x41)},
		{"Properties", 0x73, &Properties{To: "q"}, hexBytes(0x00, 0x53, 0x73, 0xc0, 6, 3, 0x40, 0x40, 0xa1, 1, "q")},
		{"MessageAnnotations", 0x72, Map{}, hexBytes(0x00, 0x53, 0x72, 0xc1, 1, 0)},
		{"Data", 0x75, []byte{1}, hexBytes(0x00, 0x53, 0x75, 0xa0, 1, 1)},
		{"Sequence", 0x76, []any{}, hexBytes(0x00, 0x53, 0x76, 0x45)},
		{"Value", 0x77, "s", hexBytes(0x00, 0x53, 0x77, 0xa1, 1, "s")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendSection(nil, tt.code, tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AppendSection (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []struct {
		code uint64
		v    any
	}{{0x70, Map{}}, {0x72, []byte{}}, {0x75, "s"}, {0x79, nil}, {0x70, (*Header)(nil)}} {
		if _, err := AppendSection(nil, bad.code, bad.v); err == nil {
			t.Errorf("AppendSection(%#x, %T) succeeded", bad.code, bad.v)
		}
	}
}
