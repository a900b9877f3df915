package query

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

// The token kinds.
const (
	tokEOF     tokKind = iota
	tokIdent           // name, or a keyword (see token.kw)
	tokNumber          // numeric literal; token.num holds its value
	tokString          // string literal; token.str holds its decoded text
	tokParam           // @name; token.str holds the name with its @
	tokOp              // punctuation or operator; token.str holds it
	tokInvalid         // a byte or literal the language does not have
)

// token is one lexical token with its byte span in the query text.
type token struct {
	kind       tokKind
	start, end int
	str        string  // identifier text, decoded string, parameter name or operator
	num        float64 // value of a number literal
	kw         keyword // for identifiers that are keywords, else kwNone
	badString  bool    // a string literal with an invalid escape or no end
}

// keyword identifies a reserved word of the language.
type keyword uint8

// The reserved words. true, false, null and undefined are matched case
// sensitively, as by the service; the others in any case.
const (
	kwNone keyword = iota
	kwAnd
	kwArray
	kwAs
	kwAsc
	kwBetween
	kwBy
	kwDesc
	kwDistinct
	kwEscape
	kwExists
	kwFalse
	kwFrom
	kwGroup
	kwIn
	kwJoin
	kwLeft
	kwLike
	kwLimit
	kwNot
	kwNull
	kwOffset
	kwOr
	kwOrder
	kwRight
	kwSelect
	kwTop
	kwTrue
	kwUdf
	kwUndefined
	kwValue
	kwWhere
)

// keywords maps the upper-case spelling of each case-insensitive keyword.
var keywords = map[string]keyword{
	"AND": kwAnd, "ARRAY": kwArray, "AS": kwAs, "ASC": kwAsc, "BETWEEN": kwBetween,
	"BY": kwBy, "DESC": kwDesc, "DISTINCT": kwDistinct, "ESCAPE": kwEscape,
	"EXISTS": kwExists, "FROM": kwFrom, "GROUP": kwGroup, "IN": kwIn, "JOIN": kwJoin,
	"LEFT": kwLeft, "LIKE": kwLike, "LIMIT": kwLimit, "NOT": kwNot, "OFFSET": kwOffset,
	"OR": kwOr, "ORDER": kwOrder, "RIGHT": kwRight, "SELECT": kwSelect, "TOP": kwTop,
	"VALUE": kwValue, "WHERE": kwWhere,
}

// lookupKeyword returns the keyword an identifier spells, or kwNone.
func lookupKeyword(s string) keyword {
	switch s {
	case "true":
		return kwTrue
	case "false":
		return kwFalse
	case "null":
		return kwNull
	case "undefined":
		return kwUndefined
	case "udf":
		return kwUdf
	}
	if len(s) < 2 || len(s) > 8 {
		return kwNone
	}
	var buf [8]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return keywords[string(buf[:len(s)])]
}

// lexer splits a query text into tokens.
type lexer struct {
	src string
	pos int
}

// isIdentStart reports whether c may begin an identifier.
func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// isIdentPart reports whether c may continue an identifier.
func isIdentPart(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9'
}

// skipSpace moves past whitespace and -- line comments.
func (l *lexer) skipSpace() {
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '-' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '-':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		default:
			return
		}
	}
}

// operators lists the punctuation, longest first where one is a prefix of another.
var operators = []string{
	">>>", "<<", ">>", "<=", ">=", "!=", "<>", "||", "??",
	"+", "-", "*", "/", "%", "<", ">", "=", "&", "|", "^", "~",
	"(", ")", "[", "]", "{", "}", ",", ".", ":", "?",
}

// next returns the next token.
func (l *lexer) next() token {
	l.skipSpace()
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, start: start, end: start}
	}
	c := l.src[l.pos]
	switch {
	case isIdentStart(c):
		for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
			l.pos++
		}
		s := l.src[start:l.pos]
		return token{kind: tokIdent, start: start, end: l.pos, str: s, kw: lookupKeyword(s)}
	case c >= '0' && c <= '9' || c == '.' && l.pos+1 < len(l.src) && l.src[l.pos+1] >= '0' && l.src[l.pos+1] <= '9':
		return l.number()
	case c == '"' || c == '\'':
		return l.str(c)
	case c == '@':
		l.pos++
		if l.pos >= len(l.src) || !isIdentStart(l.src[l.pos]) {
			return token{kind: tokInvalid, start: start, end: l.pos, str: "@"}
		}
		for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tokParam, start: start, end: l.pos, str: l.src[start:l.pos]}
	}
	for _, op := range operators {
		if strings.HasPrefix(l.src[l.pos:], op) {
			l.pos += len(op)
			return token{kind: tokOp, start: start, end: l.pos, str: op}
		}
	}
	_, n := utf8.DecodeRuneInString(l.src[l.pos:])
	l.pos += n
	return token{kind: tokInvalid, start: start, end: l.pos, str: l.src[start:l.pos]}
}

// number scans a decimal literal (digits, fraction, exponent) or a
// hexadecimal one (0x...).
func (l *lexer) number() token {
	start := l.pos
	s := l.src
	if s[l.pos] == '0' && l.pos+1 < len(s) && (s[l.pos+1] == 'x' || s[l.pos+1] == 'X') {
		l.pos += 2
		for l.pos < len(s) && isHex(s[l.pos]) {
			l.pos++
		}
		u, err := strconv.ParseUint(s[start+2:l.pos], 16, 64)
		if err != nil {
			if l.pos == start+2 {
				return token{kind: tokInvalid, start: start, end: l.pos, str: s[start:l.pos]}
			}
			f, _ := strconv.ParseFloat(s[start:l.pos]+"p0", 64)
			return token{kind: tokNumber, start: start, end: l.pos, num: f}
		}
		return token{kind: tokNumber, start: start, end: l.pos, num: float64(u)}
	}
	for l.pos < len(s) && s[l.pos] >= '0' && s[l.pos] <= '9' {
		l.pos++
	}
	if l.pos < len(s) && s[l.pos] == '.' {
		l.pos++
		for l.pos < len(s) && s[l.pos] >= '0' && s[l.pos] <= '9' {
			l.pos++
		}
	}
	if l.pos < len(s) && (s[l.pos] == 'e' || s[l.pos] == 'E') {
		p := l.pos + 1
		if p < len(s) && (s[p] == '+' || s[p] == '-') {
			p++
		}
		if p < len(s) && s[p] >= '0' && s[p] <= '9' {
			for p < len(s) && s[p] >= '0' && s[p] <= '9' {
				p++
			}
			l.pos = p
		}
	}
	f, err := strconv.ParseFloat(s[start:l.pos], 64)
	if err != nil {
		// Only a range error is possible here; ParseFloat returns ±Inf.
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return token{kind: tokInvalid, start: start, end: l.pos, str: s[start:l.pos]}
		}
	}
	return token{kind: tokNumber, start: start, end: l.pos, num: f}
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// str scans a string literal quoted with q and decodes its escapes.
func (l *lexer) str(q byte) token {
	start := l.pos
	l.pos++
	var b strings.Builder
	bad := false
	for {
		if l.pos >= len(l.src) {
			return token{kind: tokString, start: start, end: l.pos, str: b.String(), badString: true}
		}
		c := l.src[l.pos]
		if c == q {
			l.pos++
			return token{kind: tokString, start: start, end: l.pos, str: b.String(), badString: bad}
		}
		if c < 0x20 {
			// Control characters must be escaped, as in JSON.
			bad = true
		}
		if c != '\\' {
			b.WriteByte(c)
			l.pos++
			continue
		}
		l.pos++
		if l.pos >= len(l.src) {
			continue
		}
		e := l.src[l.pos]
		l.pos++
		switch e {
		case '\'', '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := l.hex4()
			if !ok {
				bad = true
				continue
			}
			if utf16.IsSurrogate(r) && strings.HasPrefix(l.src[l.pos:], "\\u") {
				save := l.pos
				l.pos += 2
				if lo, ok := l.hex4(); ok && utf16.DecodeRune(r, lo) != utf8.RuneError {
					r = utf16.DecodeRune(r, lo)
				} else {
					l.pos = save
				}
			}
			b.WriteRune(r)
		default:
			bad = true
		}
	}
}

// hex4 reads four hex digits of a \u escape.
func (l *lexer) hex4() (rune, bool) {
	if len(l.src)-l.pos < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(l.src[l.pos:l.pos+4], 16, 32)
	if err != nil {
		return 0, false
	}
	l.pos += 4
	return rune(v), true
}
