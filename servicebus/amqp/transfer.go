package amqp

// Transfer is the AMQP 1.0 transfer performative (§2.7.5), which carries
// (part of) a message; the message bytes follow it in the frame as
// [Frame.Payload].
type Transfer struct {
	// Handle is the link the delivery is on.
	Handle uint32
	// DeliveryID is the delivery-id; set on a delivery's first transfer.
	DeliveryID *uint32
	// DeliveryTag is the delivery-tag; set on a delivery's first transfer.
	DeliveryTag []byte
	// MessageFormat is the message format; nil means absent, read as 0 on
	// a first transfer. Service Bus batches use MessageFormatBatch.
	MessageFormat *uint32
	// Settled says the sender settled the delivery; nil (absent) on a
	// continuation frame means unchanged, on a first frame false.
	Settled *bool
	// More says further transfers of this delivery follow.
	More bool
	// RcvSettleMode overrides the link's receiver settle mode for this
	// delivery, if set.
	RcvSettleMode *uint8
	// State is the delivery state, for resumed deliveries.
	State DeliveryState
	// Resume marks a delivery resumed after the link was re-attached.
	Resume bool
	// Aborted says the sender abandoned the delivery; drop its transfers.
	Aborted bool
	// Batchable says the receiver may delay its disposition.
	Batchable bool
}

// Disposition is the AMQP 1.0 disposition performative (§2.7.6), which
// updates the state of the deliveries First through Last (or just First).
type Disposition struct {
	// Role is the role of the sender of the disposition: RoleReceiver when
	// a receiver settles, RoleSender when a sender does.
	Role bool
	// First and Last delimit the range of delivery-ids; nil Last means
	// just First.
	First uint32
	Last  *uint32
	// Settled says the sender of the disposition settles the deliveries.
	Settled bool
	// State is the new delivery state, usually an outcome.
	State     DeliveryState
	Batchable bool
}

// Descriptor returns the numeric descriptor of transfer, 0x14.
func (*Transfer) Descriptor() uint64 { return descTransfer }

// Descriptor returns the numeric descriptor of disposition, 0x15.
func (*Disposition) Descriptor() uint64 { return descDisposition }

// AppendTo appends the encoded transfer to dst; nil encodes as null.
func (t *Transfer) AppendTo(dst []byte) ([]byte, error) {
	if t == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descTransfer)
	w.uint(t.Handle)
	w.uintPtr(t.DeliveryID)
	w.binary(t.DeliveryTag)
	w.uintPtr(t.MessageFormat)
	w.boolPtr(t.Settled)
	w.flag(t.More)
	w.ubytePtr(t.RcvSettleMode)
	w.value(t.State)
	w.flag(t.Resume)
	w.flag(t.Aborted)
	w.flag(t.Batchable)
	return w.finish()
}

// transferSlab holds a decoded Transfer and the values its pointer fields
// point to, so that decoding one costs a single allocation.
type transferSlab struct {
	t                         Transfer
	deliveryID, messageFormat uint32
	settled                   bool
	rcvSettleMode             uint8
}

func (s *transferSlab) decodeFields(f *fields) {
	t := &s.t
	var ok bool
	if t.Handle, ok = f.uint(); !ok {
		f.missing("handle")
	}
	if s.deliveryID, ok = f.uint(); ok {
		t.DeliveryID = &s.deliveryID
	}
	t.DeliveryTag = f.binary()
	if s.messageFormat, ok = f.uint(); ok {
		t.MessageFormat = &s.messageFormat
	}
	if s.settled, ok = get(f, isBool, (*decoder).boolBody); ok {
		t.Settled = &s.settled
	}
	t.More = f.bool()
	if s.rcvSettleMode, ok = f.ubyte(); ok {
		t.RcvSettleMode = &s.rcvSettleMode
	}
	t.State = f.deliveryState()
	t.Resume = f.bool()
	t.Aborted = f.bool()
	t.Batchable = f.bool()
}

func (t *Transfer) decodeFields(f *fields) {
	s := new(transferSlab)
	s.decodeFields(f)
	*t = s.t
}

// AppendTo appends the encoded disposition to dst; nil encodes as null.
func (d *Disposition) AppendTo(dst []byte) ([]byte, error) {
	if d == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descDisposition)
	w.bool(d.Role)
	w.uint(d.First)
	w.uintPtr(d.Last)
	w.flag(d.Settled)
	w.value(d.State)
	w.flag(d.Batchable)
	return w.finish()
}

func (d *Disposition) decodeFields(f *fields) {
	if r := f.boolPtr(); r != nil {
		d.Role = *r
	} else {
		f.missing("role")
	}
	var ok bool
	if d.First, ok = f.uint(); !ok {
		f.missing("first")
	}
	d.Last = f.uintPtr()
	d.Settled = f.bool()
	d.State = f.deliveryState()
	d.Batchable = f.bool()
}
