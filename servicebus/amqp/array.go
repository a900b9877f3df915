package amqp

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// arrayBody decodes an array (§1.6.24) after its format code c: elements of
// the types listed in the package documentation into typed slices, others
// into *Array.
func (d *decoder) arrayBody(c byte) (any, error) {
	sub, n, err := d.compound(c == codeArray32)
	if err != nil {
		return nil, err
	}
	start := sub.b
	ec, err := sub.byte()
	if err != nil {
		return nil, err
	}
	described := ec == codeDescribed
	if described {
		if _, err := sub.descriptor(); err != nil {
			return nil, err
		}
		if ec, err = sub.byte(); err != nil {
			return nil, err
		}
		if ec == codeDescribed {
			return nil, decodeErrorf("array constructor with nested descriptors")
		}
	}
	ctor := start[:len(start)-len(sub.b)]
	// Every element but the zero-width ones takes at least a byte, fixed-width
	// ones exactly their width; zero-width elements are held to a byte each
	// too, so that a few bytes cannot make the decoder allocate much.
	if w := fixedWidth(ec); w > 0 && uint64(n)*uint64(w) > uint64(len(sub.b)) || n > len(sub.b) {
		return nil, decodeErrorf("array of %d elements does not fit in %d bytes", n, len(sub.b))
	}
	var v any
	if described {
		v, err = arrayOf(&sub, n, ec, (*decoder).body)
	} else {
		v, err = sub.typedArray(n, ec)
	}
	if err != nil {
		return nil, err
	}
	if err := sub.done(); err != nil {
		return nil, err
	}
	if items, ok := v.([]any); ok {
		return &Array{Constructor: append([]byte(nil), ctor...), Items: items}, nil
	}
	return v, nil
}

// fixedWidth returns the width of the body of a fixed-width format code, 0
// for zero-width, variable-width and compound codes.
func fixedWidth(c byte) int {
	switch c >> 4 {
	case 0x5:
		return 1
	case 0x6:
		return 2
	case 0x7:
		return 4
	case 0x8:
		return 8
	case 0x9:
		return 16
	}
	return 0
}

// typedArray decodes n elements of format code c into the typed slice for
// c, or into []any for codes without one.
func (d *decoder) typedArray(n int, c byte) (any, error) {
	switch c {
	case codeBool, codeTrue, codeFalse:
		return arrayOf(d, n, c, (*decoder).boolBody)
	case codeUshort:
		return arrayOf(d, n, c, func(d *decoder, _ byte) (uint16, error) { return d.u16() })
	case codeUint0, codeSmallUint, codeUint:
		return arrayOf(d, n, c, (*decoder).uintBody)
	case codeUlong0, codeSmallUlong, codeUlong:
		return arrayOf(d, n, c, (*decoder).ulongBody)
	case codeByte:
		return arrayOf(d, n, c, func(d *decoder, _ byte) (int8, error) { v, err := d.byte(); return int8(v), err })
	case codeShort:
		return arrayOf(d, n, c, func(d *decoder, _ byte) (int16, error) { v, err := d.u16(); return int16(v), err })
	case codeSmallInt, codeInt:
		return arrayOf(d, n, c, (*decoder).intBody)
	case codeSmallLong, codeLong:
		return arrayOf(d, n, c, (*decoder).longBody)
	case codeFloat:
		return arrayOf(d, n, c, func(d *decoder, _ byte) (float32, error) {
			v, err := d.u32()
			return math.Float32frombits(v), err
		})
	case codeDouble:
		return arrayOf(d, n, c, func(d *decoder, _ byte) (float64, error) {
			v, err := d.u64()
			return math.Float64frombits(v), err
		})
	case codeChar:
		return arrayOf(d, n, c, func(d *decoder, _ byte) (Char, error) { v, err := d.u32(); return Char(v), err })
	case codeTimestamp:
		return arrayOf(d, n, c, (*decoder).timestampBody)
	case codeUUID:
		return arrayOf(d, n, c, (*decoder).uuidBody)
	case codeVbin8, codeVbin32:
		return arrayOf(d, n, c, (*decoder).binaryBody)
	case codeStr8, codeStr32:
		return arrayOf(d, n, c, (*decoder).stringBody)
	case codeSym8, codeSym32:
		return arrayOf(d, n, c, (*decoder).symbolBody)
	}
	// ubyte arrays decode as []any too: []uint8 is []byte, which is binary.
	return arrayOf(d, n, c, (*decoder).body)
}

func arrayOf[T any](d *decoder, n int, c byte, read func(*decoder, byte) (T, error)) ([]T, error) {
	out := make([]T, n)
	for i := range out {
		v, err := read(d, c)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// appendArrayValue appends v if it is one of the Go types that encode as an
// AMQP array; ok is false otherwise.
func appendArrayValue(dst []byte, v any, depth int, w width) (out []byte, ok bool, err error) {
	be := binary.BigEndian
	switch v := v.(type) {
	case []bool:
		out, err = appendArray(dst, v, codeBool, w, func(b []byte, x bool) []byte {
			if x {
				return append(b, 1)
			}
			return append(b, 0)
		})
	case []uint16:
		out, err = appendArray(dst, v, codeUshort, w, be.AppendUint16)
	case []uint32:
		if all(v, func(x uint32) bool { return x <= math.MaxUint8 }) {
			out, err = appendArray(dst, v, codeSmallUint, w, func(b []byte, x uint32) []byte { return append(b, byte(x)) })
		} else {
			out, err = appendArray(dst, v, codeUint, w, be.AppendUint32)
		}
	case []uint64:
		if all(v, func(x uint64) bool { return x <= math.MaxUint8 }) {
			out, err = appendArray(dst, v, codeSmallUlong, w, func(b []byte, x uint64) []byte { return append(b, byte(x)) })
		} else {
			out, err = appendArray(dst, v, codeUlong, w, be.AppendUint64)
		}
	case []int8:
		out, err = appendArray(dst, v, codeByte, w, func(b []byte, x int8) []byte { return append(b, byte(x)) })
	case []int16:
		out, err = appendArray(dst, v, codeShort, w, func(b []byte, x int16) []byte { return be.AppendUint16(b, uint16(x)) })
	case []int32:
		if all(v, func(x int32) bool { return x >= math.MinInt8 && x <= math.MaxInt8 }) {
			out, err = appendArray(dst, v, codeSmallInt, w, func(b []byte, x int32) []byte { return append(b, byte(x)) })
		} else {
			out, err = appendArray(dst, v, codeInt, w, func(b []byte, x int32) []byte { return be.AppendUint32(b, uint32(x)) })
		}
	case []int64:
		if all(v, func(x int64) bool { return x >= math.MinInt8 && x <= math.MaxInt8 }) {
			out, err = appendArray(dst, v, codeSmallLong, w, func(b []byte, x int64) []byte { return append(b, byte(x)) })
		} else {
			out, err = appendArray(dst, v, codeLong, w, func(b []byte, x int64) []byte { return be.AppendUint64(b, uint64(x)) })
		}
	case []float32:
		out, err = appendArray(dst, v, codeFloat, w, func(b []byte, x float32) []byte { return be.AppendUint32(b, math.Float32bits(x)) })
	case []float64:
		out, err = appendArray(dst, v, codeDouble, w, func(b []byte, x float64) []byte { return be.AppendUint64(b, math.Float64bits(x)) })
	case []Char:
		out, err = appendArray(dst, v, codeChar, w, func(b []byte, x Char) []byte { return be.AppendUint32(b, uint32(x)) })
	case []time.Time:
		out, err = appendArray(dst, v, codeTimestamp, w, func(b []byte, x time.Time) []byte { return be.AppendUint64(b, uint64(x.UnixMilli())) })
	case []UUID:
		out, err = appendArray(dst, v, codeUUID, w, func(b []byte, x UUID) []byte { return append(b, x[:]...) })
	case [][]byte:
		out, err = appendVariableArray(dst, v, codeVbin8, codeVbin32, w)
	case []string:
		out, err = appendVariableArray(dst, v, codeStr8, codeStr32, w)
	case []Symbol:
		out, err = appendVariableArray(dst, v, codeSym8, codeSym32, w)
	case *Array:
		if v == nil {
			if w != auto {
				return dst, true, fmt.Errorf("amqp: nil *Array as an array element")
			}
			return append(dst, codeNull), true, nil
		}
		out, err = appendAnyArray(dst, v, depth, w)
	default:
		return dst, false, nil
	}
	return out, true, err
}

// all reports whether ok holds for every item; arrays of integers use the
// one-byte element encoding when it does for "fits in a byte".
func all[T any](items []T, ok func(T) bool) bool {
	for _, x := range items {
		if !ok(x) {
			return false
		}
	}
	return true
}

func appendArray[T any](dst []byte, items []T, c byte, w width, body func([]byte, T) []byte) ([]byte, error) {
	dst, at := beginCompound(dst)
	dst = append(dst, c)
	for _, x := range items {
		dst = body(dst, x)
	}
	return endCompound(dst, at, len(items), codeArray8, codeArray32, w)
}

// appendVariableArray appends an array of binaries, strings or symbols, with
// one-byte lengths when every element fits them.
func appendVariableArray[T ~string | ~[]byte](dst []byte, items []T, narrowCode, wideCode byte, w width) ([]byte, error) {
	c := narrowCode
	for _, x := range items {
		if len(x) > math.MaxUint8 {
			c = wideCode
			break
		}
	}
	return appendArray(dst, items, c, w, func(b []byte, x T) []byte {
		if c == narrowCode {
			return append(append(b, byte(len(x))), x...)
		}
		return append(binary.BigEndian.AppendUint32(b, uint32(len(x))), x...)
	})
}

// appendAnyArray appends an *Array, writing each item with the format code
// at the end of its constructor.
func appendAnyArray(dst []byte, a *Array, depth int, w width) ([]byte, error) {
	if depth+1 > MaxDepth {
		return dst, fmt.Errorf("amqp: values nested deeper than %d", MaxDepth)
	}
	cd := decoder{b: a.Constructor}
	c, err := cd.byte()
	if err == nil && c == codeDescribed {
		if _, err = cd.descriptor(); err == nil {
			c, err = cd.byte()
		}
	}
	if err != nil || c == codeDescribed || len(cd.b) != 0 {
		return dst, fmt.Errorf("amqp: invalid array constructor % x", a.Constructor)
	}
	dst, at := beginCompound(dst)
	dst = append(dst, a.Constructor...)
	for _, x := range a.Items {
		if dst, err = appendBody(dst, c, x, depth+1); err != nil {
			return dst[:at], err
		}
	}
	return endCompound(dst, at, len(a.Items), codeArray8, codeArray32, w)
}

// appendBody appends v as the body of an array element whose constructor
// ends in format code c.
func appendBody(dst []byte, c byte, v any, depth int) ([]byte, error) {
	be := binary.BigEndian
	switch x := v.(type) {
	case nil:
		if c == codeNull {
			return dst, nil
		}
	case bool:
		switch {
		case c == codeBool && x:
			return append(dst, 1), nil
		case c == codeBool:
			return append(dst, 0), nil
		case c == codeTrue && x, c == codeFalse && !x:
			return dst, nil
		}
	case uint8:
		if c == codeUbyte {
			return append(dst, x), nil
		}
	case uint16:
		if c == codeUshort {
			return be.AppendUint16(dst, x), nil
		}
	case uint32:
		switch {
		case c == codeUint:
			return be.AppendUint32(dst, x), nil
		case c == codeSmallUint && x <= math.MaxUint8:
			return append(dst, byte(x)), nil
		case c == codeUint0 && x == 0:
			return dst, nil
		}
	case uint64:
		switch {
		case c == codeUlong:
			return be.AppendUint64(dst, x), nil
		case c == codeSmallUlong && x <= math.MaxUint8:
			return append(dst, byte(x)), nil
		case c == codeUlong0 && x == 0:
			return dst, nil
		}
	case int8:
		if c == codeByte {
			return append(dst, byte(x)), nil
		}
	case int16:
		if c == codeShort {
			return be.AppendUint16(dst, uint16(x)), nil
		}
	case int32:
		switch {
		case c == codeInt:
			return be.AppendUint32(dst, uint32(x)), nil
		case c == codeSmallInt && x >= math.MinInt8 && x <= math.MaxInt8:
			return append(dst, byte(x)), nil
		}
	case int64:
		switch {
		case c == codeLong:
			return be.AppendUint64(dst, uint64(x)), nil
		case c == codeSmallLong && x >= math.MinInt8 && x <= math.MaxInt8:
			return append(dst, byte(x)), nil
		}
	case float32:
		if c == codeFloat {
			return be.AppendUint32(dst, math.Float32bits(x)), nil
		}
	case float64:
		if c == codeDouble {
			return be.AppendUint64(dst, math.Float64bits(x)), nil
		}
	case Decimal32:
		if c == codeDecimal32 {
			return append(dst, x[:]...), nil
		}
	case Decimal64:
		if c == codeDecimal64 {
			return append(dst, x[:]...), nil
		}
	case Decimal128:
		if c == codeDecimal128 {
			return append(dst, x[:]...), nil
		}
	case Char:
		if c == codeChar {
			return be.AppendUint32(dst, uint32(x)), nil
		}
	case time.Time:
		if c == codeTimestamp {
			return be.AppendUint64(dst, uint64(x.UnixMilli())), nil
		}
	case UUID:
		if c == codeUUID {
			return append(dst, x[:]...), nil
		}
	case []byte:
		if out, ok := appendVariableBody(dst, c, codeVbin8, codeVbin32, x); ok {
			return out, nil
		}
	case string:
		if out, ok := appendVariableBody(dst, c, codeStr8, codeStr32, x); ok {
			return out, nil
		}
	case Symbol:
		if out, ok := appendVariableBody(dst, c, codeSym8, codeSym32, x); ok {
			return out, nil
		}
	case []any:
		switch c {
		case codeList0:
			if len(x) == 0 {
				return dst, nil
			}
		case codeList8:
			return appendList(dst, x, depth, narrow)
		case codeList32:
			return appendList(dst, x, depth, wide)
		}
	case Map:
		switch c {
		case codeMap8:
			return appendMap(dst, x, depth, narrow)
		case codeMap32:
			return appendMap(dst, x, depth, wide)
		}
	}
	switch c {
	case codeArray8, codeArray32:
		w := narrow
		if c == codeArray32 {
			w = wide
		}
		if out, ok, err := appendArrayValue(dst, v, depth, w); ok {
			return out, err
		}
	}
	return dst, fmt.Errorf("amqp: cannot encode Go type %T as an array element with format code 0x%02x", v, c)
}

func appendVariableBody[T ~string | ~[]byte](dst []byte, c, narrowCode, wideCode byte, x T) ([]byte, bool) {
	switch {
	case c == narrowCode && len(x) <= math.MaxUint8:
		return append(append(dst, byte(len(x))), x...), true
	case c == wideCode:
		return append(binary.BigEndian.AppendUint32(dst, uint32(len(x))), x...), true
	}
	return dst, false
}
