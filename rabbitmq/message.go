package rabbitmq

import (
	"encoding/binary"
	"strconv"

	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// A message as a queue holds it: the body is the item's Body, and the
// item's Meta holds the rest, so that delivering it copies bytes and decodes
// nothing:
//
//	version   1 octet (1)
//	exchange  shortstr: the exchange it was published to
//	key       shortstr: its routing key
//	extra     uint16 count, then that many longstr (uint16 length): its
//	          other routing keys, from the CC and BCC headers; kept for
//	          dead-lettering, which re-routes by all of them (RB-12)
//	props     the rest: the content properties as encoded on the wire
const metaVersion = 1

// appendMeta appends a message's Meta.
func appendMeta(dst []byte, exchange, key string, extra []string, props []byte) []byte {
	dst = append(dst, metaVersion)
	dst = append(dst, byte(len(exchange)))
	dst = append(dst, exchange...)
	dst = append(dst, byte(len(key)))
	dst = append(dst, key...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(extra)))
	for _, k := range extra {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(k)))
		dst = append(dst, k...)
	}
	return append(dst, props...)
}

// msgMeta is a parsed Meta; its slices alias it.
type msgMeta struct {
	exchange []byte
	key      []byte
	extra    []byte // the extra keys' section, after the count
	nextra   int
	props    []byte
}

// parseMeta parses a message's Meta; ok is false for one this version of
// lapse did not write.
func parseMeta(b []byte) (m msgMeta, ok bool) {
	if len(b) < 2 || b[0] != metaVersion {
		return m, false
	}
	i := 1
	short := func() []byte {
		if i >= len(b) || i+1+int(b[i]) > len(b) {
			ok = false
			return nil
		}
		s := b[i+1 : i+1+int(b[i])]
		i += 1 + int(b[i])
		return s
	}
	ok = true
	m.exchange = short()
	m.key = short()
	if !ok || i+2 > len(b) {
		return m, false
	}
	m.nextra = int(binary.BigEndian.Uint16(b[i:]))
	i += 2
	start := i
	for n := 0; n < m.nextra; n++ {
		if i+2 > len(b) {
			return m, false
		}
		l := int(binary.BigEndian.Uint16(b[i:]))
		if i+2+l > len(b) {
			return m, false
		}
		i += 2 + l
	}
	m.extra = b[start:i]
	m.props = b[i:]
	return m, true
}

// keys returns the message's routing keys: its own, then the extra ones.
func (m *msgMeta) keys() []string {
	out := make([]string, 0, 1+m.nextra)
	out = append(out, string(m.key))
	for i, n := 0, 0; n < m.nextra; n++ {
		l := int(binary.BigEndian.Uint16(m.extra[i:]))
		out = append(out, string(m.extra[i+2:i+2+l]))
		i += 2 + l
	}
	return out
}

// headerRoutes returns the routing keys of a CC or BCC header: the strings
// of its array (rabbit_basic:header_routes).
func headerRoutes(headers map[string]any, name string) []string {
	arr, ok := headers[name].([]any)
	if !ok {
		return nil
	}
	var out []string
	for _, v := range arr {
		switch s := v.(type) {
		case string:
			out = append(out, s)
		case []byte:
			out = append(out, string(s))
		}
	}
	return out
}

// propsPriority reads the priority property from a message's encoded
// properties without decoding the rest (the fields before it are two
// shortstrs, a table with its length first, and an octet); ok is false
// when it is not set or cannot be read.
func propsPriority(props []byte) (p uint8, ok bool) {
	if len(props) < 2 {
		return 0, false
	}
	flags := binary.BigEndian.Uint16(props)
	if flags&wire.FlagPriority == 0 {
		return 0, false
	}
	i := 2
	for _, f := range [...]uint16{wire.FlagContentType, wire.FlagContentEncoding} {
		if flags&f != 0 {
			if i >= len(props) {
				return 0, false
			}
			i += 1 + int(props[i])
		}
	}
	if flags&wire.FlagHeaders != 0 {
		if i+4 > len(props) {
			return 0, false
		}
		i += 4 + int(binary.BigEndian.Uint32(props[i:]))
	}
	if flags&wire.FlagDeliveryMode != 0 {
		i++
	}
	if i < 0 || i >= len(props) {
		return 0, false
	}
	return props[i], true
}

// priorityGroup is the Group of a message in q (core.Policy.Priorities,
// RB-14): its priority, one above the queue's x-max-priority counting as
// that maximum and none as 0, which is "" (no group); "" too in a queue
// without priorities.
func (q *queue) priorityGroup(meta []byte) string {
	st := q.settings.Load()
	if st == nil || st.MaxPriority == nil {
		return ""
	}
	m, ok := parseMeta(meta)
	if !ok {
		return ""
	}
	p, _ := propsPriority(m.props)
	p = uint8(min(int64(p), *st.MaxPriority))
	if p == 0 {
		return ""
	}
	return strconv.Itoa(int(p))
}
