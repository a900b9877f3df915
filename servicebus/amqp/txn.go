package amqp

// Transaction types (§4.5): the coordinator target, the declare and
// discharge messages a client sends to it, and the delivery states that
// carry a txn-id.

// CapLocalTransactions is the capability of a coordinator that serves
// local transactions (§4.5.1 txn-capability).
const CapLocalTransactions Symbol = "amqp:local-transactions"

// Coordinator is the target of a link to a transaction coordinator
// (§4.5.1): it takes declare and discharge messages.
type Coordinator struct {
	// Capabilities are the transaction capabilities the client asks for.
	Capabilities []Symbol
}

// Declare is the body (an amqp-value) of a message that declares a
// transaction (§4.5.2); lapse serves no global-id.
type Declare struct {
	GlobalID any
}

// Discharge is the body (an amqp-value) of a message that ends a
// transaction (§4.5.3): Fail true rolls it back, false commits it.
type Discharge struct {
	TxnID []byte
	Fail  bool
}

// Declared is the outcome of a declare (§4.5.4): the txn-id of the
// transaction.
type Declared struct {
	TxnID []byte
}

// TransactionalState is the delivery state of a transfer or disposition
// that is part of a transaction (§4.5.5); Outcome is its outcome, nil on
// a transfer the client sends.
type TransactionalState struct {
	TxnID   []byte
	Outcome DeliveryState
}

func (*Declared) deliveryState()           {}
func (*TransactionalState) deliveryState() {}

// Descriptor returns the numeric descriptor of coordinator, 0x30.
func (*Coordinator) Descriptor() uint64 { return descCoordinator }

// Descriptor returns the numeric descriptor of declare, 0x31.
func (*Declare) Descriptor() uint64 { return descDeclare }

// Descriptor returns the numeric descriptor of discharge, 0x32.
func (*Discharge) Descriptor() uint64 { return descDischarge }

// Descriptor returns the numeric descriptor of declared, 0x33.
func (*Declared) Descriptor() uint64 { return descDeclared }

// Descriptor returns the numeric descriptor of transactional-state, 0x34.
func (*TransactionalState) Descriptor() uint64 { return descTransactionalState }

// AppendTo appends the encoded coordinator to dst; nil encodes as null.
func (c *Coordinator) AppendTo(dst []byte) ([]byte, error) {
	if c == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descCoordinator)
	w.symbols(c.Capabilities)
	return w.finish()
}

// AppendTo appends the encoded declare to dst; nil encodes as null.
func (d *Declare) AppendTo(dst []byte) ([]byte, error) {
	if d == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descDeclare)
	w.value(d.GlobalID)
	return w.finish()
}

// AppendTo appends the encoded discharge to dst; nil encodes as null.
func (d *Discharge) AppendTo(dst []byte) ([]byte, error) {
	if d == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descDischarge)
	w.binary(d.TxnID)
	w.bool(d.Fail)
	return w.finish()
}

// AppendTo appends the encoded declared outcome to dst; nil encodes as
// null.
func (d *Declared) AppendTo(dst []byte) ([]byte, error) {
	if d == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descDeclared)
	w.binary(d.TxnID)
	return w.finish()
}

// AppendTo appends the encoded transactional state to dst; nil encodes as
// null.
func (s *TransactionalState) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descTransactionalState)
	w.binary(s.TxnID)
	w.value(s.Outcome)
	return w.finish()
}

func (c *Coordinator) decodeFields(f *fields) {
	c.Capabilities = f.symbols()
}

func (d *Declare) decodeFields(f *fields) {
	d.GlobalID = f.any()
}

func (d *Discharge) decodeFields(f *fields) {
	if d.TxnID = f.binary(); d.TxnID == nil {
		f.missing("txn-id")
	}
	d.Fail = f.bool()
}

func (d *Declared) decodeFields(f *fields) {
	if d.TxnID = f.binary(); d.TxnID == nil {
		f.missing("txn-id")
	}
}

func (s *TransactionalState) decodeFields(f *fields) {
	if s.TxnID = f.binary(); s.TxnID == nil {
		f.missing("txn-id")
	}
	s.Outcome = f.deliveryState()
}
