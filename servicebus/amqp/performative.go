package amqp

// Performative is the body of a frame: one of the AMQP transport
// performatives (§2.7) or a SASL frame body (§5.3.3).
type Performative interface {
	// Descriptor returns the numeric descriptor code, such as 0x10 for open.
	Descriptor() uint64
	// AppendTo appends the encoded performative to dst.
	AppendTo(dst []byte) ([]byte, error)
}

// Role values of attach and disposition (§2.8.1).
const (
	RoleSender   = false
	RoleReceiver = true
)

// Sender settle modes (§2.8.2).
const (
	SndUnsettled uint8 = 0 // the sender sends every delivery unsettled
	SndSettled   uint8 = 1 // the sender sends every delivery settled
	SndMixed     uint8 = 2 // the sender chooses per delivery (the default)
)

// Receiver settle modes (§2.8.3).
const (
	RcvFirst  uint8 = 0 // the receiver settles first (the default)
	RcvSecond uint8 = 1 // the receiver settles after the sender does
)

// ReadPerformative decodes one performative or SASL frame body from the
// start of b, with a numeric or symbolic descriptor, and returns it with the
// number of bytes it took.
func ReadPerformative(b []byte) (Performative, int, error) {
	d := decoder{b: b}
	c, err := d.byte()
	if err != nil {
		return nil, 0, err
	}
	if c != codeDescribed {
		return nil, 0, decodeErrorf("frame body with format code 0x%02x, want a described performative", c)
	}
	desc, code, known, err := d.descriptorCode()
	if err != nil {
		return nil, 0, err
	}
	if !known {
		return nil, 0, decodeErrorf("frame body with unknown descriptor %v", desc)
	}
	var p Performative
	var fd fieldDecoder
	switch code {
	case descTransfer:
		s := new(transferSlab)
		p, fd = &s.t, s
	case descFlow:
		s := new(flowSlab)
		p, fd = &s.fl, s
	default:
		if p = newPerformative(code); p == nil {
			return nil, 0, decodeErrorf("frame body with unknown descriptor %v", desc)
		}
		fd = p.(fieldDecoder)
	}
	if err := d.decodeList(fd); err != nil {
		return nil, 0, err
	}
	return p, len(b) - len(d.b), nil
}

// newPerformative returns a zero performative for a descriptor code, nil for
// other codes.
func newPerformative(code uint64) Performative {
	switch code {
	case descOpen:
		return new(Open)
	case descBegin:
		return new(Begin)
	case descAttach:
		return new(Attach)
	case descFlow:
		return new(Flow)
	case descTransfer:
		return new(Transfer)
	case descDisposition:
		return new(Disposition)
	case descDetach:
		return new(Detach)
	case descEnd:
		return new(End)
	case descClose:
		return new(Close)
	case descSASLMechanisms:
		return new(SASLMechanisms)
	case descSASLInit:
		return new(SASLInit)
	case descSASLChallenge:
		return new(SASLChallenge)
	case descSASLResponse:
		return new(SASLResponse)
	case descSASLOutcome:
		return new(SASLOutcome)
	}
	return nil
}
