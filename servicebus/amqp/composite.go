package amqp

import "time"

// A composite type (§1.4) is a described list whose items are its fields in
// order; trailing fields may be left out and any field may be null, both
// meaning the field's default. This file reads and writes such lists.

// fieldDecoder is a composite type that can fill itself from its fields.
type fieldDecoder interface {
	decodeFields(f *fields)
}

// fields reads the items of a composite's list one field at a time. The
// first error sticks: later reads return zero values, and finish reports it.
type fields struct {
	d    decoder
	n    int // items not read yet
	i    int // index of the next field, for error messages
	name string
	err  error
}

// decodeList reads a list (the value of a composite) into c.
func (d *decoder) decodeList(c fieldDecoder) error {
	code, err := d.byte()
	if err != nil {
		return err
	}
	f := fields{name: compositeName(c)}
	switch code {
	case codeList0:
	case codeList8, codeList32:
		if f.d, f.n, err = d.compound(code == codeList32); err != nil {
			return err
		}
	default:
		return decodeErrorf("%s: format code 0x%02x, want a list", f.name, code)
	}
	c.decodeFields(&f)
	// Fields this version does not know are checked and ignored (§1.4 allows
	// a later version to append fields).
	for f.err == nil && f.n > 0 {
		f.n--
		f.err = f.d.skip()
	}
	if f.err != nil {
		return f.err
	}
	return f.d.done()
}

func compositeName(c fieldDecoder) string {
	switch c.(type) {
	case *Open:
		return "open"
	case *Begin:
		return "begin"
	case *Attach:
		return "attach"
	case *Flow, *flowSlab:
		return "flow"
	case *Transfer, *transferSlab:
		return "transfer"
	case *Disposition:
		return "disposition"
	case *Detach:
		return "detach"
	case *End:
		return "end"
	case *Close:
		return "close"
	case *Error:
		return "error"
	case *Source:
		return "source"
	case *Target:
		return "target"
	case *Coordinator:
		return "coordinator"
	case *Declare:
		return "declare"
	case *Discharge:
		return "discharge"
	case *Header:
		return "header"
	case *Properties:
		return "properties"
	case *SASLMechanisms:
		return "sasl-mechanisms"
	case *SASLInit:
		return "sasl-init"
	case *SASLChallenge:
		return "sasl-challenge"
	case *SASLResponse:
		return "sasl-response"
	case *SASLOutcome:
		return "sasl-outcome"
	}
	return "delivery-state"
}

// next moves to the next field and returns its format code; ok is false when
// the field is absent: null, past the end of the list, or after an error.
func (f *fields) next() (code byte, ok bool) {
	f.i++
	if f.err != nil || f.n == 0 {
		return 0, false
	}
	f.n--
	c, err := f.d.byte()
	if err != nil {
		f.err = err
		return 0, false
	}
	return c, c != codeNull
}

// missing records that a mandatory field was absent.
func (f *fields) missing(field string) {
	if f.err == nil {
		f.err = decodeErrorf("%s: mandatory field %s is absent", f.name, field)
	}
}

func (f *fields) wrongType(c byte) {
	f.err = decodeErrorf("%s: field %d has unexpected format code 0x%02x", f.name, f.i, c)
}

// get reads the next field with read if accept allows its format code.
func get[T any](f *fields, accept func(byte) bool, read func(*decoder, byte) (T, error)) (v T, ok bool) {
	c, ok := f.next()
	if !ok {
		return v, false
	}
	if !accept(c) {
		f.wrongType(c)
		return v, false
	}
	v, err := read(&f.d, c)
	if err != nil {
		f.err = err
		return v, false
	}
	return v, true
}

func isBool(c byte) bool   { return c == codeBool || c == codeTrue || c == codeFalse }
func isUbyte(c byte) bool  { return c == codeUbyte }
func isUshort(c byte) bool { return c == codeUshort }
func isUint(c byte) bool   { return c == codeUint || c == codeSmallUint || c == codeUint0 }
func isUlong(c byte) bool  { return c == codeUlong || c == codeSmallUlong || c == codeUlong0 }
func isBinary(c byte) bool { return c == codeVbin8 || c == codeVbin32 }
func isString(c byte) bool { return c == codeStr8 || c == codeStr32 }
func isSymbol(c byte) bool { return c == codeSym8 || c == codeSym32 }
func isMap(c byte) bool    { return c == codeMap8 || c == codeMap32 }
func isTime(c byte) bool   { return c == codeTimestamp }

func (f *fields) bool() bool {
	v, _ := get(f, isBool, (*decoder).boolBody)
	return v
}

func (f *fields) boolPtr() *bool {
	if v, ok := get(f, isBool, (*decoder).boolBody); ok {
		return &v
	}
	return nil
}

func (f *fields) ubyte() (uint8, bool) {
	return get(f, isUbyte, func(d *decoder, _ byte) (uint8, error) { return d.byte() })
}

func (f *fields) ubytePtr() *uint8 {
	if v, ok := f.ubyte(); ok {
		return &v
	}
	return nil
}

func (f *fields) ushort() (uint16, bool) {
	return get(f, isUshort, func(d *decoder, _ byte) (uint16, error) { return d.u16() })
}

func (f *fields) uint() (uint32, bool) {
	return get(f, isUint, (*decoder).uintBody)
}

func (f *fields) uintPtr() *uint32 {
	if v, ok := f.uint(); ok {
		return &v
	}
	return nil
}

func (f *fields) ulong() (uint64, bool) {
	return get(f, isUlong, (*decoder).ulongBody)
}

func (f *fields) binary() []byte {
	v, _ := get(f, isBinary, (*decoder).binaryBody)
	return v
}

func (f *fields) string() (string, bool) {
	return get(f, isString, (*decoder).stringBody)
}

func (f *fields) symbol() (Symbol, bool) {
	return get(f, isSymbol, (*decoder).symbolBody)
}

func (f *fields) timestamp() time.Time {
	v, _ := get(f, isTime, (*decoder).timestampBody)
	return v
}

func (f *fields) mapv() Map {
	v, _ := get(f, isMap, (*decoder).mapBody)
	return v
}

// any reads a field of any type, such as a message-id.
func (f *fields) any() any {
	c, ok := f.next()
	if !ok {
		return nil
	}
	var v any
	var err error
	if c == codeDescribed {
		v, err = f.d.described()
	} else {
		v, err = f.d.body(c)
	}
	if err != nil {
		f.err = err
	}
	return v
}

// symbols reads a multiple symbol field (§1.3): one symbol or an array.
func (f *fields) symbols() []Symbol {
	c, ok := f.next()
	if !ok {
		return nil
	}
	switch c {
	case codeSym8, codeSym32:
		s, err := f.d.symbolBody(c)
		if err != nil {
			f.err = err
			return nil
		}
		return []Symbol{s}
	case codeArray8, codeArray32:
		v, err := f.d.arrayBody(c)
		if err != nil {
			f.err = err
			return nil
		}
		if s, ok := v.([]Symbol); ok {
			return s
		}
		if a, ok := v.(*Array); ok && len(a.Items) == 0 {
			return []Symbol{}
		}
	}
	f.wrongType(c)
	return nil
}

// composite reads a described field that must be one of the composite types
// this package models (error, delivery states, source, target). A described
// value with another descriptor is an error unless allowOther, when it is
// returned as *Described.
func (f *fields) composite(allowOther bool) any {
	c, ok := f.next()
	if !ok {
		return nil
	}
	if c != codeDescribed {
		f.wrongType(c)
		return nil
	}
	v, err := f.d.described()
	if err != nil {
		f.err = err
		return nil
	}
	if _, ok := v.(*Described); ok && !allowOther {
		f.err = decodeErrorf("%s: field %d has an unexpected descriptor", f.name, f.i)
		return nil
	}
	return v
}

func (f *fields) error() *Error {
	v := f.composite(false)
	e, ok := v.(*Error)
	if !ok && v != nil {
		f.err = decodeErrorf("%s: field %d is not an error", f.name, f.i)
	}
	return e
}

func (f *fields) deliveryState() DeliveryState {
	v := f.composite(true)
	s, ok := v.(DeliveryState)
	if !ok && v != nil {
		f.err = decodeErrorf("%s: field %d is not a delivery state", f.name, f.i)
	}
	return s
}

func (f *fields) source() *Source {
	v := f.composite(false)
	s, ok := v.(*Source)
	if !ok && v != nil {
		f.err = decodeErrorf("%s: field %d is not a source", f.name, f.i)
	}
	return s
}

// targetOrCoordinator decodes a link's target field, which is a target or,
// on a link to a transaction coordinator, a coordinator (§4.5.1).
func (f *fields) targetOrCoordinator() (*Target, *Coordinator) {
	v := f.composite(false)
	switch t := v.(type) {
	case nil:
		return nil, nil
	case *Target:
		return t, nil
	case *Coordinator:
		return nil, t
	}
	f.err = decodeErrorf("%s: field %d is not a target", f.name, f.i)
	return nil, nil
}
