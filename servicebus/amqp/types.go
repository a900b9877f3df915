package amqp

import (
	"encoding/hex"
	"fmt"
)

// Symbol is the AMQP symbol type (§1.6.21): a symbolic value from a
// constrained domain, ASCII on the wire.
type Symbol string

// Char is the AMQP char type (§1.6.16): a single Unicode code point, sent as
// UTF-32BE.
type Char rune

// Decimal32 is the AMQP decimal32 type (§1.6.13), kept as its IEEE 754
// decimal32 bytes in wire order.
type Decimal32 [4]byte

// Decimal64 is the AMQP decimal64 type (§1.6.14), kept as its IEEE 754
// decimal64 bytes in wire order.
type Decimal64 [8]byte

// Decimal128 is the AMQP decimal128 type (§1.6.15), kept as its IEEE 754
// decimal128 bytes in wire order.
type Decimal128 [16]byte

// UUID is the AMQP uuid type (§1.6.18): an RFC 4122 UUID in network byte
// order, exactly as on the wire.
type UUID [16]byte

// String returns the canonical 8-4-4-4-12 lower-case hexadecimal form.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

// ParseUUID parses the canonical 8-4-4-4-12 hexadecimal form of a UUID, in
// upper or lower case, optionally wrapped in braces.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	if len(s) == 38 && s[0] == '{' && s[37] == '}' {
		s = s[1:37]
	}
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, fmt.Errorf("amqp: invalid UUID %q", s)
	}
	groups := [...]struct{ from, to, at int }{{0, 8, 0}, {9, 13, 4}, {14, 18, 6}, {19, 23, 8}, {24, 36, 10}}
	for _, g := range groups {
		if _, err := hex.Decode(u[g.at:], []byte(s[g.from:g.to])); err != nil {
			return UUID{}, fmt.Errorf("amqp: invalid UUID %q", s)
		}
	}
	return u, nil
}

// KV is one key/value pair of a [Map].
type KV struct {
	Key   any
	Value any
}

// Map is the AMQP map type (§1.6.23) as an ordered list of pairs, so that
// decoding and re-encoding keeps the sender's order and any key type.
type Map []KV

// Get returns the value of the first pair whose key is a string or [Symbol]
// equal to key.
func (m Map) Get(key string) (any, bool) {
	for _, kv := range m {
		if textKey(kv.Key, key) {
			return kv.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of the first pair whose key equals key and returns
// the map; a string and a [Symbol] with the same text count as equal, and the
// pair then takes the new key. Without such a pair Set appends one.
func (m Map) Set(key any, v any) Map {
	for i, kv := range m {
		if keysEqual(kv.Key, key) {
			m[i] = KV{Key: key, Value: v}
			return m
		}
	}
	return append(m, KV{Key: key, Value: v})
}

// Delete removes every pair whose key is a string or [Symbol] equal to key
// and returns the shortened map.
func (m Map) Delete(key string) Map {
	out := m[:0]
	for _, kv := range m {
		if !textKey(kv.Key, key) {
			out = append(out, kv)
		}
	}
	clear(m[len(out):])
	return out
}

func textKey(k any, s string) bool {
	switch k := k.(type) {
	case string:
		return k == s
	case Symbol:
		return string(k) == s
	}
	return false
}

func keysEqual(a, b any) bool {
	switch b := b.(type) {
	case string:
		return textKey(a, b)
	case Symbol:
		return textKey(a, string(b))
	case []byte:
		a, ok := a.([]byte)
		return ok && string(a) == string(b)
	case uint64, uint32, uint16, uint8, int64, int32, int16, int8, bool, UUID, Char,
		float32, float64, Decimal32, Decimal64, Decimal128:
		return a == b
	}
	return false
}

// Described is an AMQP described type (§1.2) whose descriptor the codec does
// not know: Descriptor is a uint64 or a [Symbol], Value the described value.
type Described struct {
	Descriptor any
	Value      any
}

// Array is an AMQP array (§1.6.24) whose elements do not map to a typed Go
// slice, such as described values, lists or maps. Constructor holds the raw
// element constructor (for described elements, 0x00, the descriptor and the
// primitive format code) and Items the element values without it.
type Array struct {
	Constructor []byte
	Items       []any
}
