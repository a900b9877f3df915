package amqp

import "fmt"

// DecodeError reports malformed or out-of-bounds AMQP input; a server maps it
// to the amqp:decode-error condition (§2.8.15), or to
// amqp:connection:framing-error (§2.8.17) when Framing is set.
type DecodeError struct {
	// Msg says what was wrong with the input.
	Msg string
	// Framing says that the frame header is what is wrong: a size over the
	// max-frame-size, a data offset out of the frame or an unknown frame
	// type. No frame can be formed from the stream after it.
	Framing bool
}

// Error returns the message prefixed with the package name and the kind
// of fault.
func (e *DecodeError) Error() string {
	if e.Framing {
		return "amqp: framing: " + e.Msg
	}
	return "amqp: decode: " + e.Msg
}

func decodeErrorf(format string, args ...any) *DecodeError {
	return &DecodeError{Msg: fmt.Sprintf(format, args...)}
}

// framingErrorf reports a frame header from which no frame can be formed.
func framingErrorf(format string, args ...any) *DecodeError {
	return &DecodeError{Msg: fmt.Sprintf(format, args...), Framing: true}
}

// errTruncated reports input that ends before an encoding is complete.
func errTruncated() *DecodeError { return &DecodeError{Msg: "truncated input"} }
