package sqlfilter

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind classifies a token of the filter and action languages.
type tokenKind uint8

const (
	tEOF       tokenKind = iota
	tIdent               // regular identifier: a letter, then letters, digits, '_'
	tDelimited           // [delimited] or "quoted" identifier; text is the unescaped name
	tParam               // @name; text includes the '@'
	tInt                 // 123
	tDecimal             // 1.5
	tDouble              // 1.5E3
	tString              // 'text'; text is the unescaped string
	tKeyword             // AND, OR, ...; text is upper case
	tOp                  // = <> != > >= < <= + - * / % ( ) , ; .
)

func (k tokenKind) String() string {
	return [...]string{"EOF", "IDENTIFIER", "DELIMITED_IDENTIFIER", "PARAMETER", "INTEGER",
		"DECIMAL", "DOUBLE", "STRING", "keyword", "operator"}[k]
}

// keywords are reserved: a regular identifier cannot be one of them (a
// delimited one can: [Not]).
var keywords = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "LIKE": true, "ESCAPE": true, "IN": true,
	"IS": true, "EXISTS": true, "TRUE": true, "FALSE": true, "NULL": true,
	"SET": true, "REMOVE": true,
}

// token is one lexeme and where it starts in the expression.
type token struct {
	kind tokenKind
	text string // see tokenKind
	raw  string // the lexeme as written
	pos  int    // byte offset
}

// lex splits the whole expression into tokens, ending with tEOF.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(src) {
			r, n := utf8.DecodeRuneInString(src[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += n
		}
		if i >= len(src) {
			return append(toks, token{kind: tEOF, pos: len(src)}), nil
		}
		t, err := lexOne(src, i)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		i = t.pos + len(t.raw)
	}
}

func lexOne(src string, i int) (token, error) {
	r, n := utf8.DecodeRuneInString(src[i:])
	switch {
	case r == utf8.RuneError && n == 1:
		return token{}, syntaxError(src, i, src[i:i+1], "Invalid UTF-8 in the expression.")
	case unicode.IsLetter(r):
		j := i + n
		for j < len(src) {
			r, n := utf8.DecodeRuneInString(src[j:])
			if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			j += n
		}
		word := src[i:j]
		if up := strings.ToUpper(word); keywords[up] {
			return token{kind: tKeyword, text: up, raw: word, pos: i}, nil
		}
		return token{kind: tIdent, text: word, raw: word, pos: i}, nil
	case r >= '0' && r <= '9' || r == '.' && i+1 < len(src) && isDigit(src[i+1]):
		return lexNumber(src, i)
	case r == '\'':
		return lexQuoted(src, i, '\'', '\'', tString, "Unterminated string constant.")
	case r == '[':
		return lexQuoted(src, i, '[', ']', tDelimited, "Unterminated delimited identifier.")
	case r == '"':
		return lexQuoted(src, i, '"', '"', tDelimited, "Unterminated quoted identifier.")
	case r == '@':
		j := i + 1
		for j < len(src) {
			r, n := utf8.DecodeRuneInString(src[j:])
			if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			j += n
		}
		if j == i+1 {
			return token{}, syntaxError(src, i, "@", "A parameter name must follow '@'.")
		}
		return token{kind: tParam, text: src[i:j], raw: src[i:j], pos: i}, nil
	}
	for _, op := range []string{"<>", "!=", ">=", "<=", "=", ">", "<", "+", "-", "*", "/", "%", "(", ")", ",", ";", "."} {
		if strings.HasPrefix(src[i:], op) {
			return token{kind: tOp, text: op, raw: op, pos: i}, nil
		}
	}
	return token{}, syntaxError(src, i, string(r), "Unrecognized character. '"+string(r)+"'")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lexNumber reads an integer (digits), a decimal (digits with a point) or an
// approximate number (with an exponent).
func lexNumber(src string, i int) (token, error) {
	j := i
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	kind := tInt
	if j < len(src) && src[j] == '.' {
		kind = tDecimal
		j++
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(src[k]) {
			for k < len(src) && isDigit(src[k]) {
				k++
			}
			kind, j = tDouble, k
		}
	}
	if j < len(src) {
		if r, _ := utf8.DecodeRuneInString(src[j:]); unicode.IsLetter(r) || r == '_' {
			return token{}, syntaxError(src, i, src[i:j+1], "Invalid number.")
		}
	}
	return token{kind: kind, text: src[i:j], raw: src[i:j], pos: i}, nil
}

// lexQuoted reads text between open and close, where a doubled close stands
// for one.
func lexQuoted(src string, i int, open, close byte, kind tokenKind, unterminated string) (token, error) {
	var b strings.Builder
	j := i + 1
	for {
		k := strings.IndexByte(src[j:], close)
		if k < 0 {
			return token{}, syntaxError(src, i, src[i:], unterminated)
		}
		b.WriteString(src[j : j+k])
		j += k + 1
		if j < len(src) && src[j] == close {
			b.WriteByte(close)
			j++
			continue
		}
		return token{kind: kind, text: b.String(), raw: src[i:j], pos: i}, nil
	}
}
