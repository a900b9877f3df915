package wire

// Queue class (50) methods.

// QueueDeclare is queue.declare, method 10 of class 50 in amqp0-9-1.xml: it
// creates a queue, or checks that it exists.
type QueueDeclare struct {
	Reserved1  uint16
	Queue      string
	Passive    bool
	Durable    bool
	Exclusive  bool
	AutoDelete bool
	NoWait     bool
	Arguments  map[string]any
}

// ClassMethod returns queue.declare's ids.
func (*QueueDeclare) ClassMethod() (class, method uint16) { return ClassQueue, 10 }

func (m *QueueDeclare) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Queue)
	b = append(b, bits(m.Passive, m.Durable, m.Exclusive, m.AutoDelete, m.NoWait))
	return AppendTable(b, m.Arguments)
}

func (m *QueueDeclare) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Queue = c.shortstr()
	f := c.u8()
	m.Passive = bit(f, 0)
	m.Durable = bit(f, 1)
	m.Exclusive = bit(f, 2)
	m.AutoDelete = bit(f, 3)
	m.NoWait = bit(f, 4)
	m.Arguments = c.table()
	return c
}

// QueueDeclareOk is queue.declare-ok, method 11 of class 50 in
// amqp0-9-1.xml: it confirms queue.declare with the queue's name and counts.
type QueueDeclareOk struct {
	Queue         string
	MessageCount  uint32
	ConsumerCount uint32
}

// ClassMethod returns queue.declare-ok's ids.
func (*QueueDeclareOk) ClassMethod() (class, method uint16) { return ClassQueue, 11 }

func (m *QueueDeclareOk) appendArgs(b []byte) []byte {
	b = appendShortstr(b, m.Queue)
	b = appendU32(b, m.MessageCount)
	return appendU32(b, m.ConsumerCount)
}

func (m *QueueDeclareOk) decodeArgs(c cursor) cursor {
	m.Queue = c.shortstr()
	m.MessageCount = c.u32()
	m.ConsumerCount = c.u32()
	return c
}

// QueueBind is queue.bind, method 20 of class 50 in amqp0-9-1.xml: it binds
// a queue to an exchange.
type QueueBind struct {
	Reserved1  uint16
	Queue      string
	Exchange   string
	RoutingKey string
	NoWait     bool
	Arguments  map[string]any
}

// ClassMethod returns queue.bind's ids.
func (*QueueBind) ClassMethod() (class, method uint16) { return ClassQueue, 20 }

func (m *QueueBind) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Queue)
	b = appendShortstr(b, m.Exchange)
	b = appendShortstr(b, m.RoutingKey)
	b = append(b, bits(m.NoWait))
	return AppendTable(b, m.Arguments)
}

func (m *QueueBind) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Queue = c.shortstr()
	m.Exchange = c.shortstr()
	m.RoutingKey = c.shortstr()
	m.NoWait = bit(c.u8(), 0)
	m.Arguments = c.table()
	return c
}

// QueueBindOk is queue.bind-ok, method 21 of class 50 in amqp0-9-1.xml: it
// confirms queue.bind.
type QueueBindOk struct{}

// ClassMethod returns queue.bind-ok's ids.
func (*QueueBindOk) ClassMethod() (class, method uint16) { return ClassQueue, 21 }

func (*QueueBindOk) appendArgs(b []byte) []byte { return b }

func (*QueueBindOk) decodeArgs(c cursor) cursor { return c }

// QueueUnbind is queue.unbind, method 50 of class 50 in amqp0-9-1.xml: it
// unbinds a queue from an exchange; it has no no-wait bit.
type QueueUnbind struct {
	Reserved1  uint16
	Queue      string
	Exchange   string
	RoutingKey string
	Arguments  map[string]any
}

// ClassMethod returns queue.unbind's ids.
func (*QueueUnbind) ClassMethod() (class, method uint16) { return ClassQueue, 50 }

func (m *QueueUnbind) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Queue)
	b = appendShortstr(b, m.Exchange)
	b = appendShortstr(b, m.RoutingKey)
	return AppendTable(b, m.Arguments)
}

func (m *QueueUnbind) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Queue = c.shortstr()
	m.Exchange = c.shortstr()
	m.RoutingKey = c.shortstr()
	m.Arguments = c.table()
	return c
}

// QueueUnbindOk is queue.unbind-ok, method 51 of class 50 in amqp0-9-1.xml:
// it confirms queue.unbind.
type QueueUnbindOk struct{}

// ClassMethod returns queue.unbind-ok's ids.
func (*QueueUnbindOk) ClassMethod() (class, method uint16) { return ClassQueue, 51 }

func (*QueueUnbindOk) appendArgs(b []byte) []byte { return b }

func (*QueueUnbindOk) decodeArgs(c cursor) cursor { return c }

// QueuePurge is queue.purge, method 30 of class 50 in amqp0-9-1.xml: it
// removes a queue's ready messages.
type QueuePurge struct {
	Reserved1 uint16
	Queue     string
	NoWait    bool
}

// ClassMethod returns queue.purge's ids.
func (*QueuePurge) ClassMethod() (class, method uint16) { return ClassQueue, 30 }

func (m *QueuePurge) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Queue)
	return append(b, bits(m.NoWait))
}

func (m *QueuePurge) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Queue = c.shortstr()
	m.NoWait = bit(c.u8(), 0)
	return c
}

// QueuePurgeOk is queue.purge-ok, method 31 of class 50 in amqp0-9-1.xml: it
// confirms queue.purge with the number of messages removed.
type QueuePurgeOk struct {
	MessageCount uint32
}

// ClassMethod returns queue.purge-ok's ids.
func (*QueuePurgeOk) ClassMethod() (class, method uint16) { return ClassQueue, 31 }

func (m *QueuePurgeOk) appendArgs(b []byte) []byte {
	return appendU32(b, m.MessageCount)
}

func (m *QueuePurgeOk) decodeArgs(c cursor) cursor {
	m.MessageCount = c.u32()
	return c
}

// QueueDelete is queue.delete, method 40 of class 50 in amqp0-9-1.xml: it
// deletes a queue.
type QueueDelete struct {
	Reserved1 uint16
	Queue     string
	IfUnused  bool
	IfEmpty   bool
	NoWait    bool
}

// ClassMethod returns queue.delete's ids.
func (*QueueDelete) ClassMethod() (class, method uint16) { return ClassQueue, 40 }

func (m *QueueDelete) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Queue)
	return append(b, bits(m.IfUnused, m.IfEmpty, m.NoWait))
}

func (m *QueueDelete) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Queue = c.shortstr()
	f := c.u8()
	m.IfUnused = bit(f, 0)
	m.IfEmpty = bit(f, 1)
	m.NoWait = bit(f, 2)
	return c
}

// QueueDeleteOk is queue.delete-ok, method 41 of class 50 in amqp0-9-1.xml:
// it confirms queue.delete with the number of messages deleted.
type QueueDeleteOk struct {
	MessageCount uint32
}

// ClassMethod returns queue.delete-ok's ids.
func (*QueueDeleteOk) ClassMethod() (class, method uint16) { return ClassQueue, 41 }

func (m *QueueDeleteOk) appendArgs(b []byte) []byte {
	return appendU32(b, m.MessageCount)
}

func (m *QueueDeleteOk) decodeArgs(c cursor) cursor {
	m.MessageCount = c.u32()
	return c
}
