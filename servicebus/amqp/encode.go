package amqp

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// appender is a value that encodes itself: the composite types of this
// package. A nil pointer encodes as null.
type appender interface {
	AppendTo(dst []byte) ([]byte, error)
}

// AppendValue appends the AMQP encoding (§1.6) of v to dst, choosing the
// smallest encoding of its type. It accepts the Go types [ReadValue] produces,
// plus int (as long), uint (as ulong), [Described] and the composite types of
// this package; any other type is an error, as is nesting deeper than
// [MaxDepth].
func AppendValue(dst []byte, v any) ([]byte, error) {
	return appendValue(dst, v, 0)
}

func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, codeNull), nil
	case bool:
		return appendBool(dst, v), nil
	case uint8:
		return append(dst, codeUbyte, v), nil
	case uint16:
		return binary.BigEndian.AppendUint16(append(dst, codeUshort), v), nil
	case uint32:
		return appendUint(dst, v), nil
	case uint64:
		return appendUlong(dst, v), nil
	case uint:
		return appendUlong(dst, uint64(v)), nil
	case int8:
		return append(dst, codeByte, byte(v)), nil
	case int16:
		return binary.BigEndian.AppendUint16(append(dst, codeShort), uint16(v)), nil
	case int32:
		return appendInt(dst, v), nil
	case int64:
		return appendLong(dst, v), nil
	case int:
		return appendLong(dst, int64(v)), nil
	case float32:
		return binary.BigEndian.AppendUint32(append(dst, codeFloat), math.Float32bits(v)), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(dst, codeDouble), math.Float64bits(v)), nil
	case Decimal32:
		return append(append(dst, codeDecimal32), v[:]...), nil
	case Decimal64:
		return append(append(dst, codeDecimal64), v[:]...), nil
	case Decimal128:
		return append(append(dst, codeDecimal128), v[:]...), nil
	case Char:
		return binary.BigEndian.AppendUint32(append(dst, codeChar), uint32(v)), nil
	case time.Time:
		return appendTimestamp(dst, v), nil
	case UUID:
		return append(append(dst, codeUUID), v[:]...), nil
	case []byte:
		return appendBinary(dst, v), nil
	case string:
		return appendString(dst, v), nil
	case Symbol:
		return appendSymbol(dst, v), nil
	case []any:
		return appendList(dst, v, depth, auto)
	case Map:
		return appendMap(dst, v, depth, auto)
	case *Described:
		if v == nil {
			return append(dst, codeNull), nil
		}
		return appendDescribed(dst, *v, depth)
	case Described:
		return appendDescribed(dst, v, depth)
	case appender:
		return v.AppendTo(dst)
	}
	if out, ok, err := appendArrayValue(dst, v, depth, auto); ok {
		return out, err
	}
	return dst, fmt.Errorf("amqp: cannot encode Go type %T", v)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, codeTrue)
	}
	return append(dst, codeFalse)
}

func appendUint(dst []byte, v uint32) []byte {
	switch {
	case v == 0:
		return append(dst, codeUint0)
	case v <= math.MaxUint8:
		return append(dst, codeSmallUint, byte(v))
	}
	return binary.BigEndian.AppendUint32(append(dst, codeUint), v)
}

func appendUlong(dst []byte, v uint64) []byte {
	switch {
	case v == 0:
		return append(dst, codeUlong0)
	case v <= math.MaxUint8:
		return append(dst, codeSmallUlong, byte(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, codeUlong), v)
}

func appendInt(dst []byte, v int32) []byte {
	if v >= math.MinInt8 && v <= math.MaxInt8 {
		return append(dst, codeSmallInt, byte(v))
	}
	return binary.BigEndian.AppendUint32(append(dst, codeInt), uint32(v))
}

func appendLong(dst []byte, v int64) []byte {
	if v >= math.MinInt8 && v <= math.MaxInt8 {
		return append(dst, codeSmallLong, byte(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, codeLong), uint64(v))
}

func appendTimestamp(dst []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(append(dst, codeTimestamp), uint64(t.UnixMilli()))
}

// appendVariable appends a vbin, str or sym encoding with the narrow code
// when p fits a one-byte length.
func appendVariable[T ~string | ~[]byte](dst []byte, narrowCode, wideCode byte, p T) []byte {
	if len(p) <= math.MaxUint8 {
		dst = append(dst, narrowCode, byte(len(p)))
	} else {
		dst = binary.BigEndian.AppendUint32(append(dst, wideCode), uint32(len(p)))
	}
	return append(dst, p...)
}

func appendBinary(dst []byte, p []byte) []byte {
	return appendVariable(dst, codeVbin8, codeVbin32, p)
}

func appendString(dst []byte, s string) []byte {
	return appendVariable(dst, codeStr8, codeStr32, s)
}

func appendSymbol(dst []byte, s Symbol) []byte {
	return appendVariable(dst, codeSym8, codeSym32, s)
}

func appendDescribed(dst []byte, v Described, depth int) ([]byte, error) {
	if depth+1 > MaxDepth {
		return dst, fmt.Errorf("amqp: values nested deeper than %d", MaxDepth)
	}
	switch desc := v.Descriptor.(type) {
	case uint64:
		dst = appendUlong(append(dst, codeDescribed), desc)
	case Symbol:
		dst = appendSymbol(append(dst, codeDescribed), desc)
	default:
		return dst, fmt.Errorf("amqp: descriptor of Go type %T, want uint64 or Symbol", v.Descriptor)
	}
	at := len(dst)
	dst, err := appendValue(dst, v.Value, depth+1)
	if err == nil && len(dst) > at && dst[at] == codeDescribed {
		// The decoders refuse this too: one descriptor per value.
		return dst, fmt.Errorf("amqp: a described value's value cannot itself be described")
	}
	return dst, err
}

// width selects how a list, map or array is written.
type width uint8

const (
	auto   width = iota // format code, then the smaller of the 8- and 32-bit forms
	narrow              // no format code; 1-byte size and count (an array element)
	wide                // no format code; 4-byte size and count (an array element)
)

// beginCompound reserves room for the largest list, map or array header and
// returns dst and the header's offset, for endCompound to fill.
func beginCompound(dst []byte) ([]byte, int) {
	return append(dst, 0, 0, 0, 0, 0, 0, 0, 0, 0), len(dst)
}

// endCompound writes the header reserved at offset at for count items that
// follow it, and moves the items up if the header is shorter than reserved.
func endCompound(dst []byte, at, count int, code8, code32 byte, w width) ([]byte, error) {
	body := len(dst) - at - 9
	if uint64(body)+4 > math.MaxUint32 || uint64(count) > math.MaxUint32 {
		return dst[:at], fmt.Errorf("amqp: compound value of %d bytes is too large", body)
	}
	small := body+1 <= math.MaxUint8 && count <= math.MaxUint8
	var hdr int
	switch {
	case w == auto && small:
		dst[at], dst[at+1], dst[at+2] = code8, byte(body+1), byte(count)
		hdr = 3
	case w == auto:
		dst[at] = code32
		binary.BigEndian.PutUint32(dst[at+1:], uint32(body+4))
		binary.BigEndian.PutUint32(dst[at+5:], uint32(count))
		hdr = 9
	case w == narrow && small:
		dst[at], dst[at+1] = byte(body+1), byte(count)
		hdr = 2
	case w == narrow:
		return dst[:at], fmt.Errorf("amqp: %d items in %d bytes do not fit an 8-bit compound", count, body)
	default:
		binary.BigEndian.PutUint32(dst[at:], uint32(body+4))
		binary.BigEndian.PutUint32(dst[at+4:], uint32(count))
		hdr = 8
	}
	if hdr < 9 {
		copy(dst[at+hdr:], dst[at+9:])
		dst = dst[:len(dst)-(9-hdr)]
	}
	return dst, nil
}

func appendList(dst []byte, l []any, depth int, w width) ([]byte, error) {
	if len(l) == 0 && w == auto {
		return append(dst, codeList0), nil
	}
	if depth+1 > MaxDepth {
		return dst, fmt.Errorf("amqp: values nested deeper than %d", MaxDepth)
	}
	dst, at := beginCompound(dst)
	var err error
	for _, v := range l {
		if dst, err = appendValue(dst, v, depth+1); err != nil {
			return dst[:at], err
		}
	}
	return endCompound(dst, at, len(l), codeList8, codeList32, w)
}

func appendMap(dst []byte, m Map, depth int, w width) ([]byte, error) {
	if depth+1 > MaxDepth {
		return dst, fmt.Errorf("amqp: values nested deeper than %d", MaxDepth)
	}
	dst, at := beginCompound(dst)
	var err error
	for _, kv := range m {
		if dst, err = appendValue(dst, kv.Key, depth+1); err != nil {
			return dst[:at], err
		}
		if dst, err = appendValue(dst, kv.Value, depth+1); err != nil {
			return dst[:at], err
		}
	}
	return endCompound(dst, at, 2*len(m), codeMap8, codeMap32, w)
}
