package wire

// Channel class (20) methods.

// ChannelOpen is channel.open, method 10 of class 20 in amqp0-9-1.xml: the
// client opens a channel; Reserved1 is out-of-band.
type ChannelOpen struct {
	Reserved1 string
}

// ClassMethod returns channel.open's ids.
func (*ChannelOpen) ClassMethod() (class, method uint16) { return ClassChannel, 10 }

func (m *ChannelOpen) appendArgs(b []byte) []byte {
	return appendShortstr(b, m.Reserved1)
}

func (m *ChannelOpen) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.shortstr()
	return c
}

// ChannelOpenOk is channel.open-ok, method 11 of class 20 in amqp0-9-1.xml:
// the server confirms channel.open; Reserved1 is channel-id, a long string.
type ChannelOpenOk struct {
	Reserved1 string
}

// ClassMethod returns channel.open-ok's ids.
func (*ChannelOpenOk) ClassMethod() (class, method uint16) { return ClassChannel, 11 }

func (m *ChannelOpenOk) appendArgs(b []byte) []byte {
	return appendLongstr(b, m.Reserved1)
}

func (m *ChannelOpenOk) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.longstr()
	return c
}

// ChannelFlow is channel.flow, method 20 of class 20 in amqp0-9-1.xml: a
// peer asks the other to stop or restart sending content.
type ChannelFlow struct {
	Active bool
}

// ClassMethod returns channel.flow's ids.
func (*ChannelFlow) ClassMethod() (class, method uint16) { return ClassChannel, 20 }

func (m *ChannelFlow) appendArgs(b []byte) []byte {
	return append(b, bits(m.Active))
}

func (m *ChannelFlow) decodeArgs(c cursor) cursor {
	m.Active = bit(c.u8(), 0)
	return c
}

// ChannelFlowOk is channel.flow-ok, method 21 of class 20 in amqp0-9-1.xml:
// it confirms channel.flow.
type ChannelFlowOk struct {
	Active bool
}

// ClassMethod returns channel.flow-ok's ids.
func (*ChannelFlowOk) ClassMethod() (class, method uint16) { return ClassChannel, 21 }

func (m *ChannelFlowOk) appendArgs(b []byte) []byte {
	return append(b, bits(m.Active))
}

func (m *ChannelFlowOk) decodeArgs(c cursor) cursor {
	m.Active = bit(c.u8(), 0)
	return c
}

// ChannelClose is channel.close, method 40 of class 20 in amqp0-9-1.xml:
// either peer closes the channel, naming the method that caused it, if any.
type ChannelClose struct {
	ReplyCode uint16
	ReplyText string
	ClassID   uint16
	MethodID  uint16
}

// ClassMethod returns channel.close's ids.
func (*ChannelClose) ClassMethod() (class, method uint16) { return ClassChannel, 40 }

func (m *ChannelClose) appendArgs(b []byte) []byte {
	b = appendU16(b, m.ReplyCode)
	b = appendShortstr(b, m.ReplyText)
	b = appendU16(b, m.ClassID)
	return appendU16(b, m.MethodID)
}

func (m *ChannelClose) decodeArgs(c cursor) cursor {
	m.ReplyCode = c.u16()
	m.ReplyText = c.shortstr()
	m.ClassID = c.u16()
	m.MethodID = c.u16()
	return c
}

// ChannelCloseOk is channel.close-ok, method 41 of class 20 in
// amqp0-9-1.xml: it confirms channel.close.
type ChannelCloseOk struct{}

// ClassMethod returns channel.close-ok's ids.
func (*ChannelCloseOk) ClassMethod() (class, method uint16) { return ClassChannel, 41 }

func (*ChannelCloseOk) appendArgs(b []byte) []byte { return b }

func (*ChannelCloseOk) decodeArgs(c cursor) cursor { return c }

// Access class (30) methods: deprecated, but RabbitMQ still answers
// access.request.

// AccessRequest is access.request, method 10 of class 30 in amqp0-9-1.xml:
// the client asks for an access ticket (deprecated).
type AccessRequest struct {
	Realm     string
	Exclusive bool
	Passive   bool
	Active    bool
	Write     bool
	Read      bool
}

// ClassMethod returns access.request's ids.
func (*AccessRequest) ClassMethod() (class, method uint16) { return ClassAccess, 10 }

func (m *AccessRequest) appendArgs(b []byte) []byte {
	b = appendShortstr(b, m.Realm)
	return append(b, bits(m.Exclusive, m.Passive, m.Active, m.Write, m.Read))
}

func (m *AccessRequest) decodeArgs(c cursor) cursor {
	m.Realm = c.shortstr()
	f := c.u8()
	m.Exclusive = bit(f, 0)
	m.Passive = bit(f, 1)
	m.Active = bit(f, 2)
	m.Write = bit(f, 3)
	m.Read = bit(f, 4)
	return c
}

// AccessRequestOk is access.request-ok, method 11 of class 30 in
// amqp0-9-1.xml: it grants an access ticket; Reserved1 is the ticket.
type AccessRequestOk struct {
	Reserved1 uint16
}

// ClassMethod returns access.request-ok's ids.
func (*AccessRequestOk) ClassMethod() (class, method uint16) { return ClassAccess, 11 }

func (m *AccessRequestOk) appendArgs(b []byte) []byte {
	return appendU16(b, m.Reserved1)
}

func (m *AccessRequestOk) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	return c
}

// Tx class (90) methods: standard transactions.

// TxSelect is tx.select, method 10 of class 90 in amqp0-9-1.xml: it puts the
// channel in transaction mode.
type TxSelect struct{}

// ClassMethod returns tx.select's ids.
func (*TxSelect) ClassMethod() (class, method uint16) { return ClassTx, 10 }

func (*TxSelect) appendArgs(b []byte) []byte { return b }

func (*TxSelect) decodeArgs(c cursor) cursor { return c }

// TxSelectOk is tx.select-ok, method 11 of class 90 in amqp0-9-1.xml: it
// confirms tx.select.
type TxSelectOk struct{}

// ClassMethod returns tx.select-ok's ids.
func (*TxSelectOk) ClassMethod() (class, method uint16) { return ClassTx, 11 }

func (*TxSelectOk) appendArgs(b []byte) []byte { return b }

func (*TxSelectOk) decodeArgs(c cursor) cursor { return c }

// TxCommit is tx.commit, method 20 of class 90 in amqp0-9-1.xml: it commits
// the current transaction.
type TxCommit struct{}

// ClassMethod returns tx.commit's ids.
func (*TxCommit) ClassMethod() (class, method uint16) { return ClassTx, 20 }

func (*TxCommit) appendArgs(b []byte) []byte { return b }

func (*TxCommit) decodeArgs(c cursor) cursor { return c }

// TxCommitOk is tx.commit-ok, method 21 of class 90 in amqp0-9-1.xml: it
// confirms tx.commit.
type TxCommitOk struct{}

// ClassMethod returns tx.commit-ok's ids.
func (*TxCommitOk) ClassMethod() (class, method uint16) { return ClassTx, 21 }

func (*TxCommitOk) appendArgs(b []byte) []byte { return b }

func (*TxCommitOk) decodeArgs(c cursor) cursor { return c }

// TxRollback is tx.rollback, method 30 of class 90 in amqp0-9-1.xml: it
// abandons the current transaction.
type TxRollback struct{}

// ClassMethod returns tx.rollback's ids.
func (*TxRollback) ClassMethod() (class, method uint16) { return ClassTx, 30 }

func (*TxRollback) appendArgs(b []byte) []byte { return b }

func (*TxRollback) decodeArgs(c cursor) cursor { return c }

// TxRollbackOk is tx.rollback-ok, method 31 of class 90 in amqp0-9-1.xml: it
// confirms tx.rollback.
type TxRollbackOk struct{}

// ClassMethod returns tx.rollback-ok's ids.
func (*TxRollbackOk) ClassMethod() (class, method uint16) { return ClassTx, 31 }

func (*TxRollbackOk) appendArgs(b []byte) []byte { return b }

func (*TxRollbackOk) decodeArgs(c cursor) cursor { return c }

// Confirm class (85) methods: RabbitMQ's publisher confirms.

// ConfirmSelect is confirm.select, method 10 of class 85 in amqp0-9-1.xml:
// it puts the channel in confirm mode (RabbitMQ extension).
type ConfirmSelect struct {
	NoWait bool
}

// ClassMethod returns confirm.select's ids.
func (*ConfirmSelect) ClassMethod() (class, method uint16) { return ClassConfirm, 10 }

func (m *ConfirmSelect) appendArgs(b []byte) []byte {
	return append(b, bits(m.NoWait))
}

func (m *ConfirmSelect) decodeArgs(c cursor) cursor {
	m.NoWait = bit(c.u8(), 0)
	return c
}

// ConfirmSelectOk is confirm.select-ok, method 11 of class 85 in
// amqp0-9-1.xml: it confirms confirm.select.
type ConfirmSelectOk struct{}

// ClassMethod returns confirm.select-ok's ids.
func (*ConfirmSelectOk) ClassMethod() (class, method uint16) { return ClassConfirm, 11 }

func (*ConfirmSelectOk) appendArgs(b []byte) []byte { return b }

func (*ConfirmSelectOk) decodeArgs(c cursor) cursor { return c }
