package wire

import (
	"encoding/binary"
	"fmt"
)

// Class ids (amqp0-9-1.xml; confirm is RabbitMQ's extension).
const (
	ClassConnection = 10
	ClassChannel    = 20
	ClassAccess     = 30
	ClassExchange   = 40
	ClassQueue      = 50
	ClassBasic      = 60
	ClassConfirm    = 85
	ClassTx         = 90
)

// Method is one AMQP method (§4.2.4): the pointer types of this package's
// method structs, such as *QueueDeclare, implement it.
type Method interface {
	// ClassMethod returns the method's class and method ids.
	ClassMethod() (class, method uint16)
	// appendArgs appends the method's arguments.
	appendArgs(dst []byte) []byte
	// decodeArgs sets every field from the arguments at c and returns c
	// advanced past them. The cursor goes by value: a pointer passed
	// through an interface method would escape to the heap.
	decodeArgs(c cursor) cursor
}

// PeekMethod returns the class and method ids at the front of a method
// frame's payload. A payload shorter than 4 octets is an *Error with code
// 501 FRAME_ERROR.
func PeekMethod(payload []byte) (class, method uint16, err error) {
	if len(payload) < 4 {
		return 0, 0, malformed("method frame", fmt.Sprintf("%d octets, too short for class and method ids", len(payload)))
	}
	return binary.BigEndian.Uint16(payload), binary.BigEndian.Uint16(payload[2:]), nil
}

// ReadMethod decodes a method frame's payload (§4.2.4): class id, method
// id and arguments, into a new value of the method's struct. Arguments that
// are truncated, malformed or followed by extra octets are an *Error with
// code 501 FRAME_ERROR. A class or method id this codec does not know is
// an *Error with code 540 NOT_IMPLEMENTED: RabbitMQ's reader crashes on one
// and drops the TCP connection without a close, and a server that wants
// that can check for the code. Strings and tables are copies: the result
// does not alias payload.
func ReadMethod(payload []byte) (Method, error) {
	class, method, err := PeekMethod(payload)
	if err != nil {
		return nil, err
	}
	m := newMethod(class, method)
	if m == nil {
		return nil, &Error{Code: NotImplemented, Text: fmt.Sprintf("unknown method: class %d, method %d", class, method)}
	}
	if err := decodeArgs(m, payload[4:]); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadMethodInto decodes a method frame's payload into m, which must be of
// the method the payload names (see PeekMethod), overwriting every field.
// Reusing m, a server decodes basic.publish allocating only its strings and
// basic.ack allocating nothing. Errors are ReadMethod's; a payload of
// another method is a plain error, a bug of the caller's.
func ReadMethodInto(payload []byte, m Method) error {
	class, method, err := PeekMethod(payload)
	if err != nil {
		return err
	}
	if wc, wm := m.ClassMethod(); class != wc || method != wm {
		return fmt.Errorf("wire: payload holds %s, not %s", MethodName(class, method), MethodName(wc, wm))
	}
	return decodeArgs(m, payload[4:])
}

// decodeArgs decodes args, all of them, into m.
func decodeArgs(m Method, args []byte) error {
	c := m.decodeArgs(cursor{b: args})
	c.end()
	if c.err != "" {
		return malformed(MethodName(m.ClassMethod()), c.err)
	}
	return nil
}

// HasContent reports whether a method carries content (§4.2.6): whether a
// content header and body frames follow it. Those are basic.publish,
// basic.return, basic.deliver and basic.get-ok.
func HasContent(m Method) bool {
	switch m.(type) {
	case *BasicPublish, *BasicReturn, *BasicDeliver, *BasicGetOk:
		return true
	}
	return false
}

// methodKey packs a class and method id into one switch key.
func methodKey(class, method uint16) uint32 { return uint32(class)<<16 | uint32(method) }

// newMethod returns a new zero value of the method with the given ids, or
// nil if there is none.
func newMethod(class, method uint16) Method {
	switch methodKey(class, method) {
	case methodKey(ClassConnection, 10):
		return new(ConnectionStart)
	case methodKey(ClassConnection, 11):
		return new(ConnectionStartOk)
	case methodKey(ClassConnection, 20):
		return new(ConnectionSecure)
	case methodKey(ClassConnection, 21):
		return new(ConnectionSecureOk)
	case methodKey(ClassConnection, 30):
		return new(ConnectionTune)
	case methodKey(ClassConnection, 31):
		return new(ConnectionTuneOk)
	case methodKey(ClassConnection, 40):
		return new(ConnectionOpen)
	case methodKey(ClassConnection, 41):
		return new(ConnectionOpenOk)
	case methodKey(ClassConnection, 50):
		return new(ConnectionClose)
	case methodKey(ClassConnection, 51):
		return new(ConnectionCloseOk)
	case methodKey(ClassConnection, 60):
		return new(ConnectionBlocked)
	case methodKey(ClassConnection, 61):
		return new(ConnectionUnblocked)
	case methodKey(ClassConnection, 70):
		return new(ConnectionUpdateSecret)
	case methodKey(ClassConnection, 71):
		return new(ConnectionUpdateSecretOk)
	case methodKey(ClassChannel, 10):
		return new(ChannelOpen)
	case methodKey(ClassChannel, 11):
		return new(ChannelOpenOk)
	case methodKey(ClassChannel, 20):
		return new(ChannelFlow)
	case methodKey(ClassChannel, 21):
		return new(ChannelFlowOk)
	case methodKey(ClassChannel, 40):
		return new(ChannelClose)
	case methodKey(ClassChannel, 41):
		return new(ChannelCloseOk)
	case methodKey(ClassAccess, 10):
		return new(AccessRequest)
	case methodKey(ClassAccess, 11):
		return new(AccessRequestOk)
	case methodKey(ClassExchange, 10):
		return new(ExchangeDeclare)
	case methodKey(ClassExchange, 11):
		return new(ExchangeDeclareOk)
	case methodKey(ClassExchange, 20):
		return new(ExchangeDelete)
	case methodKey(ClassExchange, 21):
		return new(ExchangeDeleteOk)
	case methodKey(ClassExchange, 30):
		return new(ExchangeBind)
	case methodKey(ClassExchange, 31):
		return new(ExchangeBindOk)
	case methodKey(ClassExchange, 40):
		return new(ExchangeUnbind)
	case methodKey(ClassExchange, 51):
		return new(ExchangeUnbindOk)
	case methodKey(ClassQueue, 10):
		return new(QueueDeclare)
	case methodKey(ClassQueue, 11):
		return new(QueueDeclareOk)
	case methodKey(ClassQueue, 20):
		return new(QueueBind)
	case methodKey(ClassQueue, 21):
		return new(QueueBindOk)
	case methodKey(ClassQueue, 30):
		return new(QueuePurge)
	case methodKey(ClassQueue, 31):
		return new(QueuePurgeOk)
	case methodKey(ClassQueue, 40):
		return new(QueueDelete)
	case methodKey(ClassQueue, 41):
		return new(QueueDeleteOk)
	case methodKey(ClassQueue, 50):
		return new(QueueUnbind)
	case methodKey(ClassQueue, 51):
		return new(QueueUnbindOk)
	case methodKey(ClassBasic, 10):
		return new(BasicQos)
	case methodKey(ClassBasic, 11):
		return new(BasicQosOk)
	case methodKey(ClassBasic, 20):
		return new(BasicConsume)
	case methodKey(ClassBasic, 21):
		return new(BasicConsumeOk)
	case methodKey(ClassBasic, 30):
		return new(BasicCancel)
	case methodKey(ClassBasic, 31):
		return new(BasicCancelOk)
	case methodKey(ClassBasic, 40):
		return new(BasicPublish)
	case methodKey(ClassBasic, 50):
		return new(BasicReturn)
	case methodKey(ClassBasic, 60):
		return new(BasicDeliver)
	case methodKey(ClassBasic, 70):
		return new(BasicGet)
	case methodKey(ClassBasic, 71):
		return new(BasicGetOk)
	case methodKey(ClassBasic, 72):
		return new(BasicGetEmpty)
	case methodKey(ClassBasic, 80):
		return new(BasicAck)
	case methodKey(ClassBasic, 90):
		return new(BasicReject)
	case methodKey(ClassBasic, 100):
		return new(BasicRecoverAsync)
	case methodKey(ClassBasic, 110):
		return new(BasicRecover)
	case methodKey(ClassBasic, 111):
		return new(BasicRecoverOk)
	case methodKey(ClassBasic, 120):
		return new(BasicNack)
	case methodKey(ClassTx, 10):
		return new(TxSelect)
	case methodKey(ClassTx, 11):
		return new(TxSelectOk)
	case methodKey(ClassTx, 20):
		return new(TxCommit)
	case methodKey(ClassTx, 21):
		return new(TxCommitOk)
	case methodKey(ClassTx, 30):
		return new(TxRollback)
	case methodKey(ClassTx, 31):
		return new(TxRollbackOk)
	case methodKey(ClassConfirm, 10):
		return new(ConfirmSelect)
	case methodKey(ClassConfirm, 11):
		return new(ConfirmSelectOk)
	}
	return nil
}
