package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"
)

// Decimal is a field table decimal value (§4.2.5.5, type 'D'): Value ×
// 10^-Scale.
type Decimal struct {
	Scale uint8
	Value int32
}

// Field is one name-value pair of an OrderedTable.
type Field struct {
	Key   string
	Value any
}

// OrderedTable is a field table (§4.2.5.5) whose fields are written in the
// slice's order rather than sorted, as RabbitMQ writes an x-death entry.
// Tables decode to map[string]any, except through ReadOrderedTable and
// DecodePropertiesOrdered, which keep the order of the wire.
type OrderedTable []Field

// AppendTable appends t as a field table (§4.2.5.5): its length as a long
// integer, then each field as a short-string name, a type octet and the
// value, in the sorted order of the names so that the encoding is
// deterministic. A nil or empty map gives an empty table.
//
// Values are written with RabbitMQ's field types: bool 't', int8 'b', uint8
// 'B', int16 's', uint16 'u', int32 'I', uint32 'i', int64, int, uint and
// uint64 'l' (a uint64 over math.MaxInt64 wraps negative), float32 'f',
// float64 'd', Decimal 'D', string 'S', []byte 'x', time.Time 'T' (whole
// seconds), map[string]any and OrderedTable 'F', []any, []string,
// []map[string]any and []OrderedTable 'A', nil 'V'. A value of any other
// type, and a table or array nested deeper than 100 levels, is written as
// 'V' void: an appending function cannot fail, so CheckTable is there to
// find such values first. Names longer than 255 octets are cut to 255.
func AppendTable(dst []byte, t map[string]any) []byte {
	return appendTable(dst, t, 1)
}

// appendTable appends t, a table at nesting depth depth.
func appendTable(dst []byte, t map[string]any, depth int) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	if len(t) > 0 {
		var small [32]string // sorts small tables without allocating
		keys := small[:0]
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			dst = appendShortstr(dst, k)
			dst = appendValue(dst, t[k], depth)
		}
	}
	return patchLength(dst, start)
}

// appendOrderedTable appends t in its own order.
func appendOrderedTable(dst []byte, t OrderedTable, depth int) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for _, f := range t {
		dst = appendShortstr(dst, f.Key)
		dst = appendValue(dst, f.Value, depth)
	}
	return patchLength(dst, start)
}

// patchLength writes the length of what follows the four octets at start
// into them.
func patchLength(dst []byte, start int) []byte {
	n := min(uint64(len(dst)-start-4), math.MaxUint32)
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	return dst
}

// appendValue appends a type octet and the value v, found in a table or
// array at nesting depth depth.
func appendValue(dst []byte, v any, depth int) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, 'V')
	case bool:
		if v {
			return append(dst, 't', 1)
		}
		return append(dst, 't', 0)
	case int8:
		return append(dst, 'b', byte(v))
	case uint8:
		return append(dst, 'B', v)
	case int16:
		return appendU16(append(dst, 's'), uint16(v))
	case uint16:
		return appendU16(append(dst, 'u'), v)
	case int32:
		return appendU32(append(dst, 'I'), uint32(v))
	case uint32:
		return appendU32(append(dst, 'i'), v)
	case int64:
		return appendU64(append(dst, 'l'), uint64(v))
	case int:
		return appendU64(append(dst, 'l'), uint64(v))
	case uint:
		return appendU64(append(dst, 'l'), uint64(v))
	case uint64:
		return appendU64(append(dst, 'l'), v)
	case float32:
		return appendU32(append(dst, 'f'), math.Float32bits(v))
	case float64:
		return appendU64(append(dst, 'd'), math.Float64bits(v))
	case Decimal:
		return appendU32(append(dst, 'D', v.Scale), uint32(v.Value))
	case string:
		return appendLongstr(append(dst, 'S'), v)
	case []byte:
		return appendLongbytes(append(dst, 'x'), v)
	case time.Time:
		return appendTimestamp(append(dst, 'T'), v)
	}
	if depth >= maxDepth {
		return append(dst, 'V')
	}
	switch v := v.(type) {
	case map[string]any:
		return appendTable(append(dst, 'F'), v, depth+1)
	case OrderedTable:
		return appendOrderedTable(append(dst, 'F'), v, depth+1)
	case []any:
		dst = append(dst, 'A')
		start := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		for _, e := range v {
			dst = appendValue(dst, e, depth+1)
		}
		return patchLength(dst, start)
	case []string:
		dst = append(dst, 'A')
		start := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		for _, e := range v {
			dst = appendLongstr(append(dst, 'S'), e)
		}
		return patchLength(dst, start)
	case []map[string]any:
		dst = append(dst, 'A')
		start := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		for _, e := range v {
			dst = appendValue(dst, e, depth+1)
		}
		return patchLength(dst, start)
	case []OrderedTable:
		dst = append(dst, 'A')
		start := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		for _, e := range v {
			dst = appendValue(dst, e, depth+1)
		}
		return patchLength(dst, start)
	}
	return append(dst, 'V')
}

// CheckTable reports the first value of t (or of a table or array inside
// it) that AppendTable cannot write as itself and would write as void: a
// value of an unsupported Go type, a name longer than 255 octets, or
// nesting deeper than 100 levels. It returns nil if t encodes faithfully.
func CheckTable(t map[string]any) error {
	return checkTable(t, 1, "")
}

// checkTable checks a table at depth depth whose path is path.
func checkTable(t map[string]any, depth int, path string) error {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := checkField(k, t[k], depth, path); err != nil {
			return err
		}
	}
	return nil
}

// checkField checks one field of a table at depth depth.
func checkField(k string, v any, depth int, path string) error {
	p := k
	if path != "" {
		p = path + "." + k
	}
	if len(k) > maxShortstr {
		return fmt.Errorf("wire: table field %q: name longer than 255 octets", p)
	}
	return checkValue(v, depth, p)
}

// checkValue checks v, held by a table or array at depth depth, whose path
// is path.
func checkValue(v any, depth int, path string) error {
	switch v.(type) {
	case nil, bool, int8, uint8, int16, uint16, int32, uint32, int64, int, uint, uint64,
		float32, float64, Decimal, string, []byte, time.Time:
		return nil
	case map[string]any, OrderedTable, []any, []string, []map[string]any, []OrderedTable:
		if depth >= maxDepth {
			return fmt.Errorf("wire: table field %q: nested deeper than %d levels", path, maxDepth)
		}
	default:
		return fmt.Errorf("wire: table field %q: type %T has no AMQP field type", path, v)
	}
	switch v := v.(type) {
	case map[string]any:
		return checkTable(v, depth+1, path)
	case OrderedTable:
		for _, f := range v {
			if err := checkField(f.Key, f.Value, depth+1, path); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := checkValue(e, depth+1, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case []map[string]any:
		for i, e := range v {
			if err := checkValue(e, depth+1, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case []OrderedTable:
		for i, e := range v {
			if err := checkValue(e, depth+1, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadTable decodes a field table (§4.2.5.5), length prefix included, from
// the front of b and returns it with the octets after it. Values decode to
// the Go types AppendTable writes: 't' bool, 'b' int8, 'B' uint8, 's' int16,
// 'u' uint16, 'I' int32, 'i' uint32, 'l' int64 (and 'L', which RabbitMQ
// also reads as a signed 64-bit integer), 'f' float32, 'd' float64, 'D'
// Decimal, 'S' string, 'x' []byte, 'A' []any, 'T' time.Time (UTC, whole
// seconds), 'F' map[string]any, 'V' nil. An empty table or array decodes to
// nil. Strings and byte arrays are copies: t does not alias b. A fault is an
// *Error with code 501 FRAME_ERROR.
func ReadTable(b []byte) (t map[string]any, rest []byte, err error) {
	c := cursor{b: b}
	t = c.table()
	if c.err != "" {
		return nil, nil, malformed("field table", c.err)
	}
	return t, c.b, nil
}

// ReadOrderedTable is ReadTable keeping the order of the wire: the table
// and every table nested in it decode as OrderedTable, so that encoding
// the result gives the same octets.
func ReadOrderedTable(b []byte) (t OrderedTable, rest []byte, err error) {
	c := cursor{b: b, ordered: true}
	t = c.orderedTable()
	if c.err != "" {
		return nil, nil, malformed("field table", c.err)
	}
	return t, c.b, nil
}

// table reads a field table with its length prefix.
func (c *cursor) table() map[string]any {
	b := c.longbytes("field table")
	if c.depth >= maxDepth {
		c.fail(fmt.Sprintf("field tables and arrays nest deeper than %d levels", maxDepth))
	}
	if c.err != "" || len(b) == 0 {
		return nil
	}
	sub := cursor{b: b, depth: c.depth + 1, ordered: c.ordered}
	t := make(map[string]any, countFields(b, true))
	for len(sub.b) > 0 {
		k := sub.shortstr()
		v := sub.value()
		if sub.err != "" {
			break
		}
		t[k] = v
	}
	if sub.err != "" {
		c.fail(sub.err)
		return nil
	}
	return t
}

// orderedTable reads a field table with its length prefix, in its order.
func (c *cursor) orderedTable() OrderedTable {
	b := c.longbytes("field table")
	if c.depth >= maxDepth {
		c.fail(fmt.Sprintf("field tables and arrays nest deeper than %d levels", maxDepth))
	}
	if c.err != "" || len(b) == 0 {
		return nil
	}
	sub := cursor{b: b, depth: c.depth + 1, ordered: true}
	t := make(OrderedTable, 0, countFields(b, true))
	for len(sub.b) > 0 {
		k := sub.shortstr()
		v := sub.value()
		if sub.err != "" {
			break
		}
		t = append(t, Field{Key: k, Value: v})
	}
	if sub.err != "" {
		c.fail(sub.err)
		return nil
	}
	return t
}

// array reads a field array ('A') with its length prefix.
func (c *cursor) array() []any {
	b := c.longbytes("field array")
	if c.depth >= maxDepth {
		c.fail(fmt.Sprintf("field tables and arrays nest deeper than %d levels", maxDepth))
	}
	if c.err != "" || len(b) == 0 {
		return nil
	}
	sub := cursor{b: b, depth: c.depth + 1, ordered: c.ordered}
	a := make([]any, 0, countFields(b, false))
	for len(sub.b) > 0 {
		v := sub.value()
		if sub.err != "" {
			break
		}
		a = append(a, v)
	}
	if sub.err != "" {
		c.fail(sub.err)
		return nil
	}
	return a
}

// countFields returns how many fields the content of a table (named, with
// a short-string name before each) or an array holds, skipping over nested
// values by their lengths, so that the decoder allocates its map or slice
// once and at the right size. It stops counting at the first fault, which
// decoding then reports.
func countFields(b []byte, named bool) int {
	n := 0
	for len(b) > 0 {
		if named {
			k := 1 + int(b[0])
			if k >= len(b) {
				return n
			}
			b = b[k:]
		}
		size := 0
		switch b[0] {
		case 'V':
		case 't', 'b', 'B':
			size = 1
		case 's', 'u':
			size = 2
		case 'I', 'i', 'f':
			size = 4
		case 'D':
			size = 5
		case 'l', 'L', 'd', 'T':
			size = 8
		case 'S', 'x', 'A', 'F':
			if len(b) < 5 {
				return n
			}
			l := uint64(binary.BigEndian.Uint32(b[1:]))
			if l > uint64(len(b)-5) {
				return n
			}
			size = 4 + int(l)
		default:
			return n
		}
		if 1+size > len(b) {
			return n
		}
		b = b[1+size:]
		n++
	}
	return n
}

// value reads a type octet and the field value it announces.
func (c *cursor) value() any {
	switch typ := c.u8(); typ {
	case 't':
		return c.u8() != 0
	case 'b':
		return int8(c.u8())
	case 'B':
		return c.u8()
	case 's':
		return int16(c.u16())
	case 'u':
		return c.u16()
	case 'I':
		return int32(c.u32())
	case 'i':
		return c.u32()
	case 'l', 'L':
		return int64(c.u64())
	case 'f':
		return math.Float32frombits(c.u32())
	case 'd':
		return math.Float64frombits(c.u64())
	case 'D':
		scale := c.u8()
		return Decimal{Scale: scale, Value: int32(c.u32())}
	case 'S':
		return c.longstr()
	case 'x':
		b := c.longbytes("byte array")
		if len(b) == 0 {
			return []byte(nil)
		}
		return append([]byte(nil), b...)
	case 'A':
		return c.array()
	case 'T':
		return c.timestamp()
	case 'F':
		if c.ordered {
			return c.orderedTable()
		}
		return c.table()
	case 'V':
		return nil
	default:
		if c.err == "" {
			c.fail(fmt.Sprintf("unknown field type %q", typ))
		}
		return nil
	}
}
