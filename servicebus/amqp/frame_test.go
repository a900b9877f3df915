package amqp

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestFrameRoundTrip(t *testing.T) {
	var stream []byte
	var want []Frame
	for i, p := range append(fullPerformatives(), minimalPerformatives()...) {
		typ := FrameAMQP
		if p.Descriptor() >= 0x40 {
			typ = FrameSASL
		}
		var payload []byte
		if _, ok := p.(*Transfer); ok {
			payload = []byte("message bytes")
		}
		var err error
		if stream, err = AppendFrame(stream, typ, uint16(i), p, payload); err != nil {
			t.Fatalf("AppendFrame(%T): %v", p, err)
		}
		want = append(want, Frame{Type: typ, Channel: uint16(i), Body: p, Payload: payload})
	}
	stream, _ = AppendFrame(stream, FrameAMQP, 0, nil, nil)
	want = append(want, Frame{})

	for _, r := range []struct {
		name string
		r    func() io.Reader
	}{
		{"Whole", func() io.Reader { return bytes.NewReader(stream) }},
		{"OneByteReads", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) }},
		{"HalfReads", func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) }},
	} {
		t.Run(r.name, func(t *testing.T) {
			rd := r.r()
			var buf []byte
			for i, w := range want {
				var f Frame
				var err error
				f, buf, err = ReadFrame(rd, buf, 1<<20)
				if err != nil {
					t.Fatalf("frame %d: ReadFrame: %v", i, err)
				}
				if diff := cmp.Diff(w, f); diff != "" {
					t.Errorf("frame %d (-want +got):\n%s", i, diff)
				}
			}
			if _, _, err := ReadFrame(rd, buf, 1<<20); err != io.EOF {
				t.Errorf("ReadFrame at the end = %v, want io.EOF", err)
			}
		})
	}
}

func TestAppendFrameEmpty(t *testing.T) {
	got, err := AppendFrame(nil, FrameAMQP, 5, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]byte{0, 0, 0, 8, 2, 0, 0, 5}, got); diff != "" {
		t.Errorf("empty frame (-want +got):\n%s", diff)
	}
	if _, err := AppendFrame(nil, FrameAMQP, 0, nil, []byte{1}); err == nil {
		t.Error("AppendFrame of an empty frame with a payload succeeded")
	}
}

func TestReadFrameSpecVectors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want Frame
	}{
		{"Heartbeat", hexBytes(0, 0, 0, 8, 2, 0, 0, 0), Frame{}},
		{"ExtendedHeaderIgnored", hexBytes(0, 0, 0, 16, 3, 0, 0, 1, 9, 9, 9, 9, 0x00, 0x53, 0x18, 0x45),
			Frame{Channel: 1, Body: &Close{}}},
		{"SASLMechanisms", hexBytes(0, 0, 0, 31, 2, 1, 0, 0, 0x00, 0x53, 0x40, 0xc0, 18, 1,
			0xe0, 15, 2, 0xa3, 5, "PLAIN", 6, "SCRAMx"),
			Frame{Type: FrameSASL, Body: &SASLMechanisms{Mechanisms: []Symbol{"PLAIN", "SCRAMx"}}}},
		{"TransferWithPayload", hexBytes(0, 0, 0, 20, 2, 0, 0, 2, 0x00, 0x53, 0x14, 0xc0, 3, 1, 0x52, 4,
			0x00, 0x53, 0x75, 0xa0),
			Frame{Channel: 2, Body: &Transfer{Handle: 4}, Payload: hexBytes(0x00, 0x53, 0x75, 0xa0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := ReadFrame(bytes.NewReader(tt.in), nil, 512)
			if err != nil {
				t.Fatalf("ReadFrame: %v", err)
			}
			if diff := cmp.Diff(tt.want, f); diff != "" {
				t.Errorf("ReadFrame (-want +got):\n%s", diff)
			}
			g, n, err := ParseFrame(tt.in, 512)
			if err != nil || n != len(tt.in) {
				t.Fatalf("ParseFrame = %d, %v", n, err)
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("ParseFrame (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadFrameErrors(t *testing.T) {
	closeBody := hexBytes(0x00, 0x53, 0x18, 0x45)
	tests := []struct {
		name    string
		in      []byte
		maxSize uint32
		want    error // nil: any *DecodeError
	}{
		{"SizeBelowHeader", hexBytes(0, 0, 0, 7, 2, 0, 0, 0), 512, nil},
		{"DataOffsetBelow2", hexBytes(0, 0, 0, 8, 1, 0, 0, 0), 512, nil},
		{"DataOffsetPastFrame", hexBytes(0, 0, 0, 8, 3, 0, 0, 0), 512, nil},
		{"UnknownType", hexBytes(0, 0, 0, 8, 2, 7, 0, 0), 512, nil},
		{"TooLarge", hexBytes(0, 0, 2, 1, 2, 0, 0, 0), 512, nil},
		{"TooLargeForMinimum", hexBytes(0, 0, 2, 1, 2, 0, 0, 0), 0, nil},
		{"Huge", hexBytes(0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0), 1 << 20, nil},
		{"SASLBodyInAMQPFrame", hexBytes(0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53, 0x44, 0x45), 512, nil},
		{"AMQPBodyInSASLFrame", hexBytes(0, 0, 0, 12, 2, 1, 0, 0, closeBody), 512, nil},
		{"BodyNotPerformative", hexBytes(0, 0, 0, 9, 2, 0, 0, 0, 0x40), 512, nil},
		{"TruncatedHeader", hexBytes(0, 0, 0), 512, io.ErrUnexpectedEOF},
		{"TruncatedBody", hexBytes(0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53), 512, io.ErrUnexpectedEOF},
		{"Nothing", nil, 512, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadFrame(bytes.NewReader(tt.in), nil, tt.maxSize)
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("ReadFrame error = %v, want %v", err, tt.want)
				}
				return
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("ReadFrame error = %v, want a *DecodeError", err)
			}
		})
	}
}

// issue 16.8: a frame header from which no frame can be formed (a size
// over the max-frame-size, a bad data offset, an unknown type) is a
// framing fault, which a server answers with amqp:connection:framing-error
// (§2.7.1, §2.8.17); a malformed body is a decode error.
func TestReadFrameHeaderFaultsAreFramingErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		framing bool
	}{
		{"TooLarge", hexBytes(0, 0, 2, 1, 2, 0, 0, 0), true},
		{"Huge", hexBytes(0x7f, 0xff, 0xff, 0xff, 2, 0, 0, 0), true},
		{"DataOffsetBelow2", hexBytes(0, 0, 0, 8, 1, 0, 0, 0), true},
		{"DataOffsetPastFrame", hexBytes(0, 0, 0, 8, 3, 0, 0, 0), true},
		{"UnknownType", hexBytes(0, 0, 0, 8, 2, 7, 0, 0), true},
		{"BodyNotPerformative", hexBytes(0, 0, 0, 9, 2, 0, 0, 0, 0x40), false},
		{"SASLBodyInAMQPFrame", hexBytes(0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53, 0x44, 0x45), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadFrame(bytes.NewReader(tt.in), nil, 512)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("ReadFrame error = %v, want a *DecodeError", err)
			}
			if de.Framing != tt.framing {
				t.Fatalf("ReadFrame error %q: Framing = %t, want %t", de, de.Framing, tt.framing)
			}
		})
	}
}

// TestReadFrameTooLargeDoesNotReadOrAllocate checks that an oversized frame
// is refused from its header alone.
func TestReadFrameTooLargeDoesNotReadOrAllocate(t *testing.T) {
	in := append(hexBytes(0x7f, 0xff, 0xff, 0xff, 2, 0, 0, 0), make([]byte, 100)...)
	buf := make([]byte, 0, 512)
	n := MustAllocatedBytes(t, func() {
		r := bytes.NewReader(in)
		if _, _, err := ReadFrame(r, buf, 1<<16); err == nil {
			t.Fatal("ReadFrame succeeded")
		}
		if r.Len() != 100 {
			t.Fatalf("ReadFrame read %d body bytes", 100-r.Len())
		}
	})
	if n > 1024 {
		t.Errorf("ReadFrame allocated %d bytes refusing a frame", n)
	}
}

func TestReadFrameReusesBuffer(t *testing.T) {
	var stream []byte
	for i := range 3 {
		stream, _ = AppendFrame(stream, FrameAMQP, 0, &Transfer{Handle: uint32(i)}, []byte{byte(i)})
	}
	r := bytes.NewReader(stream)
	buf := make([]byte, 0, 1024)
	for i := range 3 {
		f, got, err := ReadFrame(r, buf, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if &got[:1][0] != &buf[:1][0] {
			t.Fatalf("frame %d: ReadFrame did not reuse a large enough buffer", i)
		}
		if !bytes.Equal(f.Payload, []byte{byte(i)}) {
			t.Errorf("frame %d: payload %v", i, f.Payload)
		}
	}
}

func TestProtocolHeaders(t *testing.T) {
	if got := string(HeaderAMQP[:]); got != "AMQP\x00\x01\x00\x00" {
		t.Errorf("HeaderAMQP = %q", got)
	}
	if got := string(HeaderSASL[:]); got != "AMQP\x03\x01\x00\x00" {
		t.Errorf("HeaderSASL = %q", got)
	}
}
