package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The seed corpora in testdata/fuzz/Fuzz*/amqp091-* are frames amqp091-go
// sent in TestRecordClientSession (regenerate them with its -update flag);
// the f.Add seeds here cover what that client never sends.

// checkCodecError fails unless err is an *Error with one of codes.
func checkCodecError(t *testing.T, err error, codes ...uint16) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	for _, c := range codes {
		if e.Code == c {
			return
		}
	}
	t.Fatalf("error code %d, want one of %v: %v", e.Code, codes, err)
}

func FuzzReadFrame(f *testing.F) {
	_, stream := sampleFrames()
	f.Add(stream, uint16(9))
	f.Add([]byte{FrameHeartbeat, 0, 0, 0, 0, 0, 0, FrameEnd}, uint16(3))
	f.Add([]byte{FrameBody, 0, 1, 0, 0, 0x10, 0x01}, uint16(0))
	f.Add([]byte{FrameMethod, 0, 0, 0, 0, 0, 4, 0, 10, 0, 11, 0xCD}, uint16(11))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		cut := int(split) % (len(data) + 1)
		whole := NewReader(bytes.NewReader(data))
		parts := NewReader(io.MultiReader(bytes.NewReader(data[:cut]), iotestHalf(data[cut:])))
		pooled := NewPooledReader(io.MultiReader(bytes.NewReader(data[:cut]), iotestHalf(data[cut:])), &BufferPool{})
		want, wantErr := readAll(whole)
		got, gotErr := readAll(parts)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("frames read in two parts differ (-whole +parts):\n%s", diff)
		}
		if got, err := readAll(pooled); !sameError(wantErr, err) || !cmp.Equal(want, got) {
			t.Fatalf("a pooled Reader read %d frames then %v; want %d then %v", len(got), err, len(want), wantErr)
		}
		if wantErr != io.EOF && wantErr != io.ErrUnexpectedEOF {
			checkCodecError(t, wantErr, FrameError)
		}
		if !sameError(wantErr, gotErr) {
			t.Fatalf("errors differ: whole %v, parts %v", wantErr, gotErr)
		}
		// The frames read are exactly the front of the input.
		var again []byte
		for _, fr := range want {
			if len(fr.Payload)+frameOverhead > FrameMinSize+frameSizeFudge {
				t.Fatalf("frame of %d octets passed the limit", len(fr.Payload)+frameOverhead)
			}
			again = AppendFrame(again, fr.Type, fr.Channel, fr.Payload)
			// Whatever the payload, decoding it fails cleanly or not at all.
			switch fr.Type {
			case FrameMethod:
				if _, err := ReadMethod(fr.Payload); err != nil {
					checkCodecError(t, err, malformedCode, NotImplemented)
				}
			case FrameHeader:
				if h, err := ReadContentHeader(fr.Payload); err != nil {
					checkCodecError(t, err, malformedCode, UnexpectedFrame)
				} else if _, err := DecodeProperties(h.Props); err != nil {
					checkCodecError(t, err, malformedCode)
				}
			}
		}
		if !bytes.HasPrefix(data, again) {
			t.Fatal("re-encoded frames are not the front of the input")
		}
	})
}

// iotestHalf returns a reader of b that reads half of what it is asked.
func iotestHalf(b []byte) io.Reader { return &halfReader{b} }

// halfReader reads at most half the space it is given, at least one octet.
type halfReader struct{ b []byte }

func (h *halfReader) Read(p []byte) (int, error) {
	if len(h.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:max(1, len(p)/2)], h.b)
	h.b = h.b[n:]
	return n, nil
}

// sameError reports whether two ReadFrame errors are the same.
func sameError(a, b error) bool {
	var ea, eb *Error
	if errors.As(a, &ea) && errors.As(b, &eb) {
		return *ea == *eb
	}
	return a == b
}

func FuzzReadMethod(f *testing.F) {
	for _, m := range allMethods() {
		frame := AppendMethodFrame(nil, 0, fill(m, 1, 0x5))
		f.Add(frame[7 : len(frame)-1])
	}
	f.Add([]byte{0, 60, 0, 40})
	f.Add([]byte{0, 99, 0, 1, 2})
	f.Fuzz(func(t *testing.T, payload []byte) {
		m, err := ReadMethod(payload)
		if err != nil {
			checkCodecError(t, err, malformedCode, NotImplemented)
			return
		}
		// decode, encode, decode, encode: both encodings are the same.
		b1 := AppendMethodFrame(nil, 0, m)
		m2 := mustReadMethodFrame(t, b1, 0)
		b2 := AppendMethodFrame(nil, 0, m2)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("re-encoding is not stable:\n% x\n% x", b1, b2)
		}
		into := newMethod(m.ClassMethod())
		if err := ReadMethodInto(payload, into); err != nil {
			t.Fatalf("ReadMethodInto: %v", err)
		}
		if b3 := AppendMethodFrame(nil, 0, into); !bytes.Equal(b1, b3) {
			t.Fatal("ReadMethodInto decodes otherwise than ReadMethod")
		}
	})
}

func FuzzReadTable(f *testing.F) {
	f.Add(AppendTable(nil, everyFieldType()))
	f.Add(AppendTable(nil, nest(maxDepth)))
	f.Add([]byte{0, 0, 0, 11, 1, 'n', 'L', 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE})
	f.Add([]byte{0, 0, 0, 4, 1, 'k', 'Z', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		tbl, rest, err := ReadTable(b)
		ordered, orest, oerr := ReadOrderedTable(b)
		if (err == nil) != (oerr == nil) {
			t.Fatalf("ReadTable: %v, ReadOrderedTable: %v", err, oerr)
		}
		if err != nil {
			checkCodecError(t, err, malformedCode)
			return
		}
		if !bytes.HasSuffix(b, rest) || len(rest) > len(b)-4 || len(orest) != len(rest) {
			t.Fatal("rest is not the end of the input")
		}
		b1 := AppendTable(nil, tbl)
		// The ordered decoding, written back in its order, reads as the same
		// table.
		if t3, _, err := ReadTable(appendOrderedTable(nil, ordered, 1)); err != nil || !bytes.Equal(AppendTable(nil, t3), b1) {
			t.Fatalf("the ordered decoding differs: %v\n%v\n%v", err, t3, tbl)
		}
		if err := CheckTable(tbl); err != nil {
			t.Fatalf("a decoded table does not encode faithfully: %v", err)
		}
		t2, rest2, err := ReadTable(b1)
		if err != nil || len(rest2) != 0 {
			t.Fatalf("re-reading: %v, %d octets left", err, len(rest2))
		}
		if b2 := AppendTable(nil, t2); !bytes.Equal(b1, b2) {
			t.Fatalf("re-encoding is not stable:\n% x\n% x", b1, b2)
		}
	})
}

func FuzzDecodeProperties(f *testing.F) {
	p := allProperties()
	f.Add(p.Append(nil))
	f.Add((&Properties{Flags: FlagType | FlagClusterID}).Append(nil))
	f.Add([]byte{0x80, 0x01, 0x00, 0x00, 1, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeProperties(b)
		if err != nil {
			checkCodecError(t, err, malformedCode)
			return
		}
		b1 := p.Append(nil)
		p2, err := DecodeProperties(b1)
		if err != nil {
			t.Fatalf("re-reading: %v", err)
		}
		if p2.Flags != p.Flags {
			t.Fatalf("flags %016b became %016b", p.Flags, p2.Flags)
		}
		if b2 := p2.Append(nil); !bytes.Equal(b1, b2) {
			t.Fatalf("re-encoding is not stable:\n% x\n% x", b1, b2)
		}
	})
}
