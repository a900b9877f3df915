package amqp

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpOpts compares decoded values: NaNs are equal and times compare by
// instant.
var cmpOpts = cmp.Options{cmpopts.EquateNaNs()}

func hexBytes(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case int:
			b = append(b, byte(p))
		case byte:
			b = append(b, p)
		case string:
			b = append(b, p...)
		case []byte:
			b = append(b, p...)
		}
	}
	return b
}

// valueCase is a value and its expected encoding.
type valueCase struct {
	name string
	v    any
	enc  []byte
}

// valueCases covers every primitive type and encoding width (§1.6).
func valueCases() []valueCase {
	ts := time.UnixMilli(1700000000123).UTC()
	u := UUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}
	long := strings.Repeat("x", 300)
	return []valueCase{
		{"Null", nil, hexBytes(0x40)},
		{"True", true, hexBytes(0x41)},
		{"False", false, hexBytes(0x42)},
		{"Ubyte", uint8(200), hexBytes(0x50, 200)},
		{"Ushort", uint16(0x1234), hexBytes(0x60, 0x12, 0x34)},
		{"Uint0", uint32(0), hexBytes(0x43)},
		{"SmallUint", uint32(255), hexBytes(0x52, 255)},
		{"Uint", uint32(0x01020304), hexBytes(0x70, 1, 2, 3, 4)},
		{"Ulong0", uint64(0), hexBytes(0x44)},
		{"SmallUlong", uint64(7), hexBytes(0x53, 7)},
		{"Ulong", uint64(math.MaxUint64), hexBytes(0x80, 255, 255, 255, 255, 255, 255, 255, 255)},
		{"Byte", int8(-2), hexBytes(0x51, 0xfe)},
		{"Short", int16(-2), hexBytes(0x61, 0xff, 0xfe)},
		{"SmallInt", int32(-128), hexBytes(0x54, 0x80)},
		{"Int", int32(128), hexBytes(0x71, 0, 0, 0, 128)},
		{"SmallLong", int64(127), hexBytes(0x55, 127)},
		{"Long", int64(-129), hexBytes(0x81, 255, 255, 255, 255, 255, 255, 255, 0x7f)},
		{"Float", float32(1.5), hexBytes(0x72, 0x3f, 0xc0, 0, 0)},
		{"Double", float64(-2), hexBytes(0x82, 0xc0, 0, 0, 0, 0, 0, 0, 0)},
		{"DoubleNaN", math.NaN(), hexBytes(0x82, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1)},
		{"Decimal32", Decimal32{1, 2, 3, 4}, hexBytes(0x74, 1, 2, 3, 4)},
		{"Decimal64", Decimal64{1, 2, 3, 4, 5, 6, 7, 8}, hexBytes(0x84, 1, 2, 3, 4, 5, 6, 7, 8)},
		{"Decimal128", Decimal128{15: 9}, hexBytes(0x94, make([]byte, 15), 9)},
		{"Char", Char('€'), hexBytes(0x73, 0, 0, 0x20, 0xac)},
		{"Timestamp", ts, hexBytes(0x83, 0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x7b)},
		{"TimestampBeforeEpoch", time.UnixMilli(-1).UTC(), hexBytes(0x83, 255, 255, 255, 255, 255, 255, 255, 255)},
		{"UUID", u, hexBytes(0x98, u[:])},
		{"Vbin8", []byte{1, 2}, hexBytes(0xa0, 2, 1, 2)},
		{"Vbin8Empty", []byte{}, hexBytes(0xa0, 0)},
		{"Vbin32", bytes.Repeat([]byte{7}, 256), hexBytes(0xb0, 0, 0, 1, 0, bytes.Repeat([]byte{7}, 256))},
		{"Str8", "héllo", hexBytes(0xa1, 6, "héllo")},
		{"Str32", long, hexBytes(0xb1, 0, 0, 1, 44, long)},
		{"Sym8", Symbol("amqp:accepted:list"), hexBytes(0xa3, 18, "amqp:accepted:list")},
		{"Sym32", Symbol(long), hexBytes(0xb3, 0, 0, 1, 44, long)},
		{"List0", []any{}, hexBytes(0x45)},
		{"List8", []any{uint32(1), "a", nil}, hexBytes(0xc0, 7, 3, 0x52, 1, 0xa1, 1, "a", 0x40)},
		{"List32", []any{long}, hexBytes(0xd0, 0, 0, 1, 53, 0, 0, 0, 1, 0xb1, 0, 0, 1, 44, long)},
		{"ListNested", []any{[]any{[]any{}}}, hexBytes(0xc0, 5, 1, 0xc0, 2, 1, 0x45)},
		{"Map8", Map{{Symbol("k"), int64(1)}, {"s", true}}, hexBytes(0xc1, 10, 4, 0xa3, 1, "k", 0x55, 1, 0xa1, 1, "s", 0x41)},
		{"Map8Empty", Map{}, hexBytes(0xc1, 1, 0)},
		{"Map32", Map{{"k", long}}, hexBytes(0xd1, 0, 0, 1, 56, 0, 0, 0, 2, 0xa1, 1, "k", 0xb1, 0, 0, 1, 44, long)},
		{"MapAnyKeys", Map{{uint64(1), nil}, {[]byte{1}, []any{}}}, hexBytes(0xc1, 8, 4, 0x53, 1, 0x40, 0xa0, 1, 1, 0x45)},
		{"Described", &Described{Descriptor: uint64(0x468C00000004), Value: "1=1"},
			hexBytes(0x00, 0x80, 0, 0, 0x46, 0x8c, 0, 0, 0, 4, 0xa1, 3, "1=1")},
		{"DescribedSymbol", &Described{Descriptor: Symbol("apache.org:selector-filter:string"), Value: "a = 1"},
			hexBytes(0x00, 0xa3, 33, "apache.org:selector-filter:string", 0xa1, 5, "a = 1")},
		{"ArrayBool", []bool{true, false}, hexBytes(0xe0, 4, 2, 0x56, 1, 0)},
		{"ArrayUshort", []uint16{1}, hexBytes(0xe0, 4, 1, 0x60, 0, 1)},
		{"ArrayUint", []uint32{1, 256}, hexBytes(0xe0, 10, 2, 0x70, 0, 0, 0, 1, 0, 0, 1, 0)},
		{"ArraySmallUint", []uint32{1, 255}, hexBytes(0xe0, 4, 2, 0x52, 1, 255)},
		{"ArrayUlong", []uint64{256}, hexBytes(0xe0, 10, 1, 0x80, 0, 0, 0, 0, 0, 0, 1, 0)},
		{"ArraySmallUlong", []uint64{0, 1}, hexBytes(0xe0, 4, 2, 0x53, 0, 1)},
		{"ArrayByte", []int8{-1}, hexBytes(0xe0, 3, 1, 0x51, 0xff)},
		{"ArrayShort", []int16{-1}, hexBytes(0xe0, 4, 1, 0x61, 0xff, 0xff)},
		{"ArrayInt", []int32{-129}, hexBytes(0xe0, 6, 1, 0x71, 0xff, 0xff, 0xff, 0x7f)},
		{"ArraySmallInt", []int32{-1}, hexBytes(0xe0, 3, 1, 0x54, 0xff)},
		{"ArrayLong", []int64{128}, hexBytes(0xe0, 10, 1, 0x81, 0, 0, 0, 0, 0, 0, 0, 128)},
		{"ArraySmallLong", []int64{5}, hexBytes(0xe0, 3, 1, 0x55, 5)},
		{"ArrayUintEmpty", []uint32{}, hexBytes(0xe0, 2, 0, 0x52)},
		{"ArrayFloat", []float32{1.5}, hexBytes(0xe0, 6, 1, 0x72, 0x3f, 0xc0, 0, 0)},
		{"ArrayDouble", []float64{-2}, hexBytes(0xe0, 10, 1, 0x82, 0xc0, 0, 0, 0, 0, 0, 0, 0)},
		{"ArrayChar", []Char{'a'}, hexBytes(0xe0, 6, 1, 0x73, 0, 0, 0, "a")},
		{"ArrayTimestamp", []time.Time{ts}, hexBytes(0xe0, 10, 1, 0x83, 0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x7b)},
		{"ArrayUUID", []UUID{u}, hexBytes(0xe0, 18, 1, 0x98, u[:])},
		{"ArrayBinary", [][]byte{{1}, {}}, hexBytes(0xe0, 5, 2, 0xa0, 1, 1, 0)},
		{"ArrayString", []string{"a", "bc"}, hexBytes(0xe0, 7, 2, 0xa1, 1, "a", 2, "bc")},
		{"ArrayString32", []string{long}, hexBytes(0xf0, 0, 0, 1, 53, 0, 0, 0, 1, 0xb1, 0, 0, 1, 44, long)},
		{"ArraySymbol", []Symbol{"PLAIN", "ANONYMOUS"}, hexBytes(0xe0, 18, 2, 0xa3, 5, "PLAIN", 9, "ANONYMOUS")},
		{"ArrayEmpty", []Symbol{}, hexBytes(0xe0, 2, 0, 0xa3)},
		{"ArrayUbyte", &Array{Constructor: []byte{0x50}, Items: []any{uint8(1), uint8(2)}}, hexBytes(0xe0, 4, 2, 0x50, 1, 2)},
		{"ArrayList", &Array{Constructor: []byte{0xc0}, Items: []any{[]any{uint32(1)}, []any{}}},
			hexBytes(0xe0, 8, 2, 0xc0, 3, 1, 0x52, 1, 1, 0)},
		{"ArrayMap", &Array{Constructor: []byte{0xd1}, Items: []any{Map{{"a", nil}}}},
			hexBytes(0xe0, 14, 1, 0xd1, 0, 0, 0, 8, 0, 0, 0, 2, 0xa1, 1, "a", 0x40)},
		{"ArrayDescribed", &Array{Constructor: []byte{0x00, 0x53, 0x24, 0xc0}, Items: []any{[]any{}, []any{}}},
			hexBytes(0xe0, 9, 2, 0x00, 0x53, 0x24, 0xc0, 1, 0, 1, 0)},
		{"ArrayOfArrays", &Array{Constructor: []byte{0xe0}, Items: []any{[]int32{1000}, []string{}}},
			hexBytes(0xe0, 12, 2, 0xe0, 6, 1, 0x71, 0, 0, 3, 0xe8, 2, 0, 0xa1)},
		{"Error", &Error{Condition: "amqp:not-found", Description: "no"},
			hexBytes(0x00, 0x53, 0x1d, 0xc0, 22, 3, 0xa3, 14, "amqp:not-found", 0xa1, 2, "no", 0x40)},
		{"Accepted", &Accepted{}, hexBytes(0x00, 0x53, 0x24, 0x45)},
		{"Modified", &Modified{DeliveryFailed: true, MessageAnnotations: Map{}},
			hexBytes(0x00, 0x53, 0x27, 0xc0, 6, 3, 0x41, 0x40, 0xc1, 1, 0)},
		{"Target", &Target{Address: "q"}, hexBytes(0x00, 0x53, 0x29, 0xc0, 4, 1, 0xa1, 1, "q")},
	}
}

func TestValueRoundTrip(t *testing.T) {
	for _, tt := range valueCases() {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendValue([]byte{0xee}, tt.v)
			if err != nil {
				t.Fatalf("AppendValue: %v", err)
			}
			if got[0] != 0xee {
				t.Fatalf("AppendValue overwrote dst")
			}
			got = got[1:]
			if tt.enc != nil {
				if diff := cmp.Diff(tt.enc, got); diff != "" {
					t.Errorf("AppendValue encoding (-want +got):\n%s", diff)
				}
			}
			v, n, err := ReadValue(append(got, 0xff))
			if err != nil {
				t.Fatalf("ReadValue: %v", err)
			}
			if n != len(got) {
				t.Errorf("ReadValue took %d bytes, want %d", n, len(got))
			}
			if diff := cmp.Diff(tt.v, v, cmpOpts); diff != "" {
				t.Errorf("ReadValue (-want +got):\n%s", diff)
			}
			for i := range len(got) {
				if _, _, err := ReadValue(got[:i]); err == nil {
					t.Errorf("ReadValue of the first %d of %d bytes succeeded", i, len(got))
				}
			}
		})
	}
}

// TestValueDecodeOnly covers encodings the encoder never picks but decoders
// must accept (§1.6: every encoding of a type is valid).
func TestValueDecodeOnly(t *testing.T) {
	tests := []struct {
		name string
		enc  []byte
		want any
	}{
		{"BoolByte", hexBytes(0x56, 1), true},
		{"BoolByteFalse", hexBytes(0x56, 0), false},
		{"WideUint", hexBytes(0x70, 0, 0, 0, 5), uint32(5)},
		{"WideUlong", hexBytes(0x80, 0, 0, 0, 0, 0, 0, 0, 0), uint64(0)},
		{"WideInt", hexBytes(0x71, 0, 0, 0, 1), int32(1)},
		{"WideLong", hexBytes(0x81, 0, 0, 0, 0, 0, 0, 0, 1), int64(1)},
		{"Vbin32", hexBytes(0xb0, 0, 0, 0, 1, 9), []byte{9}},
		{"Str32", hexBytes(0xb1, 0, 0, 0, 1, "a"), "a"},
		{"Sym32", hexBytes(0xb3, 0, 0, 0, 1, "a"), Symbol("a")},
		{"List8Empty", hexBytes(0xc0, 1, 0), []any{}},
		{"List32", hexBytes(0xd0, 0, 0, 0, 5, 0, 0, 0, 1, 0x40), []any{nil}},
		{"Map32", hexBytes(0xd1, 0, 0, 0, 4, 0, 0, 0, 0), Map{}},
		{"Array32", hexBytes(0xf0, 0, 0, 0, 6, 0, 0, 0, 1, 0x52, 9), []uint32{9}},
		{"ArraySmallUint", hexBytes(0xe0, 4, 2, 0x52, 1, 2), []uint32{1, 2}},
		{"ArraySmallLong", hexBytes(0xe0, 3, 1, 0x55, 0xff), []int64{-1}},
		{"ArrayBoolConst", hexBytes(0xe0, 2, 0, 0x41), []bool{}},
		{"SymbolicDescriptorError", hexBytes(0x00, 0xa3, 15, "amqp:error:list", 0xc0, 3, 1, 0xa3, 0), &Error{Condition: ""}},
		{"DescribedUnknownSymbol", hexBytes(0x00, 0xa3, 1, "x", 0x40), &Described{Descriptor: Symbol("x")}},
		{"Received", hexBytes(0x00, 0x53, 0x23, 0xc0, 3, 2, 0x43, 0x44), &Received{}},
		{"ModifiedTrailingUnknownField", hexBytes(0x00, 0x53, 0x27, 0xc0, 6, 4, 0x40, 0x41, 0x40, 0x52, 1), &Modified{UndeliverableHere: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, n, err := ReadValue(tt.enc)
			if err != nil {
				t.Fatalf("ReadValue: %v", err)
			}
			if n != len(tt.enc) {
				t.Errorf("ReadValue took %d bytes, want %d", n, len(tt.enc))
			}
			if diff := cmp.Diff(tt.want, v); diff != "" {
				t.Errorf("ReadValue (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValueDecodeErrors(t *testing.T) {
	deep := func(n int) []byte {
		var b []byte
		for range n {
			b = append(b, 0xc0)
		}
		return b
	}
	// nested builds n list8 values nested in each other, the innermost
	// holding one null.
	nested := func(n int) []byte {
		b := []byte{0x40}
		for range n {
			b = append([]byte{0xc0, byte(len(b) + 1), 1}, b...)
		}
		return b
	}
	tests := []struct {
		name string
		enc  []byte
	}{
		{"Empty", nil},
		{"UnknownCode", hexBytes(0x01)},
		{"BadBoolByte", hexBytes(0x56, 2)},
		{"List32HugeSize", hexBytes(0xd0, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 1, 0x40)},
		{"List32HugeCount", hexBytes(0xd0, 0, 0, 0, 5, 0x80, 0, 0, 0, 0x40)},
		{"Map32HugeCount", hexBytes(0xd1, 0, 0, 0, 5, 0x80, 0, 0, 0, 0x40)},
		{"MapOddCount", hexBytes(0xc1, 2, 1, 0x40)},
		{"Array32HugeCountZeroWidth", hexBytes(0xf0, 0, 0, 0, 5, 0x80, 0, 0, 0, 0x40)},
		{"Array32HugeCountUint0", hexBytes(0xf0, 0, 0, 0, 5, 0x80, 0, 0, 0, 0x43)},
		{"Array32HugeCountUlong", hexBytes(0xf0, 0, 0, 0, 13, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0)},
		{"Array8CountTooBig", hexBytes(0xe0, 3, 3, 0x52, 1)},
		{"ListLeftoverBytes", hexBytes(0xc0, 3, 1, 0x40, 0x40)},
		{"ArrayLeftoverBytes", hexBytes(0xe0, 4, 1, 0x52, 1, 2)},
		{"ArrayNestedDescriptor", hexBytes(0xe0, 6, 1, 0x00, 0x53, 1, 0x00, 0x40)},
		{"DescriptorNotUlongOrSymbol", hexBytes(0x00, 0xa1, 1, "x", 0x40)},
		{"DescribedDescribed", hexBytes(0x00, 0x53, 1, 0x00, 0x53, 2, 0x40)},
		{"ErrorWithoutCondition", hexBytes(0x00, 0x53, 0x1d, 0x45)},
		{"ErrorConditionWrongType", hexBytes(0x00, 0x53, 0x1d, 0xc0, 3, 1, 0xa1, 0)},
		{"ReceivedNotList", hexBytes(0x00, 0x53, 0x23, 0x40)},
		{"TooDeep", nested(MaxDepth + 1)},
		{"DeepTruncated", deep(10000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadValue(tt.enc)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("ReadValue error = %v, want a *DecodeError", err)
			}
		})
	}
	t.Run("MaxDepthDecodes", func(t *testing.T) {
		if _, _, err := ReadValue(nested(MaxDepth)); err != nil {
			t.Fatalf("ReadValue of %d nested lists: %v", MaxDepth, err)
		}
	})
}

// TestValueHugeCountsDoNotAllocate checks that a count far beyond the input
// fails before anything proportional to it is allocated.
func TestValueHugeCountsDoNotAllocate(t *testing.T) {
	inputs := [][]byte{
		hexBytes(0xd0, 0, 0, 0, 5, 0x7f, 0xff, 0xff, 0xff, 0x40),
		hexBytes(0xd1, 0, 0, 0, 5, 0x7f, 0xff, 0xff, 0xff, 0x40),
		hexBytes(0xf0, 0, 0, 0, 5, 0x7f, 0xff, 0xff, 0xff, 0x40),
		hexBytes(0xf0, 0, 0, 0, 5, 0x7f, 0xff, 0xff, 0xff, 0x41),
		hexBytes(0xb0, 0x7f, 0xff, 0xff, 0xff, 0x40),
	}
	for _, in := range inputs {
		n := MustAllocatedBytes(t, func() {
			if _, _, err := ReadValue(in); err == nil {
				t.Fatalf("ReadValue(% x) succeeded", in)
			}
		})
		if n > 1024 {
			t.Errorf("ReadValue(% x) allocated %d bytes", in, n)
		}
	}
}

// MustAllocatedBytes returns the bytes f allocates on the heap, averaged
// over a few runs.
func MustAllocatedBytes(tb testing.TB, f func()) uint64 {
	tb.Helper()
	const runs = 10
	f() // warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

func TestAppendValueErrors(t *testing.T) {
	self := []any{nil}
	self[0] = self
	tests := []struct {
		name string
		v    any
	}{
		{"UnsupportedType", struct{}{}},
		{"UnsupportedInList", []any{complex(1, 2)}},
		{"UnsupportedInMap", Map{{"k", map[string]any{}}}},
		{"BadDescriptor", &Described{Descriptor: "string", Value: nil}},
		{"DescribedDescribed", &Described{Descriptor: uint64(1), Value: &Described{Descriptor: uint64(2)}}},
		{"DescribedComposite", &Described{Descriptor: uint64(1), Value: &Accepted{}}},
		{"SelfReferentialList", self},
		{"ArrayItemWrongType", &Array{Constructor: []byte{0x50}, Items: []any{"x"}}},
		{"ArrayBadConstructor", &Array{Constructor: []byte{0x00, 0x53}, Items: nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendValue([]byte{1}, tt.v)
			if err == nil {
				t.Fatalf("AppendValue(%#v) succeeded", tt.v)
			}
			if !bytes.Equal(got, []byte{1}) && len(got) > 1 {
				// Partial output is allowed, but dst's own bytes must stay.
				if got[0] != 1 {
					t.Errorf("AppendValue clobbered dst")
				}
			}
		})
	}
}

func TestIntAndUintEncodeAsLongAndUlong(t *testing.T) {
	for v, want := range map[any]any{int(-300): int64(-300), uint(300): uint64(300)} {
		b, err := AppendValue(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadValue(b)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("AppendValue(%T %v) decoded as %T %v, want %T %v", v, v, got, got, want, want)
		}
	}
}
