package wire

// Basic class (60) methods, with RabbitMQ's basic.nack.

import "encoding/binary"

// BasicQos is basic.qos, method 10 of class 60 in amqp0-9-1.xml: it sets the
// prefetch window; RabbitMQ applies it per consumer unless Global is set.
type BasicQos struct {
	PrefetchSize  uint32
	PrefetchCount uint16
	Global        bool
}

// ClassMethod returns basic.qos's ids.
func (*BasicQos) ClassMethod() (class, method uint16) { return ClassBasic, 10 }

func (m *BasicQos) appendArgs(b []byte) []byte {
	b = appendU32(b, m.PrefetchSize)
	b = appendU16(b, m.PrefetchCount)
	return append(b, bits(m.Global))
}

func (m *BasicQos) decodeArgs(c cursor) cursor {
	m.PrefetchSize = c.u32()
	m.PrefetchCount = c.u16()
	m.Global = bit(c.u8(), 0)
	return c
}

// BasicQosOk is basic.qos-ok, method 11 of class 60 in amqp0-9-1.xml: it
// confirms basic.qos.
type BasicQosOk struct{}

// ClassMethod returns basic.qos-ok's ids.
func (*BasicQosOk) ClassMethod() (class, method uint16) { return ClassBasic, 11 }

func (*BasicQosOk) appendArgs(b []byte) []byte { return b }

func (*BasicQosOk) decodeArgs(c cursor) cursor { return c }

// BasicConsume is basic.consume, method 20 of class 60 in amqp0-9-1.xml: it
// starts a consumer.
type BasicConsume struct {
	Reserved1   uint16
	Queue       string
	ConsumerTag string
	NoLocal     bool
	NoAck       bool
	Exclusive   bool
	NoWait      bool
	Arguments   map[string]any
}

// ClassMethod returns basic.consume's ids.
func (*BasicConsume) ClassMethod() (class, method uint16) { return ClassBasic, 20 }

func (m *BasicConsume) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Queue)
	b = appendShortstr(b, m.ConsumerTag)
	b = append(b, bits(m.NoLocal, m.NoAck, m.Exclusive, m.NoWait))
	return AppendTable(b, m.Arguments)
}

func (m *BasicConsume) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Queue = c.shortstr()
	m.ConsumerTag = c.shortstr()
	f := c.u8()
	m.NoLocal = bit(f, 0)
	m.NoAck = bit(f, 1)
	m.Exclusive = bit(f, 2)
	m.NoWait = bit(f, 3)
	m.Arguments = c.table()
	return c
}

// BasicConsumeOk is basic.consume-ok, method 21 of class 60 in
// amqp0-9-1.xml: it confirms basic.consume with the consumer tag.
type BasicConsumeOk struct {
	ConsumerTag string
}

// ClassMethod returns basic.consume-ok's ids.
func (*BasicConsumeOk) ClassMethod() (class, method uint16) { return ClassBasic, 21 }

func (m *BasicConsumeOk) appendArgs(b []byte) []byte {
	return appendShortstr(b, m.ConsumerTag)
}

func (m *BasicConsumeOk) decodeArgs(c cursor) cursor {
	m.ConsumerTag = c.shortstr()
	return c
}

// BasicCancel is basic.cancel, method 30 of class 60 in amqp0-9-1.xml: it
// ends a consumer; RabbitMQ also sends it to the client when a queue goes
// away.
type BasicCancel struct {
	ConsumerTag string
	NoWait      bool
}

// ClassMethod returns basic.cancel's ids.
func (*BasicCancel) ClassMethod() (class, method uint16) { return ClassBasic, 30 }

func (m *BasicCancel) appendArgs(b []byte) []byte {
	b = appendShortstr(b, m.ConsumerTag)
	return append(b, bits(m.NoWait))
}

func (m *BasicCancel) decodeArgs(c cursor) cursor {
	m.ConsumerTag = c.shortstr()
	m.NoWait = bit(c.u8(), 0)
	return c
}

// BasicCancelOk is basic.cancel-ok, method 31 of class 60 in amqp0-9-1.xml:
// it confirms basic.cancel.
type BasicCancelOk struct {
	ConsumerTag string
}

// ClassMethod returns basic.cancel-ok's ids.
func (*BasicCancelOk) ClassMethod() (class, method uint16) { return ClassBasic, 31 }

func (m *BasicCancelOk) appendArgs(b []byte) []byte {
	return appendShortstr(b, m.ConsumerTag)
}

func (m *BasicCancelOk) decodeArgs(c cursor) cursor {
	m.ConsumerTag = c.shortstr()
	return c
}

// BasicPublish is basic.publish, method 40 of class 60 in amqp0-9-1.xml: it
// publishes a message; content follows.
type BasicPublish struct {
	Reserved1  uint16
	Exchange   string
	RoutingKey string
	Mandatory  bool
	Immediate  bool
}

// ClassMethod returns basic.publish's ids.
func (*BasicPublish) ClassMethod() (class, method uint16) { return ClassBasic, 40 }

func (m *BasicPublish) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Exchange)
	b = appendShortstr(b, m.RoutingKey)
	return append(b, bits(m.Mandatory, m.Immediate))
}

func (m *BasicPublish) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Exchange = c.shortstr()
	m.RoutingKey = c.shortstr()
	f := c.u8()
	m.Mandatory = bit(f, 0)
	m.Immediate = bit(f, 1)
	return c
}

// BasicReturn is basic.return, method 50 of class 60 in amqp0-9-1.xml: it
// returns an unroutable mandatory message; content follows.
type BasicReturn struct {
	ReplyCode  uint16
	ReplyText  string
	Exchange   string
	RoutingKey string
}

// ClassMethod returns basic.return's ids.
func (*BasicReturn) ClassMethod() (class, method uint16) { return ClassBasic, 50 }

func (m *BasicReturn) appendArgs(b []byte) []byte {
	b = appendU16(b, m.ReplyCode)
	b = appendShortstr(b, m.ReplyText)
	b = appendShortstr(b, m.Exchange)
	return appendShortstr(b, m.RoutingKey)
}

func (m *BasicReturn) decodeArgs(c cursor) cursor {
	m.ReplyCode = c.u16()
	m.ReplyText = c.shortstr()
	m.Exchange = c.shortstr()
	m.RoutingKey = c.shortstr()
	return c
}

// BasicDeliver is basic.deliver, method 60 of class 60 in amqp0-9-1.xml: it
// delivers a message to a consumer; content follows.
type BasicDeliver struct {
	ConsumerTag string
	DeliveryTag uint64
	Redelivered bool
	Exchange    string
	RoutingKey  string
}

// ClassMethod returns basic.deliver's ids.
func (*BasicDeliver) ClassMethod() (class, method uint16) { return ClassBasic, 60 }

func (m *BasicDeliver) appendArgs(b []byte) []byte {
	b = appendShortstr(b, m.ConsumerTag)
	b = appendU64(b, m.DeliveryTag)
	b = append(b, bits(m.Redelivered))
	b = appendShortstr(b, m.Exchange)
	return appendShortstr(b, m.RoutingKey)
}

func (m *BasicDeliver) decodeArgs(c cursor) cursor {
	m.ConsumerTag = c.shortstr()
	m.DeliveryTag = c.u64()
	m.Redelivered = bit(c.u8(), 0)
	m.Exchange = c.shortstr()
	m.RoutingKey = c.shortstr()
	return c
}

// BasicGet is basic.get, method 70 of class 60 in amqp0-9-1.xml: it fetches
// one message.
type BasicGet struct {
	Reserved1 uint16
	Queue     string
	NoAck     bool
}

// ClassMethod returns basic.get's ids.
func (*BasicGet) ClassMethod() (class, method uint16) { return ClassBasic, 70 }

func (m *BasicGet) appendArgs(b []byte) []byte {
	b = appendU16(b, m.Reserved1)
	b = appendShortstr(b, m.Queue)
	return append(b, bits(m.NoAck))
}

func (m *BasicGet) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.u16()
	m.Queue = c.shortstr()
	m.NoAck = bit(c.u8(), 0)
	return c
}

// BasicGetOk is basic.get-ok, method 71 of class 60 in amqp0-9-1.xml: it
// answers basic.get with a message; content follows.
type BasicGetOk struct {
	DeliveryTag  uint64
	Redelivered  bool
	Exchange     string
	RoutingKey   string
	MessageCount uint32
}

// ClassMethod returns basic.get-ok's ids.
func (*BasicGetOk) ClassMethod() (class, method uint16) { return ClassBasic, 71 }

func (m *BasicGetOk) appendArgs(b []byte) []byte {
	b = appendU64(b, m.DeliveryTag)
	b = append(b, bits(m.Redelivered))
	b = appendShortstr(b, m.Exchange)
	b = appendShortstr(b, m.RoutingKey)
	return appendU32(b, m.MessageCount)
}

func (m *BasicGetOk) decodeArgs(c cursor) cursor {
	m.DeliveryTag = c.u64()
	m.Redelivered = bit(c.u8(), 0)
	m.Exchange = c.shortstr()
	m.RoutingKey = c.shortstr()
	m.MessageCount = c.u32()
	return c
}

// BasicGetEmpty is basic.get-empty, method 72 of class 60 in amqp0-9-1.xml:
// it answers basic.get when the queue is empty; Reserved1 is cluster-id.
type BasicGetEmpty struct {
	Reserved1 string
}

// ClassMethod returns basic.get-empty's ids.
func (*BasicGetEmpty) ClassMethod() (class, method uint16) { return ClassBasic, 72 }

func (m *BasicGetEmpty) appendArgs(b []byte) []byte {
	return appendShortstr(b, m.Reserved1)
}

func (m *BasicGetEmpty) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.shortstr()
	return c
}

// BasicAck is basic.ack, method 80 of class 60 in amqp0-9-1.xml: it
// acknowledges one delivery, or all up to DeliveryTag; in confirm mode the
// server sends it to confirm a publish.
type BasicAck struct {
	DeliveryTag uint64
	Multiple    bool
}

// ClassMethod returns basic.ack's ids.
func (*BasicAck) ClassMethod() (class, method uint16) { return ClassBasic, 80 }

func (m *BasicAck) appendArgs(b []byte) []byte {
	b = appendU64(b, m.DeliveryTag)
	return append(b, bits(m.Multiple))
}

func (m *BasicAck) decodeArgs(c cursor) cursor {
	m.DeliveryTag = c.u64()
	m.Multiple = bit(c.u8(), 0)
	return c
}

// BasicReject is basic.reject, method 90 of class 60 in amqp0-9-1.xml: it
// rejects one delivery.
type BasicReject struct {
	DeliveryTag uint64
	Requeue     bool
}

// ClassMethod returns basic.reject's ids.
func (*BasicReject) ClassMethod() (class, method uint16) { return ClassBasic, 90 }

func (m *BasicReject) appendArgs(b []byte) []byte {
	b = appendU64(b, m.DeliveryTag)
	return append(b, bits(m.Requeue))
}

func (m *BasicReject) decodeArgs(c cursor) cursor {
	m.DeliveryTag = c.u64()
	m.Requeue = bit(c.u8(), 0)
	return c
}

// BasicRecoverAsync is basic.recover-async, method 100 of class 60 in
// amqp0-9-1.xml: it redelivers unacknowledged messages without a reply
// (deprecated).
type BasicRecoverAsync struct {
	Requeue bool
}

// ClassMethod returns basic.recover-async's ids.
func (*BasicRecoverAsync) ClassMethod() (class, method uint16) { return ClassBasic, 100 }

func (m *BasicRecoverAsync) appendArgs(b []byte) []byte {
	return append(b, bits(m.Requeue))
}

func (m *BasicRecoverAsync) decodeArgs(c cursor) cursor {
	m.Requeue = bit(c.u8(), 0)
	return c
}

// BasicRecover is basic.recover, method 110 of class 60 in amqp0-9-1.xml: it
// redelivers unacknowledged messages.
type BasicRecover struct {
	Requeue bool
}

// ClassMethod returns basic.recover's ids.
func (*BasicRecover) ClassMethod() (class, method uint16) { return ClassBasic, 110 }

func (m *BasicRecover) appendArgs(b []byte) []byte {
	return append(b, bits(m.Requeue))
}

func (m *BasicRecover) decodeArgs(c cursor) cursor {
	m.Requeue = bit(c.u8(), 0)
	return c
}

// BasicRecoverOk is basic.recover-ok, method 111 of class 60 in
// amqp0-9-1.xml: it confirms basic.recover.
type BasicRecoverOk struct{}

// ClassMethod returns basic.recover-ok's ids.
func (*BasicRecoverOk) ClassMethod() (class, method uint16) { return ClassBasic, 111 }

func (*BasicRecoverOk) appendArgs(b []byte) []byte { return b }

func (*BasicRecoverOk) decodeArgs(c cursor) cursor { return c }

// BasicNack is basic.nack, method 120 of class 60 in amqp0-9-1.xml: it
// rejects one delivery or several (RabbitMQ extension); in confirm mode the
// server sends it when a publish is lost.
type BasicNack struct {
	DeliveryTag uint64
	Multiple    bool
	Requeue     bool
}

// ClassMethod returns basic.nack's ids.
func (*BasicNack) ClassMethod() (class, method uint16) { return ClassBasic, 120 }

func (m *BasicNack) appendArgs(b []byte) []byte {
	b = appendU64(b, m.DeliveryTag)
	return append(b, bits(m.Multiple, m.Requeue))
}

func (m *BasicNack) decodeArgs(c cursor) cursor {
	m.DeliveryTag = c.u64()
	f := c.u8()
	m.Multiple = bit(f, 0)
	m.Requeue = bit(f, 1)
	return c
}

// AppendDeliver appends a basic.deliver method frame; it is
// AppendMethodFrame of a BasicDeliver whose exchange and routing key are
// bytes, with no allocation, for the server's delivery path.
func AppendDeliver(dst []byte, channel uint16, consumerTag string, deliveryTag uint64, redelivered bool, exchange, routingKey []byte) []byte {
	start := len(dst)
	dst = append(dst, FrameMethod, byte(channel>>8), byte(channel), 0, 0, 0, 0)
	dst = appendU16(dst, ClassBasic)
	dst = appendU16(dst, 60)
	dst = appendShortstr(dst, consumerTag)
	dst = appendU64(dst, deliveryTag)
	dst = append(dst, bits(redelivered))
	dst = append(dst, byte(len(exchange)))
	dst = append(dst, exchange...)
	dst = append(dst, byte(len(routingKey)))
	dst = append(dst, routingKey...)
	binary.BigEndian.PutUint32(dst[start+3:], uint32(len(dst)-start-7))
	return append(dst, FrameEnd)
}
