package query

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects Decode accepts.
const maxDepth = 1000

// Decode parses one JSON text into a value: objects become *Object with their
// properties in document order (a repeated name keeps its first place and
// its last value), numbers float64, arrays []any. Whitespace may surround the
// value; anything else after it is an error. Invalid UTF-8 in strings becomes
// U+FFFD, as with encoding/json.
func Decode(b []byte) (any, error) {
	// Unescaped strings are cut out of one copy of the text, which saves an
	// allocation per string; they keep the copy alive as long as they live.
	d := decoder{b: b, s: string(b)}
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.i != len(d.b) {
		return nil, d.errorf("unexpected %q after top-level value", d.b[d.i])
	}
	return v, nil
}

// decoder is a cursor over one JSON text.
type decoder struct {
	b []byte
	s string // the text as a string, for unescaped strings
	i int

	// Scratch stacks of the containers being decoded: an object's or
	// array's members go here first, then into a slice of exact size.
	keys []string
	vals []any
}

// errorf returns a syntax error at the cursor.
func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("json: offset %d: %s", d.i, fmt.Sprintf(format, args...))
}

// smallInts holds the small non-negative integers already boxed, so that
// decoding them does not allocate. It is never written after initialization.
var smallInts = func() (t [256]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// errEnd is the error for a text that ends too early.
var errEnd = errors.New("json: unexpected end of input")

// skipSpace moves past JSON whitespace.
func (d *decoder) skipSpace() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value parses the value at the cursor, which is not whitespace.
func (d *decoder) value(depth int) (any, error) {
	if d.i >= len(d.b) {
		return nil, errEnd
	}
	switch c := d.b[d.i]; c {
	case '{':
		if depth >= maxDepth {
			return nil, d.errorf("nested too deeply")
		}
		return d.object(depth + 1)
	case '[':
		if depth >= maxDepth {
			return nil, d.errorf("nested too deeply")
		}
		return d.array(depth + 1)
	case '"':
		return d.str()
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return d.number()
		}
		return nil, d.errorf("invalid character %q looking for a value", c)
	}
}

// literal consumes the keyword word.
func (d *decoder) literal(word string) error {
	if len(d.b)-d.i < len(word) {
		return errEnd
	}
	if string(d.b[d.i:d.i+len(word)]) != word {
		return d.errorf("invalid literal, expected %s", word)
	}
	d.i += len(word)
	return nil
}

// object parses an object; the cursor is at '{'.
func (d *decoder) object(depth int) (any, error) {
	d.i++
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return &Object{}, nil
	}
	kbase, vbase := len(d.keys), len(d.vals)
	for {
		if d.i >= len(d.b) {
			return nil, errEnd
		}
		if d.b[d.i] != '"' {
			return nil, d.errorf("invalid character %q looking for a property name", d.b[d.i])
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.skipSpace()
		if d.i >= len(d.b) {
			return nil, errEnd
		}
		if d.b[d.i] != ':' {
			return nil, d.errorf("invalid character %q after property name", d.b[d.i])
		}
		d.i++
		d.skipSpace()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		if dup := d.findKey(kbase, k); dup >= 0 {
			d.vals[vbase+dup-kbase] = v
		} else {
			d.keys = append(d.keys, k)
			d.vals = append(d.vals, v)
		}
		d.skipSpace()
		if d.i >= len(d.b) {
			return nil, errEnd
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.skipSpace()
		case '}':
			d.i++
			o := &Object{Keys: make([]string, len(d.keys)-kbase), Vals: make([]any, len(d.vals)-vbase)}
			copy(o.Keys, d.keys[kbase:])
			copy(o.Vals, d.vals[vbase:])
			clear(d.vals[vbase:])
			d.keys, d.vals = d.keys[:kbase], d.vals[:vbase]
			return o, nil
		default:
			return nil, d.errorf("invalid character %q after object value", d.b[d.i])
		}
	}
}

// findKey returns the index in the scratch stack of key k of the object
// whose members start at base, or -1.
func (d *decoder) findKey(base int, k string) int {
	for i := base; i < len(d.keys); i++ {
		if d.keys[i] == k {
			return i
		}
	}
	return -1
}

// array parses an array; the cursor is at '['.
func (d *decoder) array(depth int) (any, error) {
	d.i++
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return []any{}, nil
	}
	base := len(d.vals)
	for {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		d.vals = append(d.vals, v)
		d.skipSpace()
		if d.i >= len(d.b) {
			return nil, errEnd
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.skipSpace()
		case ']':
			d.i++
			a := make([]any, len(d.vals)-base)
			copy(a, d.vals[base:])
			clear(d.vals[base:])
			d.vals = d.vals[:base]
			return a, nil
		default:
			return nil, d.errorf("invalid character %q after array element", d.b[d.i])
		}
	}
}

// number parses a number with JSON's grammar.
func (d *decoder) number() (any, error) {
	start := d.i
	neg := false
	if d.b[d.i] == '-' {
		neg = true
		d.i++
	}
	if d.i >= len(d.b) {
		return nil, errEnd
	}
	// Integer part: 0 or [1-9][0-9]*.
	var mant uint64
	digits := 0
	switch c := d.b[d.i]; {
	case c == '0':
		d.i++
		digits = 1
	case c >= '1' && c <= '9':
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			mant = mant*10 + uint64(d.b[d.i]-'0')
			digits++
			d.i++
			if digits > 18 {
				mant = 0
			}
		}
	default:
		return nil, d.errorf("invalid character %q in number", c)
	}
	simple := true
	if d.i < len(d.b) && d.b[d.i] == '.' {
		simple = false
		d.i++
		if !d.digits() {
			return nil, d.errorf("expected digit after decimal point")
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		simple = false
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if !d.digits() {
			return nil, d.errorf("expected digit in exponent")
		}
	}
	// Integers of up to 15 digits are exact in a float64.
	if simple && digits <= 15 {
		if !neg && mant < uint64(len(smallInts)) {
			return smallInts[mant], nil
		}
		f := float64(mant)
		if neg {
			f = -f
		}
		return f, nil
	}
	f, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
	if err != nil {
		// Out of range: ParseFloat returns ±Inf, which JSON cannot carry.
		return nil, fmt.Errorf("json: offset %d: number %s out of range", start, d.b[start:d.i])
	}
	return f, nil
}

// digits consumes one or more decimal digits and reports whether there was one.
func (d *decoder) digits() bool {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// str parses a string; the cursor is at its opening quote.
func (d *decoder) str() (string, error) {
	d.i++
	start := d.i
	ascii := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if !ascii && !utf8.Valid(s) {
				return string(fixUTF8(nil, s)), nil
			}
			return d.s[start : d.i-1], nil
		case c == '\\':
			return d.strSlow(start)
		case c < 0x20:
			return "", d.errorf("invalid control character %q in string", c)
		case c >= 0x80:
			ascii = false
		}
		d.i++
	}
	return "", errEnd
}

// strSlow finishes a string that has escapes, from its first byte at start.
func (d *decoder) strSlow(start int) (string, error) {
	buf := make([]byte, 0, d.i-start+16)
	buf = fixUTF8(buf, d.b[start:d.i])
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(buf), nil
		case c < 0x20:
			return "", d.errorf("invalid control character %q in string", c)
		case c != '\\':
			j := d.i
			for j < len(d.b) && d.b[j] != '"' && d.b[j] != '\\' && d.b[j] >= 0x20 {
				j++
			}
			buf = fixUTF8(buf, d.b[d.i:j])
			d.i = j
			continue
		}
		d.i++
		if d.i >= len(d.b) {
			return "", errEnd
		}
		e := d.b[d.i]
		d.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", d.errorf("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					lo, ok := d.hex4()
					if !ok {
						return "", d.errorf("invalid \\u escape")
					}
					if r2 = utf16.DecodeRune(r, lo); r2 == utf8.RuneError {
						d.i = save // an unpaired surrogate; decode the next escape on its own
					}
				}
				r = r2
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", d.errorf("invalid escape \\%c", e)
		}
	}
	return "", errEnd
}

// hex4 reads four hex digits.
func (d *decoder) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}

// fixUTF8 appends s to buf with each invalid UTF-8 byte replaced by U+FFFD.
func fixUTF8(buf, s []byte) []byte {
	for len(s) > 0 {
		if s[0] < utf8.RuneSelf {
			buf = append(buf, s[0])
			s = s[1:]
			continue
		}
		r, n := utf8.DecodeRune(s)
		buf = utf8.AppendRune(buf, r)
		s = s[n:]
	}
	return buf
}
