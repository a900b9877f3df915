package amqp

import "fmt"

// Section is one encoded section of a message (§3.2), kept as bytes so that
// a server can replace some sections and pass the others on untouched.
type Section struct {
	// Code is the section's numeric descriptor: 0x70 header, 0x71
	// delivery-annotations, 0x72 message-annotations, 0x73 properties, 0x74
	// application-properties, 0x75 data, 0x76 amqp-sequence, 0x77
	// amqp-value, 0x78 footer. A symbolic descriptor is reported by code.
	Code uint64
	// Raw is the whole encoded section, descriptor included; it aliases the
	// input of SplitSections.
	Raw []byte
}

// SplitSections splits an encoded message into its sections without
// decoding their values, checking that each is a known section whose value
// is of the right type, well formed and within b. Unlike [UnmarshalMessage]
// it does not check the order of the sections.
func SplitSections(b []byte) ([]Section, error) {
	d := decoder{b: b}
	var out []Section
	for len(d.b) > 0 {
		start := len(b) - len(d.b)
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
		sub := decoder{b: d.b, depth: 1}
		if code == descAMQPValue {
			err = sub.skip()
		} else if c, err = sub.byte(); err == nil {
			if !sectionAccepts(code, c) {
				return nil, decodeErrorf("message section 0x%x with format code 0x%02x", code, c)
			}
			err = sub.skipBody(c)
		}
		if err != nil {
			return nil, err
		}
		d.b = sub.b
		if out == nil {
			out = make([]Section, 0, 8)
		}
		out = append(out, Section{Code: code, Raw: b[start : len(b)-len(d.b) : len(b)-len(d.b)]})
	}
	return out, nil
}

// sectionAccepts reports whether a section with descriptor code, other than
// amqp-value, may have a value with format code c.
func sectionAccepts(code uint64, c byte) bool {
	switch code {
	case descHeader, descProperties, descAMQPSequence:
		return c == codeList0 || c == codeList8 || c == codeList32
	case descData:
		return isBinary(c)
	}
	return isMap(c)
}

// AppendSection appends one message section with descriptor code to dst: a
// *Header for 0x70, a *Properties for 0x73, a [Map] for the annotations,
// application-properties and footer, []byte for data, []any for
// amqp-sequence and any value for amqp-value.
func AppendSection(dst []byte, code uint64, v any) ([]byte, error) {
	ok := false
	switch code {
	case descHeader:
		if h, isHeader := v.(*Header); isHeader && h != nil {
			return h.AppendTo(dst)
		}
	case descProperties:
		if p, isProps := v.(*Properties); isProps && p != nil {
			return p.AppendTo(dst)
		}
	case descDeliveryAnnots, descMessageAnnots, descApplicationProp, descFooter:
		_, ok = v.(Map)
	case descData:
		_, ok = v.([]byte)
	case descAMQPSequence:
		_, ok = v.([]any)
	case descAMQPValue:
		ok = true
	}
	if !ok {
		return dst, fmt.Errorf("amqp: cannot write a %T as message section 0x%x", v, code)
	}
	start := len(dst)
	dst, err := appendValue(appendUlong(append(dst, codeDescribed), code), v, 1)
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}
