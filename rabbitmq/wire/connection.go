package wire

// Connection class (10) methods: the handshake, tuning, close and RabbitMQ's
// blocked and update-secret extensions.

// ConnectionStart is connection.start, method 10 of class 10 in
// amqp0-9-1.xml: the server opens the handshake, offering SASL mechanisms
// (space-separated) and locales.
type ConnectionStart struct {
	VersionMajor     uint8
	VersionMinor     uint8
	ServerProperties map[string]any
	Mechanisms       string
	Locales          string
}

// ClassMethod returns connection.start's ids.
func (*ConnectionStart) ClassMethod() (class, method uint16) { return ClassConnection, 10 }

func (m *ConnectionStart) appendArgs(b []byte) []byte {
	b = append(b, m.VersionMajor)
	b = append(b, m.VersionMinor)
	b = AppendTable(b, m.ServerProperties)
	b = appendLongstr(b, m.Mechanisms)
	return appendLongstr(b, m.Locales)
}

func (m *ConnectionStart) decodeArgs(c cursor) cursor {
	m.VersionMajor = c.u8()
	m.VersionMinor = c.u8()
	m.ServerProperties = c.table()
	m.Mechanisms = c.longstr()
	m.Locales = c.longstr()
	return c
}

// ConnectionStartOk is connection.start-ok, method 11 of class 10 in
// amqp0-9-1.xml: the client picks a mechanism and sends its SASL response
// (for PLAIN, "\x00user\x00password").
type ConnectionStartOk struct {
	ClientProperties map[string]any
	Mechanism        string
	Response         string
	Locale           string
}

// ClassMethod returns connection.start-ok's ids.
func (*ConnectionStartOk) ClassMethod() (class, method uint16) { return ClassConnection, 11 }

func (m *ConnectionStartOk) appendArgs(b []byte) []byte {
	b = AppendTable(b, m.ClientProperties)
	b = appendShortstr(b, m.Mechanism)
	b = appendLongstr(b, m.Response)
	return appendShortstr(b, m.Locale)
}

func (m *ConnectionStartOk) decodeArgs(c cursor) cursor {
	m.ClientProperties = c.table()
	m.Mechanism = c.shortstr()
	m.Response = c.longstr()
	m.Locale = c.shortstr()
	return c
}

// ConnectionSecure is connection.secure, method 20 of class 10 in
// amqp0-9-1.xml: the server sends a SASL challenge.
type ConnectionSecure struct {
	Challenge string
}

// ClassMethod returns connection.secure's ids.
func (*ConnectionSecure) ClassMethod() (class, method uint16) { return ClassConnection, 20 }

func (m *ConnectionSecure) appendArgs(b []byte) []byte {
	return appendLongstr(b, m.Challenge)
}

func (m *ConnectionSecure) decodeArgs(c cursor) cursor {
	m.Challenge = c.longstr()
	return c
}

// ConnectionSecureOk is connection.secure-ok, method 21 of class 10 in
// amqp0-9-1.xml: the client answers a SASL challenge.
type ConnectionSecureOk struct {
	Response string
}

// ClassMethod returns connection.secure-ok's ids.
func (*ConnectionSecureOk) ClassMethod() (class, method uint16) { return ClassConnection, 21 }

func (m *ConnectionSecureOk) appendArgs(b []byte) []byte {
	return appendLongstr(b, m.Response)
}

func (m *ConnectionSecureOk) decodeArgs(c cursor) cursor {
	m.Response = c.longstr()
	return c
}

// ConnectionTune is connection.tune, method 30 of class 10 in amqp0-9-1.xml:
// the server proposes channel-max, frame-max and the heartbeat interval in
// seconds.
type ConnectionTune struct {
	ChannelMax uint16
	FrameMax   uint32
	Heartbeat  uint16
}

// ClassMethod returns connection.tune's ids.
func (*ConnectionTune) ClassMethod() (class, method uint16) { return ClassConnection, 30 }

func (m *ConnectionTune) appendArgs(b []byte) []byte {
	b = appendU16(b, m.ChannelMax)
	b = appendU32(b, m.FrameMax)
	return appendU16(b, m.Heartbeat)
}

func (m *ConnectionTune) decodeArgs(c cursor) cursor {
	m.ChannelMax = c.u16()
	m.FrameMax = c.u32()
	m.Heartbeat = c.u16()
	return c
}

// ConnectionTuneOk is connection.tune-ok, method 31 of class 10 in
// amqp0-9-1.xml: the client settles channel-max, frame-max and the heartbeat
// interval.
type ConnectionTuneOk struct {
	ChannelMax uint16
	FrameMax   uint32
	Heartbeat  uint16
}

// ClassMethod returns connection.tune-ok's ids.
func (*ConnectionTuneOk) ClassMethod() (class, method uint16) { return ClassConnection, 31 }

func (m *ConnectionTuneOk) appendArgs(b []byte) []byte {
	b = appendU16(b, m.ChannelMax)
	b = appendU32(b, m.FrameMax)
	return appendU16(b, m.Heartbeat)
}

func (m *ConnectionTuneOk) decodeArgs(c cursor) cursor {
	m.ChannelMax = c.u16()
	m.FrameMax = c.u32()
	m.Heartbeat = c.u16()
	return c
}

// ConnectionOpen is connection.open, method 40 of class 10 in amqp0-9-1.xml:
// the client opens a virtual host; Reserved1 is capabilities and Reserved2
// insist.
type ConnectionOpen struct {
	VirtualHost string
	Reserved1   string
	Reserved2   bool
}

// ClassMethod returns connection.open's ids.
func (*ConnectionOpen) ClassMethod() (class, method uint16) { return ClassConnection, 40 }

func (m *ConnectionOpen) appendArgs(b []byte) []byte {
	b = appendShortstr(b, m.VirtualHost)
	b = appendShortstr(b, m.Reserved1)
	return append(b, bits(m.Reserved2))
}

func (m *ConnectionOpen) decodeArgs(c cursor) cursor {
	m.VirtualHost = c.shortstr()
	m.Reserved1 = c.shortstr()
	m.Reserved2 = bit(c.u8(), 0)
	return c
}

// ConnectionOpenOk is connection.open-ok, method 41 of class 10 in
// amqp0-9-1.xml: the server grants the virtual host; Reserved1 is known-
// hosts.
type ConnectionOpenOk struct {
	Reserved1 string
}

// ClassMethod returns connection.open-ok's ids.
func (*ConnectionOpenOk) ClassMethod() (class, method uint16) { return ClassConnection, 41 }

func (m *ConnectionOpenOk) appendArgs(b []byte) []byte {
	return appendShortstr(b, m.Reserved1)
}

func (m *ConnectionOpenOk) decodeArgs(c cursor) cursor {
	m.Reserved1 = c.shortstr()
	return c
}

// ConnectionClose is connection.close, method 50 of class 10 in
// amqp0-9-1.xml: either peer closes the connection, naming the method that
// caused it, if any.
type ConnectionClose struct {
	ReplyCode uint16
	ReplyText string
	ClassID   uint16
	MethodID  uint16
}

// ClassMethod returns connection.close's ids.
func (*ConnectionClose) ClassMethod() (class, method uint16) { return ClassConnection, 50 }

func (m *ConnectionClose) appendArgs(b []byte) []byte {
	b = appendU16(b, m.ReplyCode)
	b = appendShortstr(b, m.ReplyText)
	b = appendU16(b, m.ClassID)
	return appendU16(b, m.MethodID)
}

func (m *ConnectionClose) decodeArgs(c cursor) cursor {
	m.ReplyCode = c.u16()
	m.ReplyText = c.shortstr()
	m.ClassID = c.u16()
	m.MethodID = c.u16()
	return c
}

// ConnectionCloseOk is connection.close-ok, method 51 of class 10 in
// amqp0-9-1.xml: it confirms connection.close.
type ConnectionCloseOk struct{}

// ClassMethod returns connection.close-ok's ids.
func (*ConnectionCloseOk) ClassMethod() (class, method uint16) { return ClassConnection, 51 }

func (*ConnectionCloseOk) appendArgs(b []byte) []byte { return b }

func (*ConnectionCloseOk) decodeArgs(c cursor) cursor { return c }

// ConnectionBlocked is connection.blocked, method 60 of class 10 in
// amqp0-9-1.xml: RabbitMQ tells the client that it stops reading publishes
// (resource alarm).
type ConnectionBlocked struct {
	Reason string
}

// ClassMethod returns connection.blocked's ids.
func (*ConnectionBlocked) ClassMethod() (class, method uint16) { return ClassConnection, 60 }

func (m *ConnectionBlocked) appendArgs(b []byte) []byte {
	return appendShortstr(b, m.Reason)
}

func (m *ConnectionBlocked) decodeArgs(c cursor) cursor {
	m.Reason = c.shortstr()
	return c
}

// ConnectionUnblocked is connection.unblocked, method 61 of class 10 in
// amqp0-9-1.xml: RabbitMQ tells the client that publishes flow again.
type ConnectionUnblocked struct{}

// ClassMethod returns connection.unblocked's ids.
func (*ConnectionUnblocked) ClassMethod() (class, method uint16) { return ClassConnection, 61 }

func (*ConnectionUnblocked) appendArgs(b []byte) []byte { return b }

func (*ConnectionUnblocked) decodeArgs(c cursor) cursor { return c }

// ConnectionUpdateSecret is connection.update-secret, method 70 of class 10
// in amqp0-9-1.xml: the client replaces its credentials, such as an expiring
// token (RabbitMQ extension).
type ConnectionUpdateSecret struct {
	NewSecret string
	Reason    string
}

// ClassMethod returns connection.update-secret's ids.
func (*ConnectionUpdateSecret) ClassMethod() (class, method uint16) { return ClassConnection, 70 }

func (m *ConnectionUpdateSecret) appendArgs(b []byte) []byte {
	b = appendLongstr(b, m.NewSecret)
	return appendShortstr(b, m.Reason)
}

func (m *ConnectionUpdateSecret) decodeArgs(c cursor) cursor {
	m.NewSecret = c.longstr()
	m.Reason = c.shortstr()
	return c
}

// ConnectionUpdateSecretOk is connection.update-secret-ok, method 71 of
// class 10 in amqp0-9-1.xml: it confirms connection.update-secret.
type ConnectionUpdateSecretOk struct{}

// ClassMethod returns connection.update-secret-ok's ids.
func (*ConnectionUpdateSecretOk) ClassMethod() (class, method uint16) { return ClassConnection, 71 }

func (*ConnectionUpdateSecretOk) appendArgs(b []byte) []byte { return b }

func (*ConnectionUpdateSecretOk) decodeArgs(c cursor) cursor { return c }
