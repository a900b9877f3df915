package wire

// Exchange class (40) methods, with RabbitMQ's exchange-to-exchange bindings.

// ExchangeDeclare is exchange.declare, method 10 of class 40 in
// amqp0-9-1.xml: it creates an exchange, or checks that it exists;
// AutoDelete and Internal are reserved bits in the spec that RabbitMQ gives
// these meanings.
type ExchangeDeclare struct {
	Reserved1  uint16
	Exchange   string
	Type       string
	Passive    bool
	Durable    bool
	AutoDelete bool
	Internal   bool
	NoWait     bool
	Arguments  map[string]any
}

// ClassMethod returns exchange.declare's ids.
func (*ExchangeDeclare) ClassMethod() (class, method uint16) { return ClassExchange, 10 }

func (m *ExchangeDeclare) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Exchange)
	b = appendShortstr(b, m.Type)
	b = append(b, bits(m.Passive, m.Durable, m.AutoDelete, m.Internal, m.NoWait))
	return AppendTable(b, m.Arguments)
}

func (m *ExchangeDeclare) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Exchange = c.shortstr()
	m.Type = c.shortstr()
	f := c.u8()
	m.Passive = bit(f, 0)
	m.Durable = bit(f, 1)
	m.AutoDelete = bit(f, 2)
	m.Internal = bit(f, 3)
	m.NoWait = bit(f, 4)
	m.Arguments = c.table()
	return c
}

// ExchangeDeclareOk is exchange.declare-ok, method 11 of class 40 in
// amqp0-9-1.xml: it confirms exchange.declare.
type ExchangeDeclareOk struct{}

// ClassMethod returns exchange.declare-ok's ids.
func (*ExchangeDeclareOk) ClassMethod() (class, method uint16) { return ClassExchange, 11 }

func (*ExchangeDeclareOk) appendArgs(b []byte) []byte { return b }

func (*ExchangeDeclareOk) decodeArgs(c cursor) cursor { return c }

// ExchangeDelete is exchange.delete, method 20 of class 40 in amqp0-9-1.xml:
// it deletes an exchange.
type ExchangeDelete struct {
	Reserved1 uint16
	Exchange  string
	IfUnused  bool
	NoWait    bool
}

// ClassMethod returns exchange.delete's ids.
func (*ExchangeDelete) ClassMethod() (class, method uint16) { return ClassExchange, 20 }

func (m *ExchangeDelete) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Exchange)
	return append(b, bits(m.IfUnused, m.NoWait))
}

func (m *ExchangeDelete) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Exchange = c.shortstr()
	f := c.u8()
	m.IfUnused = bit(f, 0)
	m.NoWait = bit(f, 1)
	return c
}

// ExchangeDeleteOk is exchange.delete-ok, method 21 of class 40 in
// amqp0-9-1.xml: it confirms exchange.delete.
type ExchangeDeleteOk struct{}

// ClassMethod returns exchange.delete-ok's ids.
func (*ExchangeDeleteOk) ClassMethod() (class, method uint16) { return ClassExchange, 21 }

func (*ExchangeDeleteOk) appendArgs(b []byte) []byte { return b }

func (*ExchangeDeleteOk) decodeArgs(c cursor) cursor { return c }

// ExchangeBind is exchange.bind, method 30 of class 40 in amqp0-9-1.xml: it
// binds an exchange to an exchange (RabbitMQ extension).
type ExchangeBind struct {
	Reserved1   uint16
	Destination string
	Source      string
	RoutingKey  string
	NoWait      bool
	Arguments   map[string]any
}

// ClassMethod returns exchange.bind's ids.
func (*ExchangeBind) ClassMethod() (class, method uint16) { return ClassExchange, 30 }

func (m *ExchangeBind) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Destination)
	b = appendShortstr(b, m.Source)
	b = appendShortstr(b, m.RoutingKey)
	b = append(b, bits(m.NoWait))
	return AppendTable(b, m.Arguments)
}

func (m *ExchangeBind) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Destination = c.shortstr()
	m.Source = c.shortstr()
	m.RoutingKey = c.shortstr()
	m.NoWait = bit(c.u8(), 0)
	m.Arguments = c.table()
	return c
}

// ExchangeBindOk is exchange.bind-ok, method 31 of class 40 in
// amqp0-9-1.xml: it confirms exchange.bind.
type ExchangeBindOk struct{}

// ClassMethod returns exchange.bind-ok's ids.
func (*ExchangeBindOk) ClassMethod() (class, method uint16) { return ClassExchange, 31 }

func (*ExchangeBindOk) appendArgs(b []byte) []byte { return b }

func (*ExchangeBindOk) decodeArgs(c cursor) cursor { return c }

// ExchangeUnbind is exchange.unbind, method 40 of class 40 in amqp0-9-1.xml:
// it unbinds an exchange from an exchange (RabbitMQ extension).
type ExchangeUnbind struct {
	Reserved1   uint16
	Destination string
	Source      string
	RoutingKey  string
	NoWait      bool
	Arguments   map[string]any
}

// ClassMethod returns exchange.unbind's ids.
func (*ExchangeUnbind) ClassMethod() (class, method uint16) { return ClassExchange, 40 }

func (m *ExchangeUnbind) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Destination)
	b = appendShortstr(b, m.Source)
	b = appendShortstr(b, m.RoutingKey)
	b = append(b, bits(m.NoWait))
	return AppendTable(b, m.Arguments)
}

func (m *ExchangeUnbind) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Destination = c.shortstr()
	m.Source = c.shortstr()
	m.RoutingKey = c.shortstr()
	m.NoWait = bit(c.u8(), 0)
	m.Arguments = c.table()
	return c
}

// ExchangeUnbindOk is exchange.unbind-ok, method 51 of class 40 in
// amqp0-9-1.xml: it confirms exchange.unbind; its method id is 51, not 41,
// in RabbitMQ's extension.
type ExchangeUnbindOk struct{}

// ClassMethod returns exchange.unbind-ok's ids.
func (*ExchangeUnbindOk) ClassMethod() (class, method uint16) { return ClassExchange, 51 }

func (*ExchangeUnbindOk) appendArgs(b []byte) []byte { return b }

func (*ExchangeUnbindOk) decodeArgs(c cursor) cursor { return c }
