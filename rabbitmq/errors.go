package rabbitmq

import (
	"errors"
	"fmt"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// amqpError is an error the server answers with a channel.close or a
// connection.close: the reply code, RabbitMQ's reply text (which starts
// with the code's name, "NOT_FOUND - no queue 'q' in vhost '/'") and the
// method that caused it.
type amqpError struct {
	code     uint16
	text     string
	conn     bool // a connection error rather than a channel error
	classID  uint16
	methodID uint16
}

func (e *amqpError) Error() string { return e.text }

// channelError returns a channel error with RabbitMQ's "NAME - text" form.
func channelError(code uint16, format string, args ...any) *amqpError {
	return &amqpError{code: code, text: wire.ReplyText(code, fmt.Sprintf(format, args...))}
}

// connectionError returns a connection error with RabbitMQ's "NAME - text" form.
func connectionError(code uint16, format string, args ...any) *amqpError {
	e := channelError(code, format, args...)
	e.conn = true
	return e
}

// fromCore maps an engine error to the reply RabbitMQ gives: one table for
// the protocol (docs/architecture.md, conventions). Adapter errors carry RabbitMQ's own text.
// An *amqpError, wrapped or not, is that reply: callers turn any error
// into a reply with it rather than assert its type (issue 16.3).
func fromCore(err error) *amqpError {
	if err == nil {
		return nil
	}
	var e *amqpError
	if errors.As(err, &e) {
		return e
	}
	msg := core.ErrorMessage(err)
	switch core.ErrorCode(err) {
	case core.ENOTFOUND:
		return channelError(wire.NotFound, "%s", msg)
	case core.EPRECONDITION, core.EINVALID, core.ECONFLICT:
		return channelError(wire.PreconditionFailed, "%s", msg)
	case core.ERESOURCELOCKED:
		return channelError(wire.ResourceLocked, "%s", msg)
	case core.EUNAUTHORIZED:
		return channelError(wire.AccessRefused, "%s", msg)
	}
	// Internal errors never leak their text.
	return connectionError(wire.InternalError, "internal error")
}

func notFoundQueue(vhost, name string) *amqpError {
	return channelError(wire.NotFound, "no queue '%s' in vhost '%s'", name, vhost)
}

func notFoundExchange(vhost, name string) *amqpError {
	return channelError(wire.NotFound, "no exchange '%s' in vhost '%s'", name, vhost)
}

func lockedQueue(vhost, name string) *amqpError {
	return channelError(wire.ResourceLocked, "cannot obtain exclusive access to locked queue '%s' in vhost '%s'. "+
		"It could be originally declared on another connection or the exclusive property value does not match "+
		"that of the original declaration.", name, vhost)
}
