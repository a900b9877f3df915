package script

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// Encoding a script's values as JSON. A stored procedure that writes a
// hundred items hands each to its host as JSON, and goja's JSON.stringify
// quotes a string a rune at a time through a UTF-16 reader: a fifth of
// such a procedure's time went there. appendJSON writes the values that
// make up nearly every document (plain objects and arrays, strings,
// numbers, booleans and null) itself, and says when a value holds
// anything else (a toJSON method, a Date, a proxy, a lone surrogate, a
// BigInt, a cycle), for the caller to use JSON.stringify on the whole
// value: the output is JSON.stringify's either way.

// maxDepth is how deep appendJSON goes before it hands the value to
// JSON.stringify, which says whether it is a cycle.
const maxDepth = 64

// maxArray is the longest array appendJSON writes itself; a longer one
// (a sparse array's length, say) goes to JSON.stringify.
const maxArray = 1 << 20

var (
	typePlainObject = reflect.TypeOf(map[string]any(nil))
	typeArray       = reflect.TypeOf([]any(nil))
)

// encoder writes a sandbox's values as JSON. It runs as a native function
// of the sandbox, so that an exception a getter throws, or the run's time
// bound, stops it as it would stop JSON.stringify, wherever it is called
// from.
type encoder struct {
	call goja.Callable
	out  []byte
	size int // the last value's length, the next one's first capacity
}

func newEncoder(vm *goja.Runtime) *encoder {
	e := &encoder{}
	stringify, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	e.call, _ = goja.AssertFunction(vm.ToValue(func(c goja.FunctionCall) goja.Value {
		v := c.Argument(0)
		if b, ok := appendJSON(make([]byte, 0, e.size), v, 0); ok {
			if len(b) == 0 {
				b = nil // undefined
			}
			e.out, e.size = b, len(b)
			return goja.Undefined()
		}
		out, err := stringify(goja.Undefined(), v)
		if err != nil {
			panic(err) // the exception, thrown on
		}
		if !goja.IsUndefined(out) {
			e.out = []byte(out.String())
		}
		return goja.Undefined()
	}))
	return e
}

// encode returns v as JSON.stringify writes it, nil when it writes
// undefined (v is undefined, a function or a symbol). A JavaScript
// exception (a cycle, a BigInt, a getter that throws) is the error.
func (e *encoder) encode(v goja.Value) ([]byte, error) {
	e.out = nil
	if _, err := e.call(goja.Undefined(), v); err != nil {
		return nil, err
	}
	b := e.out
	e.out = nil
	return b, nil
}

// appendJSON appends v as JSON.stringify writes it. It returns b
// unchanged (nil when b was) for a value JSON.stringify writes as
// undefined, and false for one it leaves to JSON.stringify.
func appendJSON(b []byte, v goja.Value, depth int) ([]byte, bool) {
	if v == nil || goja.IsUndefined(v) {
		return b, true
	}
	if goja.IsNull(v) {
		return append(b, "null"...), true
	}
	switch x := v.(type) {
	case *goja.Symbol:
		return b, true
	case *goja.Object:
		return appendObject(b, x, depth)
	}
	switch x := v.Export().(type) {
	case bool:
		return strconv.AppendBool(b, x), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case float64:
		if goja.IsNaN(v) || goja.IsInfinity(v) {
			return append(b, "null"...), true
		}
		// JSON.stringify writes a number as ToString does.
		return append(b, v.String()...), true
	case string:
		// goja turns a lone surrogate into U+FFFD, which JSON.stringify
		// would write as an escape instead.
		if strings.Contains(x, "\uFFFD") {
			return b, false
		}
		return appendQuoted(b, x), true
	}
	return b, false // a BigInt, which JSON.stringify refuses
}

// appendObject appends a plain object or an array.
func appendObject(b []byte, o *goja.Object, depth int) ([]byte, bool) {
	if depth >= maxDepth {
		return b, false
	}
	// A plain object exports as a map, an array as a slice; a boxed
	// string exports as a map too, hence the class.
	t := o.ExportType()
	if (t == typePlainObject && o.ClassName() != "Object") || (t != typePlainObject && t != typeArray) {
		if _, ok := goja.AssertFunction(o); ok {
			return b, true
		}
		return b, false
	}
	if m := o.Get("toJSON"); m != nil && !goja.IsUndefined(m) {
		return b, false
	}
	if t == typeArray {
		n := o.Get("length").ToInteger()
		if n > maxArray {
			return b, false
		}
		b = append(b, '[')
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			mark := len(b)
			var ok bool
			if b, ok = appendJSON(b, o.Get(strconv.FormatInt(i, 10)), depth+1); !ok {
				return b, false
			}
			if len(b) == mark { // undefined, a function, a symbol
				b = append(b, "null"...)
			}
		}
		return append(b, ']'), true
	}
	b = append(b, '{')
	first := true
	for _, k := range o.Keys() {
		mark := len(b)
		if !first {
			b = append(b, ',')
		}
		b = append(appendQuoted(b, k), ':')
		keyEnd := len(b)
		var ok bool
		if b, ok = appendJSON(b, o.Get(k), depth+1); !ok {
			return b, false
		}
		if len(b) == keyEnd { // undefined, a function, a symbol: no member
			b = b[:mark]
			continue
		}
		first = false
	}
	return append(b, '}'), true
}

// appendQuoted appends s as a JSON string, escaped as JSON.stringify
// escapes it: the quote, the backslash and the control characters. (The
// query package's appendString also escapes U+2028 and U+2029, as
// encoding/json does, which JSON.stringify does not.)
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
