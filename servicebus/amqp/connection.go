package amqp

// Open is the AMQP 1.0 open performative (§2.7.1), which negotiates a
// connection's parameters.
type Open struct {
	// ContainerID identifies the sending container; mandatory.
	ContainerID string
	// Hostname is the virtual host the client wants; empty means absent.
	Hostname string
	// MaxFrameSize is the largest frame the sender accepts; 0 means absent,
	// which the spec reads as 4294967295.
	MaxFrameSize uint32
	// ChannelMax is the highest channel number the sender accepts; nil means
	// absent, which the spec reads as 65535.
	ChannelMax *uint16
	// IdleTimeOut is the sender's idle timeout in milliseconds; 0 means none.
	IdleTimeOut uint32
	// OutgoingLocales are the locales the sender can write.
	OutgoingLocales []Symbol
	// IncomingLocales are the locales the sender can read.
	IncomingLocales []Symbol
	// OfferedCapabilities are the extensions the sender supports.
	OfferedCapabilities []Symbol
	// DesiredCapabilities are the extensions the sender can use.
	DesiredCapabilities []Symbol
	// Properties are the connection properties (§2.7.1), keyed by symbol.
	Properties Map
}

// Begin is the AMQP 1.0 begin performative (§2.7.2), which starts a session.
type Begin struct {
	// RemoteChannel is the peer's channel for the session when answering a
	// begin; nil when the sender starts the session.
	RemoteChannel *uint16
	// NextOutgoingID is the transfer-id of the sender's next transfer.
	NextOutgoingID uint32
	// IncomingWindow is the sender's initial incoming window.
	IncomingWindow uint32
	// OutgoingWindow is the sender's initial outgoing window.
	OutgoingWindow uint32
	// HandleMax is the highest link handle the sender accepts; nil means
	// absent, which the spec reads as 4294967295.
	HandleMax *uint32
	// OfferedCapabilities are the extensions the sender supports.
	OfferedCapabilities []Symbol
	// DesiredCapabilities are the extensions the sender can use.
	DesiredCapabilities []Symbol
	// Properties are the session properties, keyed by symbol.
	Properties Map
}

// End is the AMQP 1.0 end performative (§2.7.8), which ends a session,
// with the reason in Error if it ends in error.
type End struct {
	Error *Error
}

// Close is the AMQP 1.0 close performative (§2.7.9), which closes a
// connection, with the reason in Error if it closes in error.
type Close struct {
	Error *Error
}

// Descriptor returns the numeric descriptor of open, 0x10.
func (*Open) Descriptor() uint64 { return descOpen }

// Descriptor returns the numeric descriptor of begin, 0x11.
func (*Begin) Descriptor() uint64 { return descBegin }

// Descriptor returns the numeric descriptor of end, 0x17.
func (*End) Descriptor() uint64 { return descEnd }

// Descriptor returns the numeric descriptor of close, 0x18.
func (*Close) Descriptor() uint64 { return descClose }

// AppendTo appends the encoded open to dst; nil encodes as null.
func (o *Open) AppendTo(dst []byte) ([]byte, error) {
	if o == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descOpen)
	w.string(o.ContainerID)
	w.optString(o.Hostname)
	w.optUint(o.MaxFrameSize)
	if o.ChannelMax == nil {
		w.null()
	} else {
		w.ushort(*o.ChannelMax)
	}
	w.optUint(o.IdleTimeOut)
	w.symbols(o.OutgoingLocales)
	w.symbols(o.IncomingLocales)
	w.symbols(o.OfferedCapabilities)
	w.symbols(o.DesiredCapabilities)
	w.mapv(o.Properties)
	return w.finish()
}

func (o *Open) decodeFields(f *fields) {
	var ok bool
	if o.ContainerID, ok = f.string(); !ok {
		f.missing("container-id")
	}
	o.Hostname, _ = f.string()
	o.MaxFrameSize, _ = f.uint()
	if v, ok := f.ushort(); ok {
		o.ChannelMax = &v
	}
	o.IdleTimeOut, _ = f.uint()
	o.OutgoingLocales = f.symbols()
	o.IncomingLocales = f.symbols()
	o.OfferedCapabilities = f.symbols()
	o.DesiredCapabilities = f.symbols()
	o.Properties = f.mapv()
}

// AppendTo appends the encoded begin to dst; nil encodes as null.
func (b *Begin) AppendTo(dst []byte) ([]byte, error) {
	if b == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descBegin)
	if b.RemoteChannel == nil {
		w.null()
	} else {
		w.ushort(*b.RemoteChannel)
	}
	w.uint(b.NextOutgoingID)
	w.uint(b.IncomingWindow)
	w.uint(b.OutgoingWindow)
	w.uintPtr(b.HandleMax)
	w.symbols(b.OfferedCapabilities)
	w.symbols(b.DesiredCapabilities)
	w.mapv(b.Properties)
	return w.finish()
}

func (b *Begin) decodeFields(f *fields) {
	if v, ok := f.ushort(); ok {
		b.RemoteChannel = &v
	}
	var ok bool
	if b.NextOutgoingID, ok = f.uint(); !ok {
		f.missing("next-outgoing-id")
	}
	if b.IncomingWindow, ok = f.uint(); !ok {
		f.missing("incoming-window")
	}
	if b.OutgoingWindow, ok = f.uint(); !ok {
		f.missing("outgoing-window")
	}
	b.HandleMax = f.uintPtr()
	b.OfferedCapabilities = f.symbols()
	b.DesiredCapabilities = f.symbols()
	b.Properties = f.mapv()
}

// AppendTo appends the encoded end to dst; nil encodes as null.
func (e *End) AppendTo(dst []byte) ([]byte, error) {
	if e == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descEnd)
	w.value(e.Error)
	return w.finish()
}

func (e *End) decodeFields(f *fields) { e.Error = f.error() }

// AppendTo appends the encoded close to dst; nil encodes as null.
func (c *Close) AppendTo(dst []byte) ([]byte, error) {
	if c == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descClose)
	w.value(c.Error)
	return w.finish()
}

func (c *Close) decodeFields(f *fields) { c.Error = f.error() }
