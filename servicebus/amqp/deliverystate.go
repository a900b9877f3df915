package amqp

// DeliveryState is the state of a delivery (§2.6.12, §3.4): a *Received, an
// outcome (*Accepted, *Rejected, *Released, *Modified), or a *Described for
// states this package does not model, such as transactional-state (§4.5.5).
type DeliveryState interface {
	AppendTo(dst []byte) ([]byte, error)
	deliveryState()
}

// Received is the received delivery state (§3.4.1): how much of a partial
// delivery has arrived, for resuming it.
type Received struct {
	SectionNumber uint32
	SectionOffset uint64
}

// Accepted is the accepted outcome (§3.4.2).
type Accepted struct{}

// Rejected is the rejected outcome (§3.4.3), with the reason in Error.
type Rejected struct {
	Error *Error
}

// Released is the released outcome (§3.4.4).
type Released struct{}

// Modified is the modified outcome (§3.4.5): the message is released with
// changes to apply before it is delivered again.
type Modified struct {
	DeliveryFailed     bool
	UndeliverableHere  bool
	MessageAnnotations Map
}

func (*Received) deliveryState()  {}
func (*Accepted) deliveryState()  {}
func (*Rejected) deliveryState()  {}
func (*Released) deliveryState()  {}
func (*Modified) deliveryState()  {}
func (*Described) deliveryState() {}

// Descriptor returns the numeric descriptor of received, 0x23.
func (*Received) Descriptor() uint64 { return descReceived }

// Descriptor returns the numeric descriptor of accepted, 0x24.
func (*Accepted) Descriptor() uint64 { return descAccepted }

// Descriptor returns the numeric descriptor of rejected, 0x25.
func (*Rejected) Descriptor() uint64 { return descRejected }

// Descriptor returns the numeric descriptor of released, 0x26.
func (*Released) Descriptor() uint64 { return descReleased }

// Descriptor returns the numeric descriptor of modified, 0x27.
func (*Modified) Descriptor() uint64 { return descModified }

// AppendTo appends the encoded state to dst; nil encodes as null.
func (s *Received) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descReceived)
	w.uint(s.SectionNumber)
	w.ulong(s.SectionOffset)
	return w.finish()
}

// AppendTo appends the encoded outcome to dst; nil encodes as null.
func (s *Accepted) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descAccepted)
	return w.finish()
}

// AppendTo appends the encoded outcome to dst; nil encodes as null.
func (s *Rejected) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descRejected)
	w.value(s.Error)
	return w.finish()
}

// AppendTo appends the encoded outcome to dst; nil encodes as null.
func (s *Released) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descReleased)
	return w.finish()
}

// AppendTo appends the encoded outcome to dst; nil encodes as null.
func (s *Modified) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descModified)
	w.flag(s.DeliveryFailed)
	w.flag(s.UndeliverableHere)
	w.mapv(s.MessageAnnotations)
	return w.finish()
}

// AppendTo appends the encoded described value to dst; nil encodes as null.
func (v *Described) AppendTo(dst []byte) ([]byte, error) {
	if v == nil {
		return append(dst, codeNull), nil
	}
	return appendDescribed(dst, *v, 0)
}

func (s *Received) decodeFields(f *fields) {
	var ok bool
	if s.SectionNumber, ok = f.uint(); !ok {
		f.missing("section-number")
	}
	if s.SectionOffset, ok = f.ulong(); !ok {
		f.missing("section-offset")
	}
}

func (*Accepted) decodeFields(*fields) {}

func (s *Rejected) decodeFields(f *fields) { s.Error = f.error() }

func (*Released) decodeFields(*fields) {}

func (s *Modified) decodeFields(f *fields) {
	s.DeliveryFailed = f.bool()
	s.UndeliverableHere = f.bool()
	s.MessageAnnotations = f.mapv()
}
