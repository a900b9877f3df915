package sqlfilter

import (
	"strings"
	"unicode/utf8"
)

// MaxExpressionLength is the longest SQL filter or rule action expression,
// in characters (Service Bus quotas: "Maximum length of filter condition
// string: 1,024", and the same for rule actions).
const MaxExpressionLength = 1024

// Message is what a filter reads: a message's system and user (application)
// properties.
type Message interface {
	// System returns a system property by its canonical name as in the doc
	// ("MessageId", "Label", ...); the parser resolves case and the Subject
	// alias.
	System(name string) (any, bool)
	// User returns an application property by its exact name (a
	// correlation filter's properties).
	User(name string) (any, bool)
	// UserFold returns an application property by a SQL expression's name
	// for it, whose case does not matter: the property of that exact name,
	// else the first whose name differs in case only.
	UserFold(name string) (any, bool)
}

// Filter is a compiled SQL filter expression, safe for concurrent use.
type Filter struct {
	expr string
	pred predFn
}

// Compile parses a SQL filter expression ("color = 'blue' AND quantity =
// 10", "sys.Label LIKE 'Store%'", "1=1") with the values of the @parameters
// it uses. Keys of params may be written with or without the '@' and match
// case-insensitively; a parameter used but not supplied, or supplied but not
// used, is an error, as in the service. Errors are core.EINVALID.
func Compile(expr string, params map[string]any) (*Filter, error) {
	p, err := parse(expr, params, "SQL filter expression")
	if err != nil {
		return nil, err
	}
	n, err := p.predicate()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, unexpected(expr, t, "AND, OR, or <EOF>")
	}
	if err := p.checkParams(); err != nil {
		return nil, err
	}
	return &Filter{expr: expr, pred: compilePred(n)}, nil
}

// parse checks the length of the expression and starts a parser over it.
func parse(expr string, params map[string]any, what string) (*parser, error) {
	if n := utf8.RuneCountInString(expr); n > MaxExpressionLength {
		return nil, tooLong(what, n, MaxExpressionLength)
	}
	if strings.TrimSpace(expr) == "" {
		return nil, semanticError("The %s is empty.", what)
	}
	return newParser(expr, params)
}

// Match reports whether the filter is TRUE for m; FALSE and unknown (say, a
// comparison with a missing property) do not match. An error is an
// evaluation the service fails (a type mismatch, division by zero,
// overflow); the service then dead-letters the message when the
// subscription says so.
func (f *Filter) Match(m Message) (bool, error) {
	t, err := f.pred(m)
	if err != nil {
		return false, err
	}
	return t == truthy, nil
}

// String returns the expression as given to Compile.
func (f *Filter) String() string { return f.expr }
