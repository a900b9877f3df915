package core

import (
	"errors"
	"fmt"
)

// Error codes: each transport maps them to its own wire errors in one table.
const (
	ECONFLICT       = "conflict"        // the thing exists already, or differs
	EINTERNAL       = "internal"        // a bug or an I/O failure: its text is not shown to clients
	EINVALID        = "invalid"         // bad input
	ENOTFOUND       = "not_found"       // no such entity or item
	EPRECONDITION   = "precondition"    // a state the operation needs does not hold
	EUNAUTHORIZED   = "unauthorized"    // wrong or missing credentials
	ELOCKLOST       = "lock_lost"       // the item's lock ran out or was never held
	ETOOLARGE       = "too_large"       // over a size limit
	EUNAVAILABLE    = "unavailable"     // shutting down
	ERESOURCELOCKED = "resource_locked" // held exclusively by someone else
	// ESESSIONLOCKLOST: the caller does not hold the session (its lock ran
	// out, it was released, or another holder has it now).
	ESESSIONLOCKLOST = "session_lock_lost"
	ENOSESSION       = "no_session" // no session is available to accept
	// EFULL: the entity is at its length limit and refuses new items
	// (Policy.Overflow RejectNew, RejectNewDeadLetter).
	EFULL = "full"
	// EUNIQUE: a unique value of the item written is held by another live
	// item of its entity (Item.Unique); the Error's Key names the item
	// whose write was refused.
	EUNIQUE = "unique"
)

// Error is lapse's one domain error: a code from the list above and a
// message that is safe to show to a client (except for EINTERNAL).
type Error struct {
	Code    string
	Message string
	// Key is the key of the item the error is about, when there is one
	// (EUNIQUE).
	Key string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err's *Error, "" for nil and EINTERNAL for
// any other error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err: its *Error's message,
// or "internal error" for anything else.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		return e.Message
	}
	return "internal error"
}
