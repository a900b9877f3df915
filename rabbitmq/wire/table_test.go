package wire

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// everyFieldType is a table holding a value of every field type, at every
// integer width and extreme, with nested tables and arrays.
func everyFieldType() map[string]any {
	return map[string]any{
		"bool-true":  true,
		"bool-false": false,
		"int8":       int8(math.MinInt8),
		"uint8":      uint8(math.MaxUint8),
		"int16":      int16(math.MinInt16),
		"uint16":     uint16(math.MaxUint16),
		"int32":      int32(math.MinInt32),
		"uint32":     uint32(math.MaxUint32),
		"int64":      int64(math.MinInt64),
		"int64-max":  int64(math.MaxInt64),
		"float32":    float32(-1.5),
		"float64":    math.Pi,
		"decimal":    Decimal{Scale: 2, Value: -12345},
		"string":     "héllo\x00world",
		"empty":      "",
		"bytes":      []byte{0, 1, 0xFE, 0xFF},
		"timestamp":  time.Date(2024, 2, 29, 12, 34, 56, 0, time.UTC),
		"epoch":      time.Unix(0, 0).UTC(),
		"void":       nil,
		"table": map[string]any{
			"inner": map[string]any{"deep": "yes", "n": int16(-2)},
			"x":     uint16(1),
		},
		"array": []any{int32(1), "two", []any{true, nil}, map[string]any{"k": float64(3)}, []byte("x"),
			Decimal{Scale: 0, Value: 7}, time.Unix(1700000000, 0).UTC(), int8(-1), uint8(1), int16(2), uint16(3), uint32(4), int64(5), float32(6)},
	}
}

func TestTableRoundTripEveryType(t *testing.T) {
	want := everyFieldType()
	b := AppendTable([]byte("prefix"), want)
	got, rest, err := ReadTable(append(b[len("prefix"):], "tail"...))
	if err != nil {
		t.Fatal(err)
	}
	if string(rest) != "tail" {
		t.Errorf("rest %q, want %q", rest, "tail")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if err := CheckTable(want); err != nil {
		t.Errorf("CheckTable: %v", err)
	}
}

func TestTableEncodingsOfWiderGoTypes(t *testing.T) {
	in := map[string]any{
		"int":      int(-3),
		"uint":     uint(4),
		"uint64":   uint64(5),
		"uint64-2": uint64(math.MaxUint64), // wraps negative: 'l' is signed
		"strings":  []string{"a", "b"},
		"tables":   []map[string]any{{"a": int32(1)}, nil},
		"ordered":  OrderedTable{{"z", int32(1)}, {"a", "x"}},
		"ordereds": []OrderedTable{{{"count", int64(1)}, {"reason", "expired"}}},
		"time-ns":  time.Date(2024, 1, 1, 0, 0, 0, 999, time.FixedZone("X", 3600)),
	}
	want := map[string]any{
		"int":      int64(-3),
		"uint":     int64(4),
		"uint64":   int64(5),
		"uint64-2": int64(-1),
		"strings":  []any{"a", "b"},
		"tables":   []any{map[string]any{"a": int32(1)}, map[string]any(nil)},
		"ordered":  map[string]any{"z": int32(1), "a": "x"},
		"ordereds": []any{map[string]any{"count": int64(1), "reason": "expired"}},
		"time-ns":  time.Date(2023, 12, 31, 23, 0, 0, 0, time.UTC),
	}
	got, _, err := ReadTable(AppendTable(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOrderedTableKeepsItsOrder(t *testing.T) {
	b := AppendTable(nil, map[string]any{"x-death": []any{OrderedTable{{"queue", "q"}, {"count", int64(2)}, {"exchange", ""}}}})
	i, j, k := bytes.Index(b, []byte("queue")), bytes.Index(b, []byte("count")), bytes.Index(b, []byte("exchange"))
	if !(i < j && j < k) {
		t.Errorf("ordered fields at %d, %d, %d, want increasing: % x", i, j, k, b)
	}
}

func TestReadOrderedTableKeepsTheWireOrder(t *testing.T) {
	in := OrderedTable{{"z", int32(1)}, {"a", []any{OrderedTable{{"queue", "q"}, {"count", int64(2)}}}},
		{"m", OrderedTable{{"y", "1"}, {"b", OrderedTable{}}}}}
	b := appendOrderedTable(nil, in, 1)
	got, rest, err := ReadOrderedTable(append(b, 0xAA))
	if err != nil || !bytes.Equal(rest, []byte{0xAA}) {
		t.Fatalf("ReadOrderedTable: %v, rest % x", err, rest)
	}
	want := OrderedTable{{"z", int32(1)}, {"a", []any{OrderedTable{{"queue", "q"}, {"count", int64(2)}}}},
		{"m", OrderedTable{{"y", "1"}, {"b", OrderedTable(nil)}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if again := appendOrderedTable(nil, got, 1); !bytes.Equal(again, b) {
		t.Errorf("re-encoded differs:\n% x\n% x", again, b)
	}
}

func TestDecodePropertiesOrderedKeepsNestedOrder(t *testing.T) {
	entry := OrderedTable{{"count", int64(1)}, {"reason", "expired"}, {"queue", "q"}}
	p := Properties{Headers: map[string]any{"x-death": []any{entry}, "plain": "v"}}
	got, err := DecodePropertiesOrdered(p.Append(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"x-death": []any{entry}, "plain": "v"}
	if diff := cmp.Diff(want, got.Headers); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	// DecodeProperties still gives maps.
	plain, err := DecodeProperties(p.Append(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Headers["x-death"].([]any)[0].(map[string]any); !ok {
		t.Errorf("DecodeProperties gave %T for a nested table, want a map", plain.Headers["x-death"].([]any)[0])
	}
}

func TestTableKeysAreSorted(t *testing.T) {
	t1 := map[string]any{}
	for _, k := range strings.Fields("m a z b y c x d w e v f u g t h s i r j q k p l o n") {
		t1[k] = k
	}
	first := AppendTable(nil, t1)
	for range 20 {
		if b := AppendTable(nil, t1); !bytes.Equal(b, first) {
			t.Fatal("two encodings of one table differ")
		}
	}
	if got := string(first[5:6]) + string(first[5+8:5+9]); got != "ab" {
		t.Errorf("first keys %q, want a then b", got)
	}
}

func TestTableEmptyAndNil(t *testing.T) {
	for _, in := range []map[string]any{nil, {}} {
		b := AppendTable(nil, in)
		if !bytes.Equal(b, []byte{0, 0, 0, 0}) {
			t.Errorf("AppendTable(%#v) = % x", in, b)
		}
		got, rest, err := ReadTable(b)
		if err != nil || got != nil || len(rest) != 0 {
			t.Errorf("ReadTable(empty) = %#v, %q, %v; want nil", got, rest, err)
		}
	}
}

func TestTableReadsCapitalL(t *testing.T) {
	// RabbitMQ reads 'L' as a signed 64-bit integer, like 'l'.
	b := []byte{0, 0, 0, 11, 1, 'n', 'L', 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE}
	got, _, err := ReadTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"n": int64(-2)}, got); diff != "" {
		t.Error(diff)
	}
}

func TestTableUnsupportedTypesAreVoid(t *testing.T) {
	type custom struct{}
	in := map[string]any{"chan": make(chan int), "struct": custom{}, "ptr": new(int), "ok": "x"}
	got, _, err := ReadTable(AppendTable(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"chan": nil, "struct": nil, "ptr": nil, "ok": "x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	err = CheckTable(map[string]any{"a": map[string]any{"b": []any{1, custom{}}}})
	if err == nil || !strings.Contains(err.Error(), `"a.b[1]"`) || !strings.Contains(err.Error(), "wire.custom") {
		t.Errorf("CheckTable: %v", err)
	}
	if err := CheckTable(map[string]any{strings.Repeat("k", 256): 1}); err == nil {
		t.Error("CheckTable accepted a 256-octet name")
	}
}

// nest returns a table nested depth levels deep, the outermost included.
func nest(depth int) map[string]any {
	t := map[string]any{"leaf": true}
	for range depth - 1 {
		t = map[string]any{"t": t}
	}
	return t
}

func TestTableDepthLimit(t *testing.T) {
	t.Run("EncodeAndDecode100Levels", func(t *testing.T) {
		in := nest(maxDepth)
		if err := CheckTable(in); err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadTable(AppendTable(nil, in))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(in, got); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("EncodeVoidsLevel101", func(t *testing.T) {
		in := nest(maxDepth + 1)
		if err := CheckTable(in); err == nil {
			t.Error("CheckTable accepted 101 levels")
		}
		got, _, err := ReadTable(AppendTable(nil, in))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"t": nil} // level 100 holds level 101 as void
		for range maxDepth - 1 {
			want = map[string]any{"t": want}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("DecodeRejectsLevel101", func(t *testing.T) {
		// 101 nested arrays, hand-built: the encoder would not write them.
		b := []byte{}
		for range maxDepth + 1 {
			inner := b
			b = append([]byte{'A'}, appendU32(nil, uint32(len(inner)))...)
			b = append(b, inner...)
		}
		// b is an 'A' value nested 101 deep; put it in a table (level 1),
		// which makes 102 levels, then strip one array level: 101.
		b = b[5:]
		table := appendU32(nil, uint32(2+len(b)))
		table = append(table, 1, 'a')
		table = append(table, b...)
		_, _, err := ReadTable(table)
		if !isCode(err, malformedCode) || !strings.Contains(err.Error(), "deeper than 100") {
			t.Errorf("ReadTable(101 levels) = %v", err)
		}
		// One level less is fine.
		b = b[5:]
		table = appendU32(nil, uint32(2+len(b)))
		table = append(table, 1, 'a')
		table = append(table, b...)
		if _, _, err := ReadTable(table); err != nil {
			t.Errorf("ReadTable(100 levels) = %v", err)
		}
	})
}

// isCode reports whether err is an *Error with the given code.
func isCode(err error, code uint16) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

func TestTableFloatsKeepTheirBits(t *testing.T) {
	nan32 := math.Float32frombits(0x7FC00001)
	in := map[string]any{"nan": math.NaN(), "nan32": nan32, "negzero": math.Copysign(0, -1), "inf": math.Inf(-1)}
	b := AppendTable(nil, in)
	got, _, err := ReadTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if again := AppendTable(nil, got); !bytes.Equal(again, b) {
		t.Errorf("re-encoding changed the octets:\n% x\n% x", b, again)
	}
	if diff := cmp.Diff(in, got, cmpopts.EquateNaNs()); diff != "" {
		t.Error(diff)
	}
}
