package query

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the JSON text of v to dst and returns the result.
// Objects keep their property order. A property whose value is Undefined is
// left out, and so is an Undefined array element (the service's arrays and
// objects never hold undefined: the element after it takes its place);
// Undefined at the top level appends nothing. Numbers print as JavaScript
// prints them, which is what the service does: the shortest digits that read
// back the same, integral numbers below 1e21 without exponent or fraction
// (3, -17, 1234567890123, 2^60 as 1152921504606847000; -0 as 0), others
// with an exponent below 1e-6 or from 1e21 (1e-7, 1e+21). NaN and infinities, which
// JSON cannot carry, print as null. Strings are escaped like encoding/json
// without its HTML escaping.
func AppendJSON(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case float64:
		return appendNumber(dst, x)
	case string:
		return appendString(dst, x)
	case []any:
		dst = append(dst, '[')
		first := true
		for _, e := range x {
			if isUndef(e) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = AppendJSON(dst, e)
		}
		return append(dst, ']')
	case *Object:
		dst = append(dst, '{')
		first := true
		for i, k := range x.Keys {
			if isUndef(x.Vals[i]) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = AppendJSON(dst, x.Vals[i])
		}
		return append(dst, '}')
	}
	return dst
}

// appendNumber appends f as a JSON number.
func appendNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	if f == math.Trunc(f) {
		if abs < 1<<53 {
			return strconv.AppendInt(dst, int64(f), 10)
		}
		if abs < 1e21 {
			// The shortest digits, then zeros: 2^60 is 1152921504606847000.
			return strconv.AppendFloat(dst, f, 'f', -1, 64)
		}
	}
	if abs < 1e-6 || abs >= 1e21 {
		n := len(dst)
		dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
		// Shorten e-07 to e-7, as JavaScript writes exponents.
		if m := len(dst); m-n >= 4 && dst[m-4] == 'e' && dst[m-3] == '-' && dst[m-2] == '0' {
			dst[m-2] = dst[m-1]
			dst = dst[:m-1]
		}
		return dst
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// hexDigits are the digits of \u escapes.
const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Control characters, the quote
// and the backslash are escaped, as are U+2028 and U+2029 (as
// encoding/json does); invalid UTF-8 becomes U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += n
			start = i
			continue
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
