package amqp

import (
	"fmt"
	"time"
)

// MessageFormatBatch is the message-format (§2.7.5) of a Service Bus batch:
// a message whose body is one data section per encoded inner message.
const MessageFormatBatch uint32 = 0x80013700

// Message is an AMQP message (§3.2): its sections, decoded. A nil pointer
// or map means the section is absent.
type Message struct {
	Header                *Header
	DeliveryAnnotations   Map
	MessageAnnotations    Map
	Properties            *Properties
	ApplicationProperties Map
	// Data holds the body's data sections (§3.2.6), one entry each.
	Data [][]byte
	// Value is the body's amqp-value section (§3.2.8), if HasValue; a null
	// value is legal, so HasValue tells whether the section was present.
	// Encoding writes a non-nil Value even when HasValue is false.
	Value    any
	HasValue bool
	// Sequence holds the body's amqp-sequence sections (§3.2.7).
	Sequence [][]any
	Footer   Map
}

// Header is the header section of a message (§3.2.1).
type Header struct {
	Durable bool
	// Priority is the message priority; nil means absent, read as 4.
	Priority *uint8
	// TTL is the time to live in milliseconds; nil means absent, no expiry.
	TTL           *uint32
	FirstAcquirer bool
	DeliveryCount uint32
}

// Properties is the properties section of a message (§3.2.4). Empty strings
// and symbols, and zero times, mean absent.
type Properties struct {
	// MessageID is a uint64, [UUID], []byte or string (§3.2.11), or nil.
	MessageID any
	UserID    []byte
	To        string
	Subject   string
	ReplyTo   string
	// CorrelationID is a uint64, [UUID], []byte or string, or nil.
	CorrelationID      any
	ContentType        Symbol
	ContentEncoding    Symbol
	AbsoluteExpiryTime time.Time
	CreationTime       time.Time
	GroupID            string
	GroupSequence      *uint32
	ReplyToGroupID     string
}

// Descriptor returns the numeric descriptor of the header section, 0x70.
func (*Header) Descriptor() uint64 { return descHeader }

// Descriptor returns the numeric descriptor of the properties section, 0x73.
func (*Properties) Descriptor() uint64 { return descProperties }

// AppendTo appends the encoded header section to dst; a nil *Header
// encodes as null (AppendMessage leaves an absent section out). Fields at
// their defaults are left out.
func (h *Header) AppendTo(dst []byte) ([]byte, error) {
	return h.appendTo(dst, false)
}

// AppendCounted appends the encoded header section to dst like AppendTo,
// but writes delivery-count even at its default of 0, as a broker does on
// the messages it delivers: some clients read the field as it is on the
// wire (@azure/service-bus reports an absent one as undefined).
func (h *Header) AppendCounted(dst []byte) ([]byte, error) {
	return h.appendTo(dst, true)
}

func (h *Header) appendTo(dst []byte, counted bool) ([]byte, error) {
	if h == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descHeader)
	w.flag(h.Durable)
	w.ubytePtr(h.Priority)
	w.uintPtr(h.TTL)
	w.flag(h.FirstAcquirer)
	if counted {
		w.uint(h.DeliveryCount)
	} else {
		w.optUint(h.DeliveryCount)
	}
	return w.finish()
}

func (h *Header) decodeFields(f *fields) {
	h.Durable = f.bool()
	h.Priority = f.ubytePtr()
	h.TTL = f.uintPtr()
	h.FirstAcquirer = f.bool()
	h.DeliveryCount, _ = f.uint()
}

// AppendTo appends the encoded properties section to dst; a nil *Properties
// encodes as null (AppendMessage leaves an absent section out).
func (p *Properties) AppendTo(dst []byte) ([]byte, error) {
	if p == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descProperties)
	w.value(p.MessageID)
	w.binary(p.UserID)
	w.optString(p.To)
	w.optString(p.Subject)
	w.optString(p.ReplyTo)
	w.value(p.CorrelationID)
	w.optSymbol(p.ContentType)
	w.optSymbol(p.ContentEncoding)
	w.timestamp(p.AbsoluteExpiryTime)
	w.timestamp(p.CreationTime)
	w.optString(p.GroupID)
	w.uintPtr(p.GroupSequence)
	w.optString(p.ReplyToGroupID)
	return w.finish()
}

func (p *Properties) decodeFields(f *fields) {
	p.MessageID = f.any()
	p.UserID = f.binary()
	p.To, _ = f.string()
	p.Subject, _ = f.string()
	p.ReplyTo, _ = f.string()
	p.CorrelationID = f.any()
	p.ContentType, _ = f.symbol()
	p.ContentEncoding, _ = f.symbol()
	p.AbsoluteExpiryTime = f.timestamp()
	p.CreationTime = f.timestamp()
	p.GroupID, _ = f.string()
	p.GroupSequence = f.uintPtr()
	p.ReplyToGroupID, _ = f.string()
}

// MarshalBinary encodes the message as its sections in the order §3.2
// gives; see [AppendMessage].
func (m *Message) MarshalBinary() ([]byte, error) {
	return AppendMessage(nil, m)
}

// AppendMessage appends the encoded sections of m to dst. A message whose
// body mixes data, amqp-sequence and amqp-value sections is an error.
func AppendMessage(dst []byte, m *Message) ([]byte, error) {
	start := len(dst)
	hasValue := m.HasValue || m.Value != nil
	kinds := 0
	for _, has := range []bool{len(m.Data) > 0, len(m.Sequence) > 0, hasValue} {
		if has {
			kinds++
		}
	}
	if kinds > 1 {
		return dst, fmt.Errorf("amqp: a message body is data, amqp-sequence or amqp-value sections, not a mix")
	}
	var err error
	if m.Header != nil {
		if dst, err = m.Header.AppendTo(dst); err != nil {
			return dst[:start], err
		}
	}
	dst, err = appendMapSection(dst, descDeliveryAnnots, m.DeliveryAnnotations, err)
	dst, err = appendMapSection(dst, descMessageAnnots, m.MessageAnnotations, err)
	if err != nil {
		return dst[:start], err
	}
	if m.Properties != nil {
		if dst, err = m.Properties.AppendTo(dst); err != nil {
			return dst[:start], err
		}
	}
	dst, err = appendMapSection(dst, descApplicationProp, m.ApplicationProperties, err)
	if err != nil {
		return dst[:start], err
	}
	for _, d := range m.Data {
		dst = appendBinary(appendUlong(append(dst, codeDescribed), descData), d)
	}
	for _, s := range m.Sequence {
		dst = appendUlong(append(dst, codeDescribed), descAMQPSequence)
		if dst, err = appendList(dst, s, 1, auto); err != nil {
			return dst[:start], err
		}
	}
	if hasValue {
		dst = appendUlong(append(dst, codeDescribed), descAMQPValue)
		if dst, err = appendValue(dst, m.Value, 1); err != nil {
			return dst[:start], err
		}
	}
	dst, err = appendMapSection(dst, descFooter, m.Footer, err)
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// appendMapSection appends a map section unless m is nil or err is set.
func appendMapSection(dst []byte, code uint64, m Map, err error) ([]byte, error) {
	if err != nil || m == nil {
		return dst, err
	}
	return appendMap(appendUlong(append(dst, codeDescribed), code), m, 1, auto)
}

// UnmarshalMessage decodes an encoded message, such as the payload of a
// delivery's transfers. Sections must come in the order §3.2 gives, each
// once (data and amqp-sequence may repeat), and the body must be of one
// kind. The result does not alias b.
func UnmarshalMessage(b []byte) (*Message, error) {
	m := new(Message)
	d := decoder{b: b}
	var last uint64
	for len(d.b) > 0 {
		c, err := d.byte()
		if err != nil {
			return nil, err
		}
		if c != codeDescribed {
			return nil, decodeErrorf("message section with format code 0x%02x, want a described section", c)
		}
		_, code, _, err := d.descriptorCode()
		if err != nil {
			return nil, err
		}
		if code < descHeader || code > descFooter {
			return nil, decodeErrorf("unknown message section 0x%x", code)
		}
		repeatable := code == descData || code == descAMQPSequence
		if code < last || code == last && !repeatable {
			return nil, decodeErrorf("message section 0x%x after section 0x%x", code, last)
		}
		if last >= descData && last <= descAMQPValue && code <= descAMQPValue && code != last {
			return nil, decodeErrorf("message body mixes sections 0x%x and 0x%x", last, code)
		}
		last = code
		sub := decoder{b: d.b, depth: 1}
		if err := m.decodeSection(&sub, code); err != nil {
			return nil, err
		}
		d.b = sub.b
	}
	return m, nil
}

// decodeSection decodes the value of the section with descriptor code.
func (m *Message) decodeSection(d *decoder, code uint64) error {
	var err error
	switch code {
	case descHeader:
		m.Header = new(Header)
		return d.decodeList(m.Header)
	case descProperties:
		m.Properties = new(Properties)
		return d.decodeList(m.Properties)
	case descAMQPValue:
		m.Value, err = d.value()
		m.HasValue = true
		return err
	}
	c, err := d.byte()
	if err != nil {
		return err
	}
	switch code {
	case descDeliveryAnnots, descMessageAnnots, descApplicationProp, descFooter:
		if !isMap(c) {
			return decodeErrorf("message section 0x%x with format code 0x%02x, want a map", code, c)
		}
		v, err := d.mapBody(c)
		switch code {
		case descDeliveryAnnots:
			m.DeliveryAnnotations = v
		case descMessageAnnots:
			m.MessageAnnotations = v
		case descApplicationProp:
			m.ApplicationProperties = v
		default:
			m.Footer = v
		}
		return err
	case descData:
		if !isBinary(c) {
			return decodeErrorf("data section with format code 0x%02x, want binary", c)
		}
		v, err := d.binaryBody(c)
		m.Data = append(m.Data, v)
		return err
	default: // descAMQPSequence
		if c != codeList0 && c != codeList8 && c != codeList32 {
			return decodeErrorf("amqp-sequence section with format code 0x%02x, want a list", c)
		}
		v, err := d.listBody(c)
		m.Sequence = append(m.Sequence, v)
		return err
	}
}
