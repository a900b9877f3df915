package query

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeRoundTrip(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"KeyOrderKept", `{"b":1,"a":2,"c":{"z":1,"y":2}}`, `{"b":1,"a":2,"c":{"z":1,"y":2}}`},
		{"Whitespace", " \t\n{ \"a\" : [ 1 , 2 ] , \"b\" : null }\r\n", `{"a":[1,2],"b":null}`},
		{"Literals", `[true,false,null]`, `[true,false,null]`},
		{"EmptyContainers", `[{},[],""]`, `[{},[],""]`},
		{"Integers", `[0,3,-17,1234567890123,9007199254740991,-9007199254740991]`, `[0,3,-17,1234567890123,9007199254740991,-9007199254740991]`},
		{"BigIntegersLosePrecision", `[9007199254740993,12345678901234567890]`, `[9007199254740992,12345678901234567000]`},
		{"Fractions", `[0.5,-2.25,1e3,1E-2,1.5e300,2.5e-5,0.1]`, `[0.5,-2.25,1000,0.01,1.5e+300,0.000025,0.1]`},
		{"NegativeZero", `[-0,-0.0,0e5]`, `[0,0,0]`},
		{"TinyAndHuge", `[5e-324,1.7976931348623157e308,1e21,1e-7]`, `[5e-324,1.7976931348623157e+308,1e+21,1e-7]`},
		{"Escapes", `"q\" b\\ s\/ \b\f\n\r\t \u0001 \u00e9 \ud83d\ude00"`, `"q\" b\\ s/ \b\f\n\r\t \u0001 é 😀"`},
		{"NoHTMLEscaping", `"<a href='x'>&</a>"`, `"<a href='x'>&</a>"`},
		{"LineSeparators", "\"\u2028\u2029\"", `"\u2028\u2029"`},
		{"LoneSurrogate", `"\ud800x"`, `"�x"`},
		{"InvalidUTF8", "\"a\xffb\"", `"a�b"`},
		{"DuplicateKeyKeepsFirstPlaceLastValue", `{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{"Unicode", `{"日本":"語"}`, `{"日本":"語"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := Decode([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, string(AppendJSON(nil, v))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
		`tru`, `nul`, `"abc`, `"\x"`, `"\u12"`, "\"a\x01\"", `1 2`, `{} x`, `[] []`, `NaN`, `1e400`,
		`'a'`, `[`, `]`, `{"a":}`,
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	} {
		if v, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) = %v, want an error", in, v)
		}
	}
}

func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	// Documents valid for encoding/json decode to the same values.
	for _, in := range []string{
		`{"id":"1","n":[1,2.5,-3e-2],"o":{"x":null,"y":[true,false]},"s":"\u00e9\n"}`,
		`[[[[]]],{"":{"":""}}]`,
		`123456789.125`,
	} {
		var std any
		if err := json.Unmarshal([]byte(in), &std); err != nil {
			t.Fatal(err)
		}
		v, err := Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(std, toStd(v)); diff != "" {
			t.Errorf("%s (-encoding/json +Decode):\n%s", in, diff)
		}
	}
}

// toStd converts a value to encoding/json's representation.
func toStd(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = toStd(x[i])
		}
		return out
	case *Object:
		out := map[string]any{}
		for i, k := range x.Keys {
			out[k] = toStd(x.Vals[i])
		}
		return out
	}
	return v
}

func TestAppendJSONUndefined(t *testing.T) {
	o := &Object{Keys: []string{"a", "u", "b"}, Vals: []any{1.0, Undefined, []any{Undefined, 2.0, Undefined}}}
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"OmittedFromObjectsAndArrays", o, `{"a":1,"b":[2]}`},
		{"TopLevelAppendsNothing", Undefined, ``},
		{"NonFiniteNumbersAreNull", []any{math.NaN(), math.Inf(1), math.Inf(-1)}, `[null,null,null]`},
		{"ControlCharacters", "\x00\x1f\x7f", `"\u0000\u001f` + "\x7f" + `"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, string(AppendJSON(nil, c.v))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestObject(t *testing.T) {
	o := &Object{}
	o.Set("b", 1.0)
	o.Set("a", 2.0)
	o.Set("b", 3.0)
	if diff := cmp.Diff([]string{"b", "a"}, o.Keys); diff != "" {
		t.Errorf("Set keeps the first place (-want +got):\n%s", diff)
	}
	if v, ok := o.Get("b"); !ok || v != 3.0 {
		t.Errorf("Get(b) = %v, %v; want 3, true", v, ok)
	}
	if _, ok := o.Get("c"); ok {
		t.Error("Get(c) found a missing key")
	}
	if !o.Delete("b") || o.Delete("b") {
		t.Error("Delete(b) should succeed once")
	}
	if diff := cmp.Diff(`{"a":2}`, string(AppendJSON(nil, o))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCompareTotalOrder(t *testing.T) {
	// Each value sorts strictly before the next.
	ordered := []string{
		`null`, `false`, `true`, `-1e300`, `-1`, `0`, `0.5`, `2`, `1e300`,
		`""`, `"A"`, `"B"`, `"a"`, `"ab"`, `"b"`, `"é"`, `"日"`,
		`[]`, `[null]`, `[1]`, `[1,2]`, `[2]`, `["a"]`,
		`{}`, `{"a":1}`, `{"a":1,"b":1}`, `{"a":2}`, `{"b":0}`,
	}
	vals := []any{Undefined}
	for _, s := range ordered {
		v, err := Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	for i := range vals {
		for j := range vals {
			want := cmpInt(i, j)
			if got := Compare(vals[i], vals[j]); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", AppendJSON(nil, vals[i]), AppendJSON(nil, vals[j]), got, want)
			}
		}
	}
}

func TestEqual(t *testing.T) {
	dec := func(s string) any {
		v, err := Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{dec(`{"a":1,"b":[1,{"c":2}]}`), dec(`{"b":[1,{"c":2}],"a":1}`), true},
		{dec(`[1,2]`), dec(`[2,1]`), false},
		{dec(`{"a":1}`), dec(`{"a":1,"b":2}`), false},
		{1.0, "1", false},
		{nil, nil, true},
		{nil, Undefined, false},
		{Undefined, Undefined, true},
		{0.0, math.Copysign(0, -1), true},
		{math.NaN(), math.NaN(), false},
		{&Object{Keys: []string{"a", "u"}, Vals: []any{1.0, Undefined}}, dec(`{"a":1}`), true},
	} {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", AppendJSON(nil, c.a), AppendJSON(nil, c.b), got, c.want)
		}
		// appendKey, which DISTINCT and GROUP BY use, agrees with Equal.
		if c.want != (string(appendKey(nil, c.a)) == string(appendKey(nil, c.b))) && !isNaN(c.a) {
			t.Errorf("appendKey disagrees with Equal for %s and %s", AppendJSON(nil, c.a), AppendJSON(nil, c.b))
		}
	}
}

// isNaN reports whether v is a NaN number.
func isNaN(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

func BenchmarkDecode(b *testing.B) {
	doc := []byte(benchDoc)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeEncodingJSON(b *testing.B) {
	// For comparison: encoding/json into map[string]any.
	doc := []byte(benchDoc)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	v, err := Decode([]byte(benchDoc))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], v)
	}
}

// benchDoc is a typical stored document of about 1 KB.
const benchDoc = `{
  "id": "5d2f3a0e-8b1c-4f6e-9a7d-2c4b6e8f0a1b",
  "pk": "tenant-0042",
  "type": "order",
  "status": "shipped",
  "customer": {"id": "c-1042", "name": "Ada Lovelace", "email": "ada@example.com", "vip": true, "since": "2019-04-01T10:00:00.0000000Z"},
  "items": [
    {"sku": "pen-blue", "qty": 10, "price": 1.5, "tags": ["office", "blue"]},
    {"sku": "ink-black", "qty": 2, "price": 12.25, "tags": ["refill"]},
    {"sku": "pad-a4", "qty": 4, "price": 3, "tags": []}
  ],
  "totals": {"net": 51.5, "tax": 10.3, "gross": 61.8, "currency": "EUR"},
  "shipping": {"method": "express", "address": {"street": "12 Analytical Way", "city": "London", "zip": "N1 9GU", "country": "GB"}, "eta": null},
  "notes": "Leave at the door; ring twice. \u00e9t\u00e9",
  "history": [
    {"at": "2024-05-01T08:00:00.0000000Z", "event": "created"},
    {"at": "2024-05-01T09:30:00.0000000Z", "event": "paid"},
    {"at": "2024-05-02T14:12:00.0000000Z", "event": "shipped"}
  ],
  "_rid": "Aa1bAA==", "_etag": "\"00000000-0000-0000-0000-000000000000\"", "_ts": 1714665120
}`
