package sqlfilter

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// The operators follow C#'s dynamic binding, which the service evaluates
// with ("Operators follow C# implicit conversion semantics"): long and
// double mix as double, integer arithmetic is checked, strings compare only
// for (in)equality and ordinally, '+' with a string concatenates, DateTime
// and TimeSpan combine as in .NET. Any other pairing is a runtime error
// that names the .NET types, as the binder's is.

// truth is a three-valued logic value.
type truth uint8

const (
	falsy truth = iota
	truthy
	unknown
)

func truthOf(b bool) truth {
	if b {
		return truthy
	}
	return falsy
}

func (t truth) not() truth {
	switch t {
	case truthy:
		return falsy
	case falsy:
		return truthy
	}
	return unknown
}

// csharpOp is the C# spelling of a comparison operator, for error texts.
func csharpOp(op string) string {
	switch op {
	case "=":
		return "=="
	case "<>":
		return "!="
	}
	return op
}

// compare evaluates a <op> b for op in = <> != < <= > >=. NULL on either
// side is unknown.
func compare(op string, a, b value) (truth, error) {
	if a.k == kNull || b.k == kNull {
		return unknown, nil
	}
	c, ordered, ok := order(a, b)
	if !ok {
		return falsy, binaryTypeError(csharpOp(op), a, b)
	}
	if !ordered && op != "=" && op != "<>" && op != "!=" {
		return falsy, binaryTypeError(csharpOp(op), a, b)
	}
	switch op {
	case "=":
		return truthOf(c == 0), nil
	case "<>", "!=":
		return truthOf(c != 0), nil
	case "<":
		return truthOf(c == -1), nil
	case "<=":
		return truthOf(c == -1 || c == 0), nil
	case ">":
		return truthOf(c == 1), nil
	case ">=":
		return truthOf(c == 1 || c == 0), nil
	}
	return falsy, runtimeError("unknown comparison %q", op)
}

// order compares two non-NULL values: c is -1, 0 or 1, or 2 when they are
// unordered (NaN, or unequal values of a type without an order). ordered
// says whether < and > apply to the pair; ok whether = does.
func order(a, b value) (c int, ordered, ok bool) {
	switch {
	case a.k == kInt && b.k == kInt:
		return cmpInt(a.n, b.n), true, true
	case isNumber(a) && isNumber(b):
		x, y := a.float(), b.float()
		switch {
		case x < y:
			return -1, true, true
		case x > y:
			return 1, true, true
		case x == y:
			return 0, true, true
		}
		return 2, true, true // NaN
	case a.k == kString && b.k == kString:
		return eqOrUnordered(a.s == b.s), false, true
	case a.k == kBool && b.k == kBool:
		return eqOrUnordered(a.n == b.n), false, true
	case a.k == kTime && b.k == kTime:
		return a.t.Compare(b.t), true, true
	case a.k == kDuration && b.k == kDuration:
		return cmpInt(a.n, b.n), true, true
	case a.k == kUUID && b.k == kUUID:
		return eqOrUnordered(a.u == b.u), false, true
	case a.k == kUUID && b.k == kString:
		// A deviation: .NET cannot compare Guid and string at all; a UUID
		// application property compared with its text is what people mean.
		u, valid := parseUUID(b.s)
		return eqOrUnordered(valid && u == a.u), false, true
	case a.k == kString && b.k == kUUID:
		return order(b, a)
	}
	return 0, false, false
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func eqOrUnordered(eq bool) int {
	if eq {
		return 0
	}
	return 2
}

func isNumber(v value) bool { return v.k == kInt || v.k == kFloat }

func (v value) float() float64 {
	if v.k == kInt {
		return float64(v.n)
	}
	return v.f
}

// equal is = for IN and correlation filters: values that cannot be compared
// are simply not equal.
func equal(a, b value) bool {
	if a.k == kNull || b.k == kNull {
		return a.k == b.k
	}
	c, _, ok := order(a, b)
	return ok && c == 0
}

// maxStringLength is the longest string arithmetic may build (the service's
// limit, short.MaxValue).
const maxStringLength = 32767

// arith evaluates a <op> b for op in + - * / %. NULL on either side is NULL.
func arith(op string, a, b value) (value, error) {
	if a.k == kNull || b.k == kNull {
		return null, nil
	}
	switch {
	case a.k == kInt && b.k == kInt:
		return intArith(op, a.n, b.n)
	case isNumber(a) && isNumber(b):
		x, y := a.float(), b.float()
		switch op {
		case "+":
			return floatValue(x + y), nil
		case "-":
			return floatValue(x - y), nil
		case "*":
			return floatValue(x * y), nil
		case "/":
			return floatValue(x / y), nil
		case "%":
			return floatValue(math.Mod(x, y)), nil
		}
	case op == "+" && (a.k == kString || b.k == kString):
		if a.k == kOther || b.k == kOther {
			break
		}
		s := a.text() + b.text()
		if utf8.RuneCountInString(s) > maxStringLength {
			return null, runtimeError("The string '%s...' is %d characters long, more than the %d allowed.",
				truncate(s, 20), utf8.RuneCountInString(s), maxStringLength)
		}
		return stringValue(s), nil
	case a.k == kTime && b.k == kDuration && (op == "+" || op == "-"):
		d := time.Duration(b.n)
		if op == "-" {
			if d == math.MinInt64 {
				return null, errOverflow()
			}
			d = -d
		}
		return timeValue(a.t.Add(d)), nil
	case a.k == kTime && b.k == kTime && op == "-":
		return durationValue(a.t.Sub(b.t)), nil
	case a.k == kDuration && b.k == kDuration && (op == "+" || op == "-"):
		v, err := intArith(op, a.n, b.n)
		return durationValue(time.Duration(v.n)), err
	}
	return null, binaryTypeError(op, a, b)
}

func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// intArith is checked long arithmetic, as C#'s checked context.
func intArith(op string, x, y int64) (value, error) {
	switch op {
	case "+":
		r := x + y
		if (x > 0 && y > 0 && r < 0) || (x < 0 && y < 0 && r >= 0) {
			return null, errOverflow()
		}
		return intValue(r), nil
	case "-":
		r := x - y
		if (x >= 0 && y < 0 && r < 0) || (x < 0 && y > 0 && r >= 0) {
			return null, errOverflow()
		}
		return intValue(r), nil
	case "*":
		if x == 0 || y == 0 {
			return intValue(0), nil
		}
		r := x * y
		if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return null, errOverflow()
		}
		return intValue(r), nil
	case "/", "%":
		if y == 0 {
			return null, errDivideByZero()
		}
		if x == math.MinInt64 && y == -1 {
			return null, errOverflow()
		}
		if op == "/" {
			return intValue(x / y), nil
		}
		return intValue(x % y), nil
	}
	return null, runtimeError("unknown operator %q", op)
}

// negate evaluates -a (or +a when plus is set).
func negate(a value, plus bool) (value, error) {
	opText := "-"
	if plus {
		opText = "+"
	}
	switch a.k {
	case kNull:
		return null, nil
	case kInt:
		if plus {
			return a, nil
		}
		if a.n == math.MinInt64 {
			return null, errOverflow()
		}
		return intValue(-a.n), nil
	case kFloat:
		if plus {
			return a, nil
		}
		return floatValue(-a.f), nil
	case kDuration:
		if plus {
			return a, nil
		}
		if a.n == math.MinInt64 {
			return null, errOverflow()
		}
		return durationValue(time.Duration(-a.n)), nil
	}
	return null, unaryTypeError(opText, a)
}

// like is the LIKE pattern, compiled: '%' is any run of characters, '_' is
// one character, and the escape character makes the next one literal.
type like []likeElem

type likeElem struct {
	k uint8 // likeLit, likeOne, likeAny
	r rune
}

const (
	likeLit = iota
	likeOne
	likeAny
)

// compileLike translates a pattern as the service does: an escape
// character at the very end is dropped, and only the first character of
// escape counts.
func compileLike(pattern, escape string) like {
	esc := rune(-1)
	if escape != "" {
		esc, _ = utf8.DecodeRuneInString(escape)
	}
	var l like
	escaped := false
	for _, r := range pattern {
		switch {
		case escaped:
			l = append(l, likeElem{k: likeLit, r: r})
			escaped = false
		case r == esc:
			escaped = true
		case r == '%':
			if len(l) == 0 || l[len(l)-1].k != likeAny {
				l = append(l, likeElem{k: likeAny})
			}
		case r == '_':
			l = append(l, likeElem{k: likeOne})
		default:
			l = append(l, likeElem{k: likeLit, r: r})
		}
	}
	return l
}

// match reports whether all of s matches, case-sensitively, by the greedy
// wildcard algorithm that backtracks to the last '%' only.
func (l like) match(s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(l) {
			e := l[pi]
			switch e.k {
			case likeAny:
				starP, starS = pi, si
				pi++
				continue
			case likeOne:
				_, n := utf8.DecodeRuneInString(s[si:])
				si += n
				pi++
				continue
			default:
				r, n := utf8.DecodeRuneInString(s[si:])
				if r == e.r {
					si += n
					pi++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[starS:])
		starS += n
		si, pi = starS, starP+1
	}
	for pi < len(l) && l[pi].k == likeAny {
		pi++
	}
	return pi == len(l)
}

// String writes the pattern back with '\' as escape, for tests.
func (l like) String() string {
	var b strings.Builder
	for _, e := range l {
		switch e.k {
		case likeAny:
			b.WriteByte('%')
		case likeOne:
			b.WriteByte('_')
		default:
			if e.r == '%' || e.r == '_' || e.r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(e.r)
		}
	}
	return b.String()
}
