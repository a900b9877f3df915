package amqp

import "fmt"

// DecodeError reports malformed or out-of-bounds AMQP input; a server maps it
// to the amqp:decode-error condition (§2.8.15).
type DecodeError struct {
	// Msg says what was wrong with the input.
	Msg string
}

// Error returns the message prefixed with the package name.
func (e *DecodeError) Error() string { return "amqp: decode: " + e.Msg }

func decodeErrorf(format string, args ...any) *DecodeError {
	return &DecodeError{Msg: fmt.Sprintf(format, args...)}
}

// errTruncated reports input that ends before an encoding is complete.
func errTruncated() *DecodeError { return &DecodeError{Msg: "truncated input"} }
