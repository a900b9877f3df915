package query

import "fmt"

// Error is a query error as the service reports it: a code such as SC1001
// (syntax) or SC2001 (semantic), the byte span [Start, End) of the offending
// part of the query text, and the service's message.
type Error struct {
	Code       string
	Start, End int
	Message    string
}

// Error returns the code and message, with the span.
func (e *Error) Error() string {
	return fmt.Sprintf("%s at %d-%d: %s", e.Code, e.Start, e.End, e.Message)
}

// The error codes this package reports. The syntax and resolution codes and
// texts are the service's; where the service's code is not documented the
// code is the closest one it uses.
const (
	codeSyntax      = "SC1001" // Syntax error, incorrect syntax near '...'.
	codeEOF         = "SC1002" // Syntax error, unexpected end-of-file.
	codeBadString   = "SC1012" // Syntax error, invalid string literal token '...'.
	codeUnresolved  = "SC2001" // Identifier '...' could not be resolved.
	codeUnknownFunc = "SC2005" // '...' is not a recognized built-in function name.
	codeSemantic    = "SC2001" // other semantic errors (argument counts, misplaced aggregates, parameters)
)

// errAt returns an *Error with a code, span and formatted message.
func errAt(code string, s span, format string, args ...any) *Error {
	return &Error{Code: code, Start: s.start, End: s.end, Message: fmt.Sprintf(format, args...)}
}
