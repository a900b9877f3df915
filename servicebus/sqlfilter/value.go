package sqlfilter

import (
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// kind is the type of a value during evaluation. The names follow the .NET
// types the service evaluates with, because its error texts name them.
type kind uint8

const (
	kNull     kind = iota // unknown: a missing property, a nil value, NULL
	kBool                 // System.Boolean
	kInt                  // System.Int64 (every integer type is widened to it)
	kFloat                // System.Double
	kString               // System.String
	kTime                 // System.DateTime
	kDuration             // System.TimeSpan
	kUUID                 // System.Guid
	kOther                // any other Go value: only IS NULL and EXISTS apply
)

// value is one operand. It is a plain struct, not an interface, so that
// evaluating a filter does not allocate for every integer.
type value struct {
	k kind
	n int64 // kInt, kBool (0 or 1), kDuration (nanoseconds)
	f float64
	s string
	t time.Time
	u [16]byte
	o any // kOther
}

var null = value{}

func boolValue(b bool) value {
	if b {
		return value{k: kBool, n: 1}
	}
	return value{k: kBool}
}

func intValue(n int64) value      { return value{k: kInt, n: n} }
func floatValue(f float64) value  { return value{k: kFloat, f: f} }
func stringValue(s string) value  { return value{k: kString, s: s} }
func timeValue(t time.Time) value { return value{k: kTime, t: t} }
func durationValue(d time.Duration) value {
	return value{k: kDuration, n: int64(d)}
}

// fromGo normalizes a Go value: every integer type becomes int64 (a uint64
// above math.MaxInt64 becomes float64), float32 becomes float64, and any
// [16]byte-shaped array (uuid.UUID and the like) becomes a UUID.
func fromGo(v any) value {
	switch x := v.(type) {
	case nil:
		return null
	case value:
		return x
	case bool:
		return boolValue(x)
	case string:
		return stringValue(x)
	case int:
		return intValue(int64(x))
	case int8:
		return intValue(int64(x))
	case int16:
		return intValue(int64(x))
	case int32:
		return intValue(int64(x))
	case int64:
		return intValue(x)
	case uint:
		return fromUint(uint64(x))
	case uint8:
		return intValue(int64(x))
	case uint16:
		return intValue(int64(x))
	case uint32:
		return intValue(int64(x))
	case uint64:
		return fromUint(x)
	case float32:
		return floatValue(float64(x))
	case float64:
		return floatValue(x)
	case time.Time:
		return timeValue(x)
	case time.Duration:
		return durationValue(x)
	case [16]byte:
		return value{k: kUUID, u: x}
	}
	return fromReflect(v)
}

func fromUint(u uint64) value {
	if u > math.MaxInt64 {
		return floatValue(float64(u))
	}
	return intValue(int64(u))
}

// fromReflect handles named types (type Color string, uuid.UUID, ...).
func fromReflect(v any) value {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return boolValue(rv.Bool())
	case reflect.String:
		return stringValue(rv.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intValue(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fromUint(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return floatValue(rv.Float())
	case reflect.Array:
		if rv.Len() == 16 && rv.Type().Elem().Kind() == reflect.Uint8 {
			var u [16]byte
			reflect.Copy(reflect.ValueOf(&u).Elem(), rv)
			return value{k: kUUID, u: u}
		}
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		if rv.IsNil() {
			return null
		}
	}
	return value{k: kOther, o: v}
}

// toGo is the inverse of fromGo: nil, bool, int64, float64, string,
// time.Time, time.Duration, [16]byte, or the original opaque value.
func (v value) toGo() any {
	switch v.k {
	case kBool:
		return v.n != 0
	case kInt:
		return v.n
	case kFloat:
		return v.f
	case kString:
		return v.s
	case kTime:
		return v.t
	case kDuration:
		return time.Duration(v.n)
	case kUUID:
		return v.u
	case kOther:
		return v.o
	}
	return nil
}

// typeName is the .NET name of the value's type, as the service's runtime
// binder errors print it ("Operator '<' cannot be applied to operands of type
// 'string' and 'long'").
func (v value) typeName() string {
	switch v.k {
	case kNull:
		return "null"
	case kBool:
		return "bool"
	case kInt:
		return "long"
	case kFloat:
		return "double"
	case kString:
		return "string"
	case kTime:
		return "System.DateTime"
	case kDuration:
		return "System.TimeSpan"
	case kUUID:
		return "System.Guid"
	}
	return fmt.Sprintf("%T", v.o)
}

// text is the value as .NET's Convert.ToString with the invariant culture
// writes it; LIKE and string concatenation use it.
func (v value) text() string {
	switch v.k {
	case kBool:
		if v.n != 0 {
			return "True"
		}
		return "False"
	case kInt:
		return strconv.FormatInt(v.n, 10)
	case kFloat:
		return formatFloat(v.f)
	case kString:
		return v.s
	case kTime:
		return v.t.Format("01/02/2006 15:04:05")
	case kDuration:
		return formatTimeSpan(time.Duration(v.n))
	case kUUID:
		return formatUUID(v.u)
	case kOther:
		return fmt.Sprint(v.o)
	}
	return ""
}

// formatFloat writes a double the way .NET Core does: shortest round trip,
// "E+XX" exponents, and the names of the special values.
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "∞"
	case math.IsInf(f, -1):
		return "-∞"
	}
	s := strconv.FormatFloat(f, 'G', -1, 64)
	if i := strings.IndexByte(s, 'E'); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		sign := "+"
		if exp[0] == '-' || exp[0] == '+' {
			if exp[0] == '-' {
				sign = "-"
			}
			exp = exp[1:]
		}
		if len(exp) < 2 {
			exp = "0" + exp
		}
		s = mant + "E" + sign + exp
	}
	return s
}

// formatTimeSpan writes a duration as .NET's TimeSpan.ToString("c"):
// [-][d.]hh:mm:ss[.fffffff].
func formatTimeSpan(d time.Duration) string {
	var b strings.Builder
	u := uint64(d)
	if d < 0 {
		b.WriteByte('-')
		u = uint64(-d)
	}
	ticks := u / 100
	days := ticks / (24 * 3600 * 1e7)
	ticks -= days * 24 * 3600 * 1e7
	h := ticks / (3600 * 1e7)
	ticks -= h * 3600 * 1e7
	m := ticks / (60 * 1e7)
	ticks -= m * 60 * 1e7
	s := ticks / 1e7
	frac := ticks - s*1e7
	if days > 0 {
		fmt.Fprintf(&b, "%d.", days)
	}
	fmt.Fprintf(&b, "%02d:%02d:%02d", h, m, s)
	if frac > 0 {
		fmt.Fprintf(&b, ".%07d", frac)
	}
	return b.String()
}

// parseTimeSpan reads .NET's invariant TimeSpan forms: "d", "[-][d.]hh:mm",
// "[-][d.]hh:mm:ss[.fffffff]".
func parseTimeSpan(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var days int64
	if !strings.Contains(s, ":") {
		d, err := strconv.ParseInt(s, 10, 64)
		if err != nil || d > 10675199 {
			return 0, false
		}
		return signed(time.Duration(d)*24*time.Hour, neg), true
	}
	if i := strings.IndexByte(s, '.'); i >= 0 && i < strings.IndexByte(s, ':') {
		d, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || d > 10675199 {
			return 0, false
		}
		days, s = d, s[i+1:]
	}
	var frac time.Duration
	if i := strings.IndexByte(s, '.'); i >= 0 {
		f := s[i+1:]
		if f == "" || len(f) > 7 || strings.Trim(f, "0123456789") != "" {
			return 0, false
		}
		n, _ := strconv.ParseInt((f + "000000000")[:9], 10, 64)
		frac, s = time.Duration(n), s[:i]
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	limits := []int64{23, 59, 59}
	var hms [3]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n > limits[i] || len(p) > 2 {
			return 0, false
		}
		hms[i] = n
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(hms[0])*time.Hour +
		time.Duration(hms[1])*time.Minute + time.Duration(hms[2])*time.Second + frac
	return signed(d, neg), true
}

func signed(d time.Duration, neg bool) time.Duration {
	if neg {
		return -d
	}
	return d
}

// formatUUID writes a UUID in the lower-case 8-4-4-4-12 form, the byte
// order being the RFC 4122 (network) order that AMQP's uuid uses.
func formatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// parseUUID reads the forms .NET's Guid(string) accepts most often:
// 32 hex digits, optionally hyphenated 8-4-4-4-12, optionally in braces or
// parentheses.
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '{' && s[len(s)-1] == '}' || s[0] == '(' && s[len(s)-1] == ')') {
		s = s[1 : len(s)-1]
	}
	if len(s) == 36 {
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return u, false
		}
		s = s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	}
	if len(s) != 32 {
		return u, false
	}
	if _, err := hex.Decode(u[:], []byte(s)); err != nil {
		return u, false
	}
	return u, true
}
