package wire

import "time"

// Property flags of basic's content properties (§4.2.6.1, class basic in
// amqp0-9-1.xml): the first property is the most significant bit; bit 0 is
// the continuation flag and bit 1 is unused.
const (
	FlagContentType     uint16 = 1 << 15 // content-type
	FlagContentEncoding uint16 = 1 << 14 // content-encoding
	FlagHeaders         uint16 = 1 << 13 // headers
	FlagDeliveryMode    uint16 = 1 << 12 // delivery-mode
	FlagPriority        uint16 = 1 << 11 // priority
	FlagCorrelationID   uint16 = 1 << 10 // correlation-id
	FlagReplyTo         uint16 = 1 << 9  // reply-to
	FlagExpiration      uint16 = 1 << 8  // expiration
	FlagMessageID       uint16 = 1 << 7  // message-id
	FlagTimestamp       uint16 = 1 << 6  // timestamp
	FlagType            uint16 = 1 << 5  // type
	FlagUserID          uint16 = 1 << 4  // user-id
	FlagAppID           uint16 = 1 << 3  // app-id
	FlagClusterID       uint16 = 1 << 2  // cluster-id (reserved in 0-9-1)
)

// flagContinuation is the property flag that says another flags word
// follows (§4.2.6.1).
const flagContinuation uint16 = 1

// Properties are basic's content properties (class 60, §4.2.6.1). Flags
// records which properties are present, so that an empty string that was
// sent is told from one that was not; a decoded field whose flag is clear
// is zero.
type Properties struct {
	Flags           uint16
	ContentType     string
	ContentEncoding string
	Headers         map[string]any
	DeliveryMode    uint8
	Priority        uint8
	CorrelationID   string
	ReplyTo         string
	Expiration      string
	MessageID       string
	Timestamp       time.Time
	Type            string
	UserID          string
	AppID           string
	ClusterID       string
}

// DecodeProperties decodes a property flags word and the property list it
// announces (§4.2.6.1), such as ContentHeader.Props. Continuation flags
// words are read and must announce no property, since basic has only
// fourteen; a flag for an unknown property, a truncated property or octets
// after the last one are an *Error with code 501 FRAME_ERROR. The result
// does not alias b.
func DecodeProperties(b []byte) (Properties, error) {
	return decodeProperties(cursor{b: b})
}

// DecodePropertiesOrdered is DecodeProperties keeping the order of the
// wire in the tables nested in Headers: they decode as OrderedTable, so
// that a header written back goes out as it came (RabbitMQ passes nested
// tables through as it got them, and the order of an x-death entry's fields
// is visible to clients). Headers itself is a map.
func DecodePropertiesOrdered(b []byte) (Properties, error) {
	return decodeProperties(cursor{b: b, ordered: true})
}

func decodeProperties(c cursor) (Properties, error) {
	var p Properties
	f := c.u16()
	for w := f; w&flagContinuation != 0 && c.err == ""; {
		w = c.u16()
		if w&^flagContinuation != 0 {
			c.fail("property flag for an unknown property")
		}
	}
	if f&2 != 0 {
		c.fail("property flag bit 1 is set but names no property")
	}
	p.Flags = f &^ flagContinuation
	if f&FlagContentType != 0 {
		p.ContentType = c.shortstr()
	}
	if f&FlagContentEncoding != 0 {
		p.ContentEncoding = c.shortstr()
	}
	if f&FlagHeaders != 0 {
		p.Headers = c.table()
	}
	if f&FlagDeliveryMode != 0 {
		p.DeliveryMode = c.u8()
	}
	if f&FlagPriority != 0 {
		p.Priority = c.u8()
	}
	if f&FlagCorrelationID != 0 {
		p.CorrelationID = c.shortstr()
	}
	if f&FlagReplyTo != 0 {
		p.ReplyTo = c.shortstr()
	}
	if f&FlagExpiration != 0 {
		p.Expiration = c.shortstr()
	}
	if f&FlagMessageID != 0 {
		p.MessageID = c.shortstr()
	}
	if f&FlagTimestamp != 0 {
		p.Timestamp = c.timestamp()
	}
	if f&FlagType != 0 {
		p.Type = c.shortstr()
	}
	if f&FlagUserID != 0 {
		p.UserID = c.shortstr()
	}
	if f&FlagAppID != 0 {
		p.AppID = c.shortstr()
	}
	if f&FlagClusterID != 0 {
		p.ClusterID = c.shortstr()
	}
	c.end()
	if c.err != "" {
		return Properties{}, malformed("basic properties", c.err)
	}
	return p, nil
}

// Present returns the flags of the properties Append writes: those set in
// Flags and those of every field that is not zero (a non-empty string, a
// non-nil Headers map, a non-zero octet, a non-zero Timestamp).
func (p *Properties) Present() uint16 {
	f := p.Flags &^ (flagContinuation | 2)
	set := func(flag uint16, ok bool) {
		if ok {
			f |= flag
		}
	}
	set(FlagContentType, p.ContentType != "")
	set(FlagContentEncoding, p.ContentEncoding != "")
	set(FlagHeaders, p.Headers != nil)
	set(FlagDeliveryMode, p.DeliveryMode != 0)
	set(FlagPriority, p.Priority != 0)
	set(FlagCorrelationID, p.CorrelationID != "")
	set(FlagReplyTo, p.ReplyTo != "")
	set(FlagExpiration, p.Expiration != "")
	set(FlagMessageID, p.MessageID != "")
	set(FlagTimestamp, !p.Timestamp.IsZero())
	set(FlagType, p.Type != "")
	set(FlagUserID, p.UserID != "")
	set(FlagAppID, p.AppID != "")
	set(FlagClusterID, p.ClusterID != "")
	return f
}

// Append appends the property flags (see Present) and then each present
// property (§4.2.6.1), ready for AppendContent. The headers table is
// written as AppendTable writes it.
func (p *Properties) Append(dst []byte) []byte {
	f := p.Present()
	dst = appendU16(dst, f)
	if f&FlagContentType != 0 {
		dst = appendShortstr(dst, p.ContentType)
	}
	if f&FlagContentEncoding != 0 {
		dst = appendShortstr(dst, p.ContentEncoding)
	}
	if f&FlagHeaders != 0 {
		dst = AppendTable(dst, p.Headers)
	}
	if f&FlagDeliveryMode != 0 {
		dst = append(dst, p.DeliveryMode)
	}
	if f&FlagPriority != 0 {
		dst = append(dst, p.Priority)
	}
	if f&FlagCorrelationID != 0 {
		dst = appendShortstr(dst, p.CorrelationID)
	}
	if f&FlagReplyTo != 0 {
		dst = appendShortstr(dst, p.ReplyTo)
	}
	if f&FlagExpiration != 0 {
		dst = appendShortstr(dst, p.Expiration)
	}
	if f&FlagMessageID != 0 {
		dst = appendShortstr(dst, p.MessageID)
	}
	if f&FlagTimestamp != 0 {
		dst = appendTimestamp(dst, p.Timestamp)
	}
	if f&FlagType != 0 {
		dst = appendShortstr(dst, p.Type)
	}
	if f&FlagUserID != 0 {
		dst = appendShortstr(dst, p.UserID)
	}
	if f&FlagAppID != 0 {
		dst = appendShortstr(dst, p.AppID)
	}
	if f&FlagClusterID != 0 {
		dst = appendShortstr(dst, p.ClusterID)
	}
	return dst
}
