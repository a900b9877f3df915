package wire

import (
	"encoding/binary"
	"math"
	"time"
)

// maxShortstr is the longest short string (§4.2.5.3): its length is one
// octet.
const maxShortstr = 255

// maxDepth is how deeply field tables and arrays may nest (the outermost
// table is depth 1). The specification sets no limit; this one keeps a
// hostile frame from driving the decoder's recursion arbitrarily deep.
const maxDepth = 100

// cursor decodes AMQP data types (§4.2.5) from the front of b. A read past
// the end, or any other fault, records the first reason in err, empties b
// so that every later read fails fast and returns zero values: a decoder
// reads every field and checks err once at the end.
type cursor struct {
	b     []byte
	depth int // nesting of the table or array being read; 0 outside any
	err   string
	// ordered makes the tables nested in a table or array decode as
	// OrderedTable, in their order on the wire.
	ordered bool
}

// fail records reason unless a fault was recorded already, and stops the
// cursor.
func (c *cursor) fail(reason string) {
	if c.err == "" {
		c.err = reason
	}
	c.b = nil
}

// take returns the next n octets, aliasing the input.
func (c *cursor) take(n int, what string) []byte {
	if n < 0 || len(c.b) < n {
		c.fail(what + " runs past the end of the data")
		return nil
	}
	v := c.b[:n:n]
	c.b = c.b[n:]
	return v
}

// u8 reads an octet.
func (c *cursor) u8() uint8 {
	if len(c.b) < 1 {
		c.fail("octet runs past the end of the data")
		return 0
	}
	v := c.b[0]
	c.b = c.b[1:]
	return v
}

// u16 reads a short integer (§4.2.5.1, network byte order).
func (c *cursor) u16() uint16 {
	if len(c.b) < 2 {
		c.fail("short integer runs past the end of the data")
		return 0
	}
	v := binary.BigEndian.Uint16(c.b)
	c.b = c.b[2:]
	return v
}

// u32 reads a long integer.
func (c *cursor) u32() uint32 {
	if len(c.b) < 4 {
		c.fail("long integer runs past the end of the data")
		return 0
	}
	v := binary.BigEndian.Uint32(c.b)
	c.b = c.b[4:]
	return v
}

// u64 reads a long-long integer.
func (c *cursor) u64() uint64 {
	if len(c.b) < 8 {
		c.fail("long-long integer runs past the end of the data")
		return 0
	}
	v := binary.BigEndian.Uint64(c.b)
	c.b = c.b[8:]
	return v
}

// shortstr reads a short string (§4.2.5.3): an octet length and at most 255
// octets.
func (c *cursor) shortstr() string {
	n := int(c.u8())
	return string(c.take(n, "short string"))
}

// longbytes reads a long string's octets, aliasing the input. Its length is
// checked against the octets left before anything is done with it.
func (c *cursor) longbytes(what string) []byte {
	n := c.u32()
	if uint64(n) > uint64(len(c.b)) {
		c.fail(what + " runs past the end of the data")
		return nil
	}
	return c.take(int(n), what)
}

// longstr reads a long string (§4.2.5.3): a long length and that many
// octets.
func (c *cursor) longstr() string {
	return string(c.longbytes("long string"))
}

// timestamp reads a timestamp (§4.2.5.4): seconds since the Unix epoch as a
// long-long, in UTC.
func (c *cursor) timestamp() time.Time {
	return time.Unix(int64(c.u64()), 0).UTC()
}

// end records a fault if octets are left over: RabbitMQ matches a method's
// arguments exactly and rejects anything after them.
func (c *cursor) end() {
	if len(c.b) != 0 {
		c.fail("unexpected octets after the last field")
	}
}

// bit reports whether bit i of a packed bit octet is set (§4.2.5.2: the
// first bit field is the least significant bit).
func bit(f uint8, i uint) bool { return f&(1<<i) != 0 }

// bits packs consecutive bit fields into one octet, the first in the least
// significant bit (§4.2.5.2).
func bits(b ...bool) uint8 {
	var f uint8
	for i, v := range b {
		if v {
			f |= 1 << i
		}
	}
	return f
}

// appendU16 appends a short integer.
func appendU16(dst []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(dst, v) }

// appendU32 appends a long integer.
func appendU32(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }

// appendU64 appends a long-long integer.
func appendU64(dst []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(dst, v) }

// appendShortstr appends a short string. A string longer than 255 octets
// is cut to its first 255: an appending function cannot fail, and a frame
// with a wrong length would desynchronise the peer.
func appendShortstr(dst []byte, s string) []byte {
	if len(s) > maxShortstr {
		s = s[:maxShortstr]
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

// appendLongstr appends a long string.
func appendLongstr(dst []byte, s string) []byte {
	n := min(uint64(len(s)), math.MaxUint32)
	dst = appendU32(dst, uint32(n))
	return append(dst, s[:n]...)
}

// appendLongbytes appends a byte slice as a long string.
func appendLongbytes(dst []byte, b []byte) []byte {
	n := min(uint64(len(b)), math.MaxUint32)
	dst = appendU32(dst, uint32(n))
	return append(dst, b[:n]...)
}

// appendTimestamp appends a timestamp: whole seconds since the Unix epoch.
func appendTimestamp(dst []byte, t time.Time) []byte {
	return appendU64(dst, uint64(t.Unix()))
}
