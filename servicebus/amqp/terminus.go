package amqp

// Terminus durability values (§3.5.5).
const (
	DurableNone          uint32 = 0 // no terminus state is durable
	DurableConfiguration uint32 = 1 // only configuration is durable
	DurableUnsettled     uint32 = 2 // configuration and unsettled state are durable
)

// Source is the source terminus of a link (§3.5.3): where messages come
// from, as the attaching endpoint sees it.
type Source struct {
	// Address names the node, such as a queue; empty means absent.
	Address string
	// Durable is the terminus durability (§3.5.5), 0 = none.
	Durable uint32
	// ExpiryPolicy is the terminus expiry policy (§3.5.6); empty means
	// absent, which the spec reads as session-end.
	ExpiryPolicy Symbol
	// Timeout is the expiry timeout in seconds.
	Timeout uint32
	// Dynamic asks the peer to create the node.
	Dynamic bool
	// DynamicNodeProperties are the properties of a dynamic node (§3.5.9).
	DynamicNodeProperties Map
	// DistributionMode is move or copy (§3.5.7); empty means absent.
	DistributionMode Symbol
	// Filter is the filter-set (§3.5.8): filter names to *Described filters.
	Filter Map
	// DefaultOutcome is the outcome of deliveries settled without one.
	DefaultOutcome DeliveryState
	// Outcomes are the descriptors of the outcomes the source supports.
	Outcomes []Symbol
	// Capabilities are the extension capabilities the source supports.
	Capabilities []Symbol
}

// Target is the target terminus of a link (§3.5.4): where messages go to.
type Target struct {
	// Address names the node, such as a queue; empty means absent.
	Address string
	// Durable is the terminus durability (§3.5.5), 0 = none.
	Durable uint32
	// ExpiryPolicy is the terminus expiry policy (§3.5.6); empty means
	// absent, which the spec reads as session-end.
	ExpiryPolicy Symbol
	// Timeout is the expiry timeout in seconds.
	Timeout uint32
	// Dynamic asks the peer to create the node.
	Dynamic bool
	// DynamicNodeProperties are the properties of a dynamic node (§3.5.9).
	DynamicNodeProperties Map
	// Capabilities are the extension capabilities the target supports.
	Capabilities []Symbol
}

// Descriptor returns the numeric descriptor of source, 0x28.
func (s *Source) Descriptor() uint64 { return descSource }

// Descriptor returns the numeric descriptor of target, 0x29.
func (t *Target) Descriptor() uint64 { return descTarget }

// AppendTo appends the encoded source to dst; a nil *Source encodes as null.
func (s *Source) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descSource)
	w.optString(s.Address)
	w.optUint(s.Durable)
	w.optSymbol(s.ExpiryPolicy)
	w.optUint(s.Timeout)
	w.flag(s.Dynamic)
	w.mapv(s.DynamicNodeProperties)
	w.optSymbol(s.DistributionMode)
	w.mapv(s.Filter)
	w.value(s.DefaultOutcome)
	w.symbols(s.Outcomes)
	w.symbols(s.Capabilities)
	return w.finish()
}

// AppendTo appends the encoded target to dst; a nil *Target encodes as null.
func (t *Target) AppendTo(dst []byte) ([]byte, error) {
	if t == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descTarget)
	w.optString(t.Address)
	w.optUint(t.Durable)
	w.optSymbol(t.ExpiryPolicy)
	w.optUint(t.Timeout)
	w.flag(t.Dynamic)
	w.mapv(t.DynamicNodeProperties)
	w.symbols(t.Capabilities)
	return w.finish()
}

func (s *Source) decodeFields(f *fields) {
	s.Address, _ = f.string()
	s.Durable, _ = f.uint()
	s.ExpiryPolicy, _ = f.symbol()
	s.Timeout, _ = f.uint()
	s.Dynamic = f.bool()
	s.DynamicNodeProperties = f.mapv()
	s.DistributionMode, _ = f.symbol()
	s.Filter = f.mapv()
	s.DefaultOutcome = f.deliveryState()
	s.Outcomes = f.symbols()
	s.Capabilities = f.symbols()
}

func (t *Target) decodeFields(f *fields) {
	t.Address, _ = f.string()
	t.Durable, _ = f.uint()
	t.ExpiryPolicy, _ = f.symbol()
	t.Timeout, _ = f.uint()
	t.Dynamic = f.bool()
	t.DynamicNodeProperties = f.mapv()
	t.Capabilities = f.symbols()
}
