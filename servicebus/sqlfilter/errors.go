package sqlfilter

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lapse-emulator/lapse/core"
)

// syntaxError reports a token the parser cannot use, in the service's
// wording (a 400 from the management API reads "There was an error parsing
// the SQL expression. [Token line=1, column=0, Token in error= EventType,
// Additional details= syntax error, unexpected IDENTIFIER, expecting SET, or
// REMOVE]"). Lines count from 1 and columns from 0, in characters, as there.
func syntaxError(src string, pos int, tok, details string) error {
	line, col := position(src, pos)
	if tok == "" {
		tok = "<EOF>"
	}
	return core.Errorf(core.EINVALID,
		"There was an error parsing the SQL expression. [Token line=%d, column=%d, Token in error=%s, Additional details=%s]",
		line, col, tok, details)
}

func position(src string, pos int) (line, col int) {
	if pos > len(src) {
		pos = len(src)
	}
	before := src[:pos]
	line = strings.Count(before, "\n") + 1
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCountInString(before)
}

// semanticError reports an expression that parses but cannot be compiled:
// an unknown system property or function, a missing parameter, ...
func semanticError(format string, args ...any) error {
	return core.Errorf(core.EINVALID, format, args...)
}

// runtimeError reports a failure while evaluating against one message; the
// service raises a FilterException (filters) or RuleActionException
// (actions), and by default dead-letters the message.
func runtimeError(format string, args ...any) error {
	return core.Errorf(core.EINVALID, format, args...)
}

func binaryTypeError(op string, a, b value) error {
	return runtimeError("Operator '%s' cannot be applied to operands of type '%s' and '%s'", op, a.typeName(), b.typeName())
}

func unaryTypeError(op string, a value) error {
	return runtimeError("Operator '%s' cannot be applied to operand of type '%s'", op, a.typeName())
}

func errOverflow() error { return runtimeError("Arithmetic operation resulted in an overflow.") }

func errDivideByZero() error { return runtimeError("Attempted to divide by zero.") }

func tooLong(what string, n, max int) error {
	return semanticError("The %s is %d characters long, more than the %d allowed.", what, n, max)
}

func describe(t token) string {
	if t.kind == tEOF {
		return "<EOF>"
	}
	return t.raw
}

func unexpected(src string, t token, expecting string) error {
	what := t.kind.String()
	switch t.kind {
	case tKeyword:
		what = t.text
	case tOp:
		what = fmt.Sprintf("'%s'", t.text)
	}
	details := "syntax error, unexpected " + what
	if expecting != "" {
		details += ", expecting " + expecting
	}
	return syntaxError(src, t.pos, describe(t), details)
}
