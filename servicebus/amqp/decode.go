package amqp

import (
	"encoding/binary"
	"math"
	"time"
)

// MaxDepth is the deepest nesting of lists, maps, arrays and described values
// the decoders accept; deeper input fails with a [*DecodeError].
const MaxDepth = 64

// ReadValue decodes one AMQP value (§1.6) from the start of b and returns it
// with the number of bytes it took. See the package documentation for the Go
// type each AMQP type decodes into. Decoded values never alias b.
func ReadValue(b []byte) (v any, n int, err error) {
	d := decoder{b: b}
	v, err = d.value()
	if err != nil {
		return nil, 0, err
	}
	return v, len(b) - len(d.b), nil
}

// decoder is a cursor over encoded AMQP data: every read consumes from the
// front of b and fails with a *DecodeError rather than read past its end.
type decoder struct {
	b     []byte
	depth int
}

func (d *decoder) byte() (byte, error) {
	if len(d.b) < 1 {
		return 0, errTruncated()
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c, nil
}

// next consumes and returns the next n bytes, which alias the input.
func (d *decoder) next(n int) ([]byte, error) {
	if n < 0 || n > len(d.b) {
		return nil, errTruncated()
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p, nil
}

func (d *decoder) u16() (uint16, error) {
	p, err := d.next(2)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(p), nil
}

func (d *decoder) u32() (uint32, error) {
	p, err := d.next(4)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(p), nil
}

func (d *decoder) u64() (uint64, error) {
	p, err := d.next(8)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(p), nil
}

// length reads the size prefix of a variable-width (wide=false: 1 byte,
// wide=true: 4 bytes) encoding and checks it against the bytes remaining.
func (d *decoder) length(wide bool) (int, error) {
	var n uint64
	if wide {
		v, err := d.u32()
		if err != nil {
			return 0, err
		}
		n = uint64(v)
	} else {
		v, err := d.byte()
		if err != nil {
			return 0, err
		}
		n = uint64(v)
	}
	if n > uint64(len(d.b)) {
		return 0, errTruncated()
	}
	return int(n), nil
}

// enter returns a decoder over the next size bytes one level deeper, and
// advances d past them.
func (d *decoder) enter(size int) (decoder, error) {
	if d.depth+1 > MaxDepth {
		return decoder{}, decodeErrorf("nesting deeper than %d", MaxDepth)
	}
	p, err := d.next(size)
	if err != nil {
		return decoder{}, err
	}
	return decoder{b: p, depth: d.depth + 1}, nil
}

// compound reads the size and count of a list, map or array and returns a
// decoder over the items. The count is checked against the bytes present:
// every item takes at least one byte, so a larger count cannot be honest.
func (d *decoder) compound(wide bool) (sub decoder, count int, err error) {
	size, err := d.length(wide)
	if err != nil {
		return decoder{}, 0, err
	}
	sub, err = d.enter(size)
	if err != nil {
		return decoder{}, 0, err
	}
	var c uint64
	if wide {
		v, err := sub.u32()
		if err != nil {
			return decoder{}, 0, err
		}
		c = uint64(v)
	} else {
		v, err := sub.byte()
		if err != nil {
			return decoder{}, 0, err
		}
		c = uint64(v)
	}
	if c > uint64(len(sub.b)) {
		return decoder{}, 0, decodeErrorf("count %d exceeds the %d bytes present", c, len(sub.b))
	}
	return sub, int(c), nil
}

// done checks that a compound's items used exactly the size it declared.
func (d *decoder) done() error {
	if len(d.b) != 0 {
		return decodeErrorf("%d bytes left over after the declared items", len(d.b))
	}
	return nil
}

// value decodes one value, constructor included.
func (d *decoder) value() (any, error) {
	c, err := d.byte()
	if err != nil {
		return nil, err
	}
	if c == codeDescribed {
		return d.described()
	}
	return d.body(c)
}

// descriptor reads the descriptor of a described value (after 0x00): a ulong
// or a symbol, the only descriptor types the spec defines (§1.5).
func (d *decoder) descriptor() (any, error) {
	c, err := d.byte()
	if err != nil {
		return nil, err
	}
	switch c {
	case codeUlong0, codeSmallUlong, codeUlong:
		return d.ulongBody(c)
	case codeSym8, codeSym32:
		return d.symbolBody(c)
	}
	return nil, decodeErrorf("descriptor with format code 0x%02x, want ulong or symbol", c)
}

// descriptorCode reads a descriptor and maps a known symbolic name to its
// numeric code; known is false for a symbol the codec does not know.
func (d *decoder) descriptorCode() (desc any, code uint64, known bool, err error) {
	desc, err = d.descriptor()
	if err != nil {
		return nil, 0, false, err
	}
	switch v := desc.(type) {
	case uint64:
		return desc, v, true, nil
	case Symbol:
		code, known = symbolicDescriptor(string(v))
		return desc, code, known, nil
	}
	return desc, 0, false, nil
}

// described decodes a described value after its 0x00 marker: the composite
// types of this package into their structs, anything else into *Described.
func (d *decoder) described() (any, error) {
	if d.depth+1 > MaxDepth {
		return nil, decodeErrorf("nesting deeper than %d", MaxDepth)
	}
	desc, code, known, err := d.descriptorCode()
	if err != nil {
		return nil, err
	}
	if known {
		if v, ok, err := d.composite(code); ok || err != nil {
			return v, err
		}
	}
	inner := decoder{b: d.b, depth: d.depth + 1}
	c, err := inner.byte()
	if err != nil {
		return nil, err
	}
	if c == codeDescribed {
		return nil, decodeErrorf("a described value's value is itself described")
	}
	v, err := inner.body(c)
	if err != nil {
		return nil, err
	}
	d.b = inner.b
	return &Described{Descriptor: desc, Value: v}, nil
}

// composite decodes the value of a described type this package models as a
// struct; ok is false for other codes, which decode as *Described.
func (d *decoder) composite(code uint64) (v any, ok bool, err error) {
	var c interface{ decodeFields(*fields) }
	switch code {
	case descError:
		c = new(Error)
	case descReceived:
		c = new(Received)
	case descAccepted:
		c = new(Accepted)
	case descRejected:
		c = new(Rejected)
	case descReleased:
		c = new(Released)
	case descModified:
		c = new(Modified)
	case descSource:
		c = new(Source)
	case descTarget:
		c = new(Target)
	case descCoordinator:
		c = new(Coordinator)
	case descDeclare:
		c = new(Declare)
	case descDischarge:
		c = new(Discharge)
	case descDeclared:
		c = new(Declared)
	case descTransactionalState:
		c = new(TransactionalState)
	default:
		return nil, false, nil
	}
	if err := d.decodeList(c); err != nil {
		return nil, true, err
	}
	return c, true, nil
}

// body decodes the value that follows format code c.
func (d *decoder) body(c byte) (any, error) {
	switch c {
	case codeNull:
		return nil, nil
	case codeTrue:
		return true, nil
	case codeFalse:
		return false, nil
	case codeBool:
		return d.boolBody(c)
	case codeUbyte:
		return d.byte()
	case codeUshort:
		return d.u16()
	case codeUint0, codeSmallUint, codeUint:
		return d.uintBody(c)
	case codeUlong0, codeSmallUlong, codeUlong:
		return d.ulongBody(c)
	case codeByte:
		v, err := d.byte()
		return int8(v), err
	case codeShort:
		v, err := d.u16()
		return int16(v), err
	case codeSmallInt, codeInt:
		return d.intBody(c)
	case codeSmallLong, codeLong:
		return d.longBody(c)
	case codeFloat:
		v, err := d.u32()
		return math.Float32frombits(v), err
	case codeDouble:
		v, err := d.u64()
		return math.Float64frombits(v), err
	case codeDecimal32:
		var v Decimal32
		p, err := d.next(len(v))
		copy(v[:], p)
		return v, err
	case codeDecimal64:
		var v Decimal64
		p, err := d.next(len(v))
		copy(v[:], p)
		return v, err
	case codeDecimal128:
		var v Decimal128
		p, err := d.next(len(v))
		copy(v[:], p)
		return v, err
	case codeChar:
		v, err := d.u32()
		return Char(v), err
	case codeTimestamp:
		return d.timestampBody(c)
	case codeUUID:
		return d.uuidBody(c)
	case codeVbin8, codeVbin32:
		return d.binaryBody(c)
	case codeStr8, codeStr32:
		return d.stringBody(c)
	case codeSym8, codeSym32:
		return d.symbolBody(c)
	case codeList0, codeList8, codeList32:
		return d.listBody(c)
	case codeMap8, codeMap32:
		return d.mapBody(c)
	case codeArray8, codeArray32:
		return d.arrayBody(c)
	}
	return nil, decodeErrorf("unknown format code 0x%02x", c)
}

func (d *decoder) boolBody(c byte) (bool, error) {
	switch c {
	case codeTrue:
		return true, nil
	case codeFalse:
		return false, nil
	}
	v, err := d.byte()
	if err != nil {
		return false, err
	}
	if v > 1 {
		return false, decodeErrorf("boolean byte 0x%02x, want 0 or 1", v)
	}
	return v == 1, nil
}

func (d *decoder) uintBody(c byte) (uint32, error) {
	switch c {
	case codeUint0:
		return 0, nil
	case codeSmallUint:
		v, err := d.byte()
		return uint32(v), err
	}
	return d.u32()
}

func (d *decoder) ulongBody(c byte) (uint64, error) {
	switch c {
	case codeUlong0:
		return 0, nil
	case codeSmallUlong:
		v, err := d.byte()
		return uint64(v), err
	}
	return d.u64()
}

func (d *decoder) intBody(c byte) (int32, error) {
	if c == codeSmallInt {
		v, err := d.byte()
		return int32(int8(v)), err
	}
	v, err := d.u32()
	return int32(v), err
}

func (d *decoder) longBody(c byte) (int64, error) {
	if c == codeSmallLong {
		v, err := d.byte()
		return int64(int8(v)), err
	}
	v, err := d.u64()
	return int64(v), err
}

func (d *decoder) timestampBody(byte) (time.Time, error) {
	v, err := d.u64()
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(v)).UTC(), nil
}

func (d *decoder) uuidBody(byte) (UUID, error) {
	var u UUID
	p, err := d.next(len(u))
	copy(u[:], p)
	return u, err
}

// bytesBody returns the bytes of a vbin, str or sym encoding, aliasing the
// input; wide says the length prefix is four bytes.
func (d *decoder) bytesBody(wide bool) ([]byte, error) {
	n, err := d.length(wide)
	if err != nil {
		return nil, err
	}
	return d.next(n)
}

func (d *decoder) binaryBody(c byte) ([]byte, error) {
	p, err := d.bytesBody(c == codeVbin32)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(p))
	copy(out, p)
	return out, nil
}

func (d *decoder) stringBody(c byte) (string, error) {
	p, err := d.bytesBody(c == codeStr32)
	return string(p), err
}

func (d *decoder) symbolBody(c byte) (Symbol, error) {
	p, err := d.bytesBody(c == codeSym32)
	return Symbol(p), err
}

func (d *decoder) listBody(c byte) ([]any, error) {
	if c == codeList0 {
		return []any{}, nil
	}
	sub, n, err := d.compound(c == codeList32)
	if err != nil {
		return nil, err
	}
	l := make([]any, n)
	for i := range l {
		if l[i], err = sub.value(); err != nil {
			return nil, err
		}
	}
	return l, sub.done()
}

func (d *decoder) mapBody(c byte) (Map, error) {
	sub, n, err := d.compound(c == codeMap32)
	if err != nil {
		return nil, err
	}
	if n%2 != 0 {
		return nil, decodeErrorf("map with an odd count %d", n)
	}
	m := make(Map, n/2)
	for i := range m {
		if m[i].Key, err = sub.value(); err != nil {
			return nil, err
		}
		if m[i].Value, err = sub.value(); err != nil {
			return nil, err
		}
	}
	return m, sub.done()
}
