package amqp

// Error is the AMQP error type (§2.8.14) carried by detach, end, close and
// the rejected outcome. It also implements the Go error interface.
type Error struct {
	// Condition is the error condition, such as amqp:not-found (§2.8.15).
	Condition Symbol
	// Description is a human-readable account of the error.
	Description string
	// Info carries further details, keyed by symbol.
	Info Map
}

// Error formats the condition and description.
func (e *Error) Error() string {
	if e.Description == "" {
		return "amqp: " + string(e.Condition)
	}
	return "amqp: " + string(e.Condition) + ": " + e.Description
}

// Descriptor returns the numeric descriptor of the error type, 0x1d.
func (e *Error) Descriptor() uint64 { return descError }

// AppendTo appends the encoded error to dst, every field written, nulls
// too; a nil *Error encodes as null.
func (e *Error) AppendTo(dst []byte) ([]byte, error) {
	if e == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descError)
	w.symbol(e.Condition)
	w.optString(e.Description)
	w.mapv(e.Info)
	// All three fields, as the service writes an error: the AMQP stack of
	// azure-servicebus 7.9 and later reads a rejected outcome's error and a
	// close's by index, info at 2, and a shorter list stops its send with an
	// IndexError, never finished (issue 27).
	w.keep()
	return w.finish()
}

func (e *Error) decodeFields(f *fields) {
	var ok bool
	if e.Condition, ok = f.symbol(); !ok {
		f.missing("condition")
	}
	e.Description, _ = f.string()
	e.Info = f.mapv()
}
