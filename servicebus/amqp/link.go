package amqp

// Attach is the AMQP 1.0 attach performative (§2.7.3), which attaches a
// link to a session.
type Attach struct {
	// Name is the link name; mandatory.
	Name string
	// Handle is the sender's handle for the link.
	Handle uint32
	// Role is RoleSender (false) or RoleReceiver (true).
	Role bool
	// SndSettleMode is SndUnsettled, SndSettled or SndMixed; nil means
	// absent, which the spec reads as mixed.
	SndSettleMode *uint8
	// RcvSettleMode is RcvFirst or RcvSecond; nil means absent, read as
	// first.
	RcvSettleMode *uint8
	// Source is the source terminus; nil encodes as null.
	Source *Source
	// Target is the target terminus; nil encodes as null, which a server
	// sends back to refuse a link to an unknown node.
	Target *Target
	// Coordinator is the target of a link to a transaction coordinator
	// (§4.5.1), in place of Target.
	Coordinator *Coordinator
	// Unsettled maps delivery tags to delivery states, for resuming.
	Unsettled Map
	// IncompleteUnsettled says Unsettled is not the whole map.
	IncompleteUnsettled bool
	// InitialDeliveryCount is the sender's initial delivery-count; the
	// sender must set it.
	InitialDeliveryCount *uint32
	// MaxMessageSize is the largest message the sender accepts; 0 means
	// absent, no limit.
	MaxMessageSize uint64
	// OfferedCapabilities are the extensions the sender supports.
	OfferedCapabilities []Symbol
	// DesiredCapabilities are the extensions the sender can use.
	DesiredCapabilities []Symbol
	// Properties are the link properties, keyed by symbol.
	Properties Map
}

// Flow is the AMQP 1.0 flow performative (§2.7.4), which updates session
// windows and, when Handle is set, a link's flow state.
type Flow struct {
	// NextIncomingID is the sender's next expected transfer-id; nil until
	// the sender has seen the peer's begin.
	NextIncomingID *uint32
	IncomingWindow uint32
	NextOutgoingID uint32
	OutgoingWindow uint32
	// Handle names the link the link fields below are about; nil for a
	// session-only flow.
	Handle        *uint32
	DeliveryCount *uint32
	LinkCredit    *uint32
	// Available is the number of messages the link's sender has ready.
	Available *uint32
	// Drain asks the sender to use up all credit now.
	Drain bool
	// Echo asks the peer to answer with its own flow state.
	Echo       bool
	Properties Map
}

// Detach is the AMQP 1.0 detach performative (§2.7.7), which detaches a
// link, closing it if Closed, with the reason in Error if it ends in error.
type Detach struct {
	Handle uint32
	Closed bool
	Error  *Error
}

// Descriptor returns the numeric descriptor of attach, 0x12.
func (*Attach) Descriptor() uint64 { return descAttach }

// Descriptor returns the numeric descriptor of flow, 0x13.
func (*Flow) Descriptor() uint64 { return descFlow }

// Descriptor returns the numeric descriptor of detach, 0x16.
func (*Detach) Descriptor() uint64 { return descDetach }

// AppendTo appends the encoded attach to dst; nil encodes as null.
func (a *Attach) AppendTo(dst []byte) ([]byte, error) {
	if a == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descAttach)
	w.string(a.Name)
	w.uint(a.Handle)
	w.bool(a.Role)
	w.ubytePtr(a.SndSettleMode)
	w.ubytePtr(a.RcvSettleMode)
	w.value(a.Source)
	if a.Coordinator != nil {
		w.value(a.Coordinator)
	} else {
		w.value(a.Target)
	}
	w.mapv(a.Unsettled)
	w.flag(a.IncompleteUnsettled)
	w.uintPtr(a.InitialDeliveryCount)
	if a.MaxMessageSize == 0 {
		w.null()
	} else {
		w.ulong(a.MaxMessageSize)
	}
	w.symbols(a.OfferedCapabilities)
	w.symbols(a.DesiredCapabilities)
	w.mapv(a.Properties)
	return w.finish()
}

func (a *Attach) decodeFields(f *fields) {
	var ok bool
	if a.Name, ok = f.string(); !ok {
		f.missing("name")
	}
	if a.Handle, ok = f.uint(); !ok {
		f.missing("handle")
	}
	if r := f.boolPtr(); r != nil {
		a.Role = *r
	} else {
		f.missing("role")
	}
	a.SndSettleMode = f.ubytePtr()
	a.RcvSettleMode = f.ubytePtr()
	a.Source = f.source()
	a.Target, a.Coordinator = f.targetOrCoordinator()
	a.Unsettled = f.mapv()
	a.IncompleteUnsettled = f.bool()
	a.InitialDeliveryCount = f.uintPtr()
	a.MaxMessageSize, _ = f.ulong()
	a.OfferedCapabilities = f.symbols()
	a.DesiredCapabilities = f.symbols()
	a.Properties = f.mapv()
}

// AppendTo appends the encoded flow to dst; nil encodes as null.
func (fl *Flow) AppendTo(dst []byte) ([]byte, error) {
	if fl == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descFlow)
	w.uintPtr(fl.NextIncomingID)
	w.uint(fl.IncomingWindow)
	w.uint(fl.NextOutgoingID)
	w.uint(fl.OutgoingWindow)
	w.uintPtr(fl.Handle)
	w.uintPtr(fl.DeliveryCount)
	w.uintPtr(fl.LinkCredit)
	w.uintPtr(fl.Available)
	w.flag(fl.Drain)
	w.flag(fl.Echo)
	w.mapv(fl.Properties)
	return w.finish()
}

// flowSlab holds a decoded Flow and the values its pointer fields point
// to, so that decoding one costs a single allocation.
type flowSlab struct {
	fl                                                           Flow
	nextIncomingID, handle, deliveryCount, linkCredit, available uint32
}

func (s *flowSlab) decodeFields(f *fields) {
	fl := &s.fl
	set := func(dst **uint32, slot *uint32) {
		if v, ok := f.uint(); ok {
			*slot = v
			*dst = slot
		}
	}
	set(&fl.NextIncomingID, &s.nextIncomingID)
	var ok bool
	if fl.IncomingWindow, ok = f.uint(); !ok {
		f.missing("incoming-window")
	}
	if fl.NextOutgoingID, ok = f.uint(); !ok {
		f.missing("next-outgoing-id")
	}
	if fl.OutgoingWindow, ok = f.uint(); !ok {
		f.missing("outgoing-window")
	}
	set(&fl.Handle, &s.handle)
	set(&fl.DeliveryCount, &s.deliveryCount)
	set(&fl.LinkCredit, &s.linkCredit)
	set(&fl.Available, &s.available)
	fl.Drain = f.bool()
	fl.Echo = f.bool()
	fl.Properties = f.mapv()
}

func (fl *Flow) decodeFields(f *fields) {
	s := new(flowSlab)
	s.decodeFields(f)
	*fl = s.fl
}

// AppendTo appends the encoded detach to dst; nil encodes as null.
func (d *Detach) AppendTo(dst []byte) ([]byte, error) {
	if d == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descDetach)
	w.uint(d.Handle)
	w.flag(d.Closed)
	w.value(d.Error)
	return w.finish()
}

func (d *Detach) decodeFields(f *fields) {
	var ok bool
	if d.Handle, ok = f.uint(); !ok {
		f.missing("handle")
	}
	d.Closed = f.bool()
	d.Error = f.error()
}
