package wire

import (
	"runtime"
	"testing"
)

func TestReadMethodTruncatedAtEveryOctet(t *testing.T) {
	for _, proto := range allMethods() {
		class, method := proto.ClassMethod()
		name := MethodName(class, method)
		t.Run(name, func(t *testing.T) {
			frame := AppendMethodFrame(nil, 1, fill(newMethod(class, method), 1, ^uint64(0)))
			payload := frame[7 : len(frame)-1]
			for n := range len(payload) {
				if _, err := ReadMethod(payload[:n]); !isCode(err, malformedCode) {
					t.Fatalf("payload cut to %d of %d octets: %v, want a %d error", n, len(payload), err, malformedCode)
				}
			}
			if _, err := ReadMethod(append(payload, 0)); !isCode(err, malformedCode) {
				t.Errorf("payload with an extra octet: %v, want a %d error", err, malformedCode)
			}
		})
	}
}

func TestReadTableTruncatedAtEveryOctet(t *testing.T) {
	b := AppendTable(nil, everyFieldType())
	for n := range len(b) {
		if _, _, err := ReadTable(b[:n]); !isCode(err, malformedCode) {
			t.Fatalf("table cut to %d of %d octets: %v", n, len(b), err)
		}
	}
	// Cutting the content but keeping the outer length consistent leaves
	// a field truncated inside the table.
	for n := 4; n < len(b); n++ {
		cut := appendU32(nil, uint32(n-4))
		cut = append(cut, b[4:n]...)
		if _, _, err := ReadTable(cut); err == nil {
			// Some cuts fall between two fields and give a valid smaller table.
			continue
		} else if !isCode(err, malformedCode) {
			t.Fatalf("content cut to %d: %v", n, err)
		}
	}
}

func TestReadPropertiesTruncatedAtEveryOctet(t *testing.T) {
	p := allProperties()
	b := p.Append(nil)
	for n := range len(b) {
		if _, err := DecodeProperties(b[:n]); !isCode(err, malformedCode) {
			t.Fatalf("properties cut to %d of %d octets: %v", n, len(b), err)
		}
	}
}

// TestLengthsBeyondThePayload checks that a length that claims more octets
// than are there is a syntax error and allocates nothing of that size.
func TestLengthsBeyondThePayload(t *testing.T) {
	huge := []byte{0xFF, 0xFF, 0xFF, 0xF0}
	cases := map[string]struct {
		decode func([]byte) error
		input  []byte
	}{
		"ShortString":              {readMethodErr, append([]byte{0, 60, 0, 40, 0, 0, 255}, "abc"...)},
		"LongString":               {readMethodErr, append([]byte{0, 10, 0, 20}, huge...)},
		"MethodTable":              {readMethodErr, append([]byte{0, 50, 0, 10, 0, 0, 1, 'q', 0}, huge...)},
		"Table":                    {readTableErr, huge},
		"TableString":              {readTableErr, append([]byte{0, 0, 0, 7, 1, 'k', 'S'}, huge...)},
		"TableBytes":               {readTableErr, append([]byte{0, 0, 0, 7, 1, 'k', 'x'}, huge...)},
		"TableArray":               {readTableErr, append([]byte{0, 0, 0, 7, 1, 'k', 'A'}, huge...)},
		"TableTable":               {readTableErr, append([]byte{0, 0, 0, 7, 1, 'k', 'F'}, huge...)},
		"TableKey":                 {readTableErr, []byte{0, 0, 0, 2, 200, 'k'}},
		"TableLongerThanItsParent": {readTableErr, append([]byte{0, 0, 0, 10, 1, 'k', 'F', 0, 0, 0, 9}, "abc"...)},
		"Headers":                  {decodePropertiesErr, append([]byte{0x20, 0}, huge...)},
		"ArrayString":              {readTableErr, append([]byte{0, 0, 0, 12, 1, 'k', 'A', 0, 0, 0, 5, 'S'}, huge...)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := tc.decode(tc.input)
			runtime.ReadMemStats(&after)
			if !isCode(err, malformedCode) {
				t.Errorf("decode = %v, want a %d error", err, malformedCode)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
				t.Errorf("decoding allocated %d octets", n)
			}
		})
	}
}

func readMethodErr(b []byte) error { _, err := ReadMethod(b); return err }

func readTableErr(b []byte) error { _, _, err := ReadTable(b); return err }

func decodePropertiesErr(b []byte) error { _, err := DecodeProperties(b); return err }

func TestReadTableUnknownFieldType(t *testing.T) {
	for _, typ := range []byte{'Z', 'U', 0, 'c'} {
		b := []byte{0, 0, 0, 4, 1, 'k', typ, 0}
		_, _, err := ReadTable(b)
		if !isCode(err, malformedCode) {
			t.Errorf("type %q: %v", typ, err)
		}
	}
}

func TestReadMethodTooShortForIDs(t *testing.T) {
	for n := range 4 {
		if _, err := ReadMethod([]byte{0, 60, 0, 40}[:n]); !isCode(err, malformedCode) {
			t.Errorf("%d-octet payload: %v", n, err)
		}
	}
}

// TestDecodeAllocationIsBoundedByInput decodes the worst ratio of decoded
// values to input octets this codec allows, voids in nested arrays, and
// checks that memory stays within a constant factor of the input.
func TestDecodeAllocationIsBoundedByInput(t *testing.T) {
	const n = 60_000
	voids := make([]byte, n)
	for i := range voids {
		voids[i] = 'V'
	}
	b := []byte{0, 0, 0, 0, 1, 'k', 'A'}
	b = append(b, appendU32(nil, n)...)
	b = append(b, voids...)
	b = patchLength(b, 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, _, err := ReadTable(b); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 24*uint64(len(b)) {
		t.Errorf("decoding %d octets allocated %d", len(b), got)
	}
}
