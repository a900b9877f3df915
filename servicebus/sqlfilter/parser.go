package sqlfilter

import (
	"strconv"
	"strings"
)

// op is what a syntax tree node does.
type op uint8

const (
	nConst  op = iota // val
	nProp             // a property: sys (canonical name) or user
	nNewID            // newid()
	nPropFn           // property(expr), p(expr): a user property by computed name
	nNeg              // -x
	nPos              // +x
	nAdd              // x + y
	nSub              // x - y
	nMul              // x * y
	nDiv              // x / y
	nMod              // x % y
	nCmp              // x <cmp> y, cmp in text
	nAnd              // all kids
	nOr               // any kid
	nNot              // NOT x
	nIn               // kids[0] [NOT] IN (kids[1:])
	nLike             // kids[0] [NOT] LIKE kids[1] [ESCAPE kids[2]]
	nIsNull           // kids[0] IS [NOT] NULL
	nExists           // EXISTS(prop)
)

// node is a syntax tree node.
type node struct {
	op   op
	pos  int    // byte offset of the node's operator or first token
	text string // nCmp: the operator as written; nProp: the name
	sys  bool   // nProp: a system property
	not  bool   // NOT IN, NOT LIKE, IS NOT NULL
	val  value  // nConst
	kids []*node
}

// isPredicate says whether the node yields a truth value (the grammar's
// <predicate>) rather than a value (<expression>). TRUE and FALSE count as
// both, so that "TRUE" alone is a filter.
func (n *node) isPredicate() bool {
	switch n.op {
	case nCmp, nAnd, nOr, nNot, nIn, nLike, nIsNull, nExists:
		return true
	case nConst:
		return n.val.k == kBool
	}
	return false
}

func (n *node) isExpression() bool {
	switch n.op {
	case nCmp, nAnd, nOr, nNot, nIn, nLike, nIsNull, nExists:
		return false
	}
	return true
}

// maxDepth bounds nesting (parentheses, NOT, unary signs) so that a hostile
// expression cannot exhaust the stack; 1,024 characters allow ~500 levels
// otherwise.
const maxDepth = 64

// parser is a recursive-descent parser over the tokens of one expression.
type parser struct {
	src    string
	toks   []token
	i      int
	depth  int
	params map[string]value // key: lower-case name with '@'
	used   map[string]bool
}

func newParser(src string, params map[string]any) (*parser, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks, params: map[string]value{}, used: map[string]bool{}}
	for k, v := range params {
		name := strings.ToLower(k)
		if !strings.HasPrefix(name, "@") {
			name = "@" + name
		}
		val := fromGo(v)
		if val.k == kOther {
			return nil, semanticError("The value of parameter '%s' has type %T, which a SQL expression cannot use.", k, v)
		}
		p.params[name] = val
	}
	return p, nil
}

// checkParams fails if a supplied parameter is not used, as the service's
// validation does.
func (p *parser) checkParams() error {
	for name := range p.params {
		if !p.used[name] {
			return semanticError("The parameter '%s' was specified but is not used in the SQL expression.", name)
		}
	}
	return nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == s
}

func (p *parser) isKeyword(s string) bool {
	t := p.peek()
	return t.kind == tKeyword && t.text == s
}

func (p *parser) expectOp(s string) error {
	if !p.isOp(s) {
		return unexpected(p.src, p.peek(), "'"+s+"'")
	}
	p.next()
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		t := p.peek()
		return syntaxError(p.src, t.pos, describe(t), "The expression is nested more than "+strconv.Itoa(maxDepth)+" levels deep.")
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// predicate parses a <predicate> and checks that it is one.
func (p *parser) predicate() (*node, error) {
	start := p.peek()
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if !n.isPredicate() {
		return nil, syntaxError(p.src, start.pos, describe(start), "A condition (a comparison, IN, LIKE, IS NULL or EXISTS) is expected here, not a value.")
	}
	return n, nil
}

// expression parses an <expression> and checks that it is one.
func (p *parser) expression() (*node, error) {
	start := p.peek()
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if !n.isExpression() {
		return nil, syntaxError(p.src, start.pos, describe(start), "A value is expected here, not a condition.")
	}
	return n, nil
}

func (p *parser) checkPredicate(n *node, at token) error {
	if !n.isPredicate() {
		return syntaxError(p.src, at.pos, describe(at), "AND, OR and NOT apply to conditions, not to values.")
	}
	return nil
}

func (p *parser) checkExpression(n *node, at token) error {
	if !n.isExpression() {
		return syntaxError(p.src, at.pos, describe(at), "A value is expected here, not a condition.")
	}
	return nil
}

func (p *parser) or() (*node, error) {
	return p.logical("OR", nOr, p.and)
}

func (p *parser) and() (*node, error) {
	return p.logical("AND", nAnd, p.not)
}

// logical parses a chain "x KW y KW z" into one node with all operands, so
// that long chains are neither deep trees nor deep recursion.
func (p *parser) logical(kw string, o op, operand func() (*node, error)) (*node, error) {
	first := p.peek()
	n, err := operand()
	if err != nil {
		return nil, err
	}
	if !p.isKeyword(kw) {
		return n, nil
	}
	if err := p.checkPredicate(n, first); err != nil {
		return nil, err
	}
	chain := &node{op: o, pos: p.peek().pos, kids: []*node{n}}
	for p.isKeyword(kw) {
		p.next()
		at := p.peek()
		k, err := operand()
		if err != nil {
			return nil, err
		}
		if err := p.checkPredicate(k, at); err != nil {
			return nil, err
		}
		chain.kids = append(chain.kids, k)
	}
	return chain, nil
}

func (p *parser) not() (*node, error) {
	if !p.isKeyword("NOT") {
		return p.comparison()
	}
	t := p.next()
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	at := p.peek()
	k, err := p.not()
	if err != nil {
		return nil, err
	}
	if err := p.checkPredicate(k, at); err != nil {
		return nil, err
	}
	return &node{op: nNot, pos: t.pos, kids: []*node{k}}, nil
}

func (p *parser) comparison() (*node, error) {
	first := p.peek()
	left, err := p.additive()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tOp && (t.text == "=" || t.text == "<>" || t.text == "!=" || t.text == "<" ||
		t.text == "<=" || t.text == ">" || t.text == ">="):
		p.next()
		right, err := p.operand(p.additive)
		if err != nil {
			return nil, err
		}
		if err := p.checkExpression(left, first); err != nil {
			return nil, err
		}
		return &node{op: nCmp, pos: t.pos, text: t.text, kids: []*node{left, right}}, nil
	case t.kind == tKeyword && t.text == "IS":
		p.next()
		not := false
		if p.isKeyword("NOT") {
			p.next()
			not = true
		}
		if !p.isKeyword("NULL") {
			return nil, unexpected(p.src, p.peek(), "NULL")
		}
		p.next()
		if err := p.checkExpression(left, first); err != nil {
			return nil, err
		}
		return &node{op: nIsNull, pos: t.pos, not: not, kids: []*node{left}}, nil
	case t.kind == tKeyword && (t.text == "NOT" || t.text == "IN" || t.text == "LIKE"):
		not := false
		if t.text == "NOT" {
			p.next()
			not = true
			if !p.isKeyword("IN") && !p.isKeyword("LIKE") {
				return nil, unexpected(p.src, p.peek(), "IN, or LIKE")
			}
		}
		if err := p.checkExpression(left, first); err != nil {
			return nil, err
		}
		if p.next().text == "IN" {
			return p.in(left, t.pos, not)
		}
		return p.like(left, t.pos, not)
	}
	return left, nil
}

// operand parses one operand with sub and checks it is a value.
func (p *parser) operand(sub func() (*node, error)) (*node, error) {
	at := p.peek()
	n, err := sub()
	if err != nil {
		return nil, err
	}
	if err := p.checkExpression(n, at); err != nil {
		return nil, err
	}
	return n, nil
}

func (p *parser) in(left *node, pos int, not bool) (*node, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	n := &node{op: nIn, pos: pos, not: not, kids: []*node{left}}
	for {
		item, err := p.operand(p.additive)
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, item)
		if p.isOp(",") {
			p.next()
			continue
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return n, nil
	}
}

func (p *parser) like(left *node, pos int, not bool) (*node, error) {
	pattern, err := p.operand(p.additive)
	if err != nil {
		return nil, err
	}
	n := &node{op: nLike, pos: pos, not: not, kids: []*node{left, pattern}}
	if p.isKeyword("ESCAPE") {
		p.next()
		esc, err := p.operand(p.additive)
		if err != nil {
			return nil, err
		}
		if esc.op == nConst && (esc.val.k != kString || len([]rune(esc.val.s)) != 1) {
			return nil, semanticError("The ESCAPE of a LIKE must be a string of one character, not %s.", esc.val.literal())
		}
		n.kids = append(n.kids, esc)
	}
	if pattern.op == nConst && pattern.val.k != kString && pattern.val.k != kNull {
		return nil, semanticError("The pattern of a LIKE must be a string, not %s.", pattern.val.literal())
	}
	return n, nil
}

func (p *parser) additive() (*node, error) {
	return p.binary(p.multiplicative, map[string]op{"+": nAdd, "-": nSub})
}

func (p *parser) multiplicative() (*node, error) {
	return p.binary(p.unary, map[string]op{"*": nMul, "/": nDiv, "%": nMod})
}

// binary parses a left-associative chain of the operators in ops.
// A lone operand may be a parenthesized condition; it is checked to be a
// value only once an operator follows.
func (p *parser) binary(sub func() (*node, error), ops map[string]op) (*node, error) {
	first := p.peek()
	left, err := sub()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		o, ok := ops[t.text]
		if t.kind != tOp || !ok {
			return left, nil
		}
		if err := p.checkExpression(left, first); err != nil {
			return nil, err
		}
		p.next()
		right, err := p.operand(sub)
		if err != nil {
			return nil, err
		}
		left = &node{op: o, pos: t.pos, text: t.text, kids: []*node{left, right}}
	}
}

func (p *parser) unary() (*node, error) {
	t := p.peek()
	if t.kind != tOp || t.text != "-" && t.text != "+" {
		return p.primary()
	}
	p.next()
	if t.text == "-" && p.peek().kind == tInt {
		// -9223372036854775808 is a constant, not the negation of one too
		// large to hold.
		lit := p.next()
		n, err := strconv.ParseInt("-"+lit.text, 10, 64)
		if err != nil {
			return nil, syntaxError(p.src, t.pos, "-"+lit.raw, "The integer constant is out of the range of a 64-bit integer.")
		}
		return &node{op: nConst, pos: t.pos, val: intValue(n)}, nil
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	k, err := p.operand(p.unary)
	if err != nil {
		return nil, err
	}
	o := nNeg
	if t.text == "+" {
		o = nPos
	}
	return &node{op: o, pos: t.pos, text: t.text, kids: []*node{k}}, nil
}

func (p *parser) primary() (*node, error) {
	t := p.peek()
	switch t.kind {
	case tInt:
		p.next()
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, syntaxError(p.src, t.pos, t.raw, "The integer constant is out of the range of a 64-bit integer.")
		}
		return &node{op: nConst, pos: t.pos, val: intValue(n)}, nil
	case tDecimal, tDouble:
		p.next()
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, syntaxError(p.src, t.pos, t.raw, "The number is out of the range of a double.")
		}
		return &node{op: nConst, pos: t.pos, val: floatValue(f)}, nil
	case tString:
		p.next()
		return &node{op: nConst, pos: t.pos, val: stringValue(t.text)}, nil
	case tParam:
		p.next()
		name := strings.ToLower(t.text)
		v, ok := p.params[name]
		if !ok {
			return nil, semanticError("The parameter '%s' is used in the SQL expression but was not specified.", t.text)
		}
		p.used[name] = true
		return &node{op: nConst, pos: t.pos, val: v}, nil
	case tKeyword:
		switch t.text {
		case "TRUE", "FALSE":
			p.next()
			return &node{op: nConst, pos: t.pos, val: boolValue(t.text == "TRUE")}, nil
		case "NULL":
			p.next()
			return &node{op: nConst, pos: t.pos, val: null}, nil
		case "EXISTS":
			p.next()
			if err := p.expectOp("("); err != nil {
				return nil, err
			}
			prop, err := p.property()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return &node{op: nExists, pos: t.pos, kids: []*node{prop}}, nil
		}
	case tOp:
		if t.text == "(" {
			p.next()
			if err := p.enter(); err != nil {
				return nil, err
			}
			defer p.leave()
			n, err := p.or()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return n, nil
		}
	case tIdent:
		if p.toks[p.i+1].kind == tOp && p.toks[p.i+1].text == "(" {
			return p.function()
		}
		return p.property()
	case tDelimited:
		return p.property()
	}
	return nil, unexpected(p.src, t, "a constant, a property, a function or '('")
}

// property parses [sys.|user.]name.
func (p *parser) property() (*node, error) {
	t := p.next()
	if t.kind != tIdent && t.kind != tDelimited {
		return nil, unexpected(p.src, t, "IDENTIFIER")
	}
	scope := ""
	name := t
	if t.kind == tIdent && p.isOp(".") {
		scope = strings.ToLower(t.text)
		if scope != "sys" && scope != "user" {
			return nil, syntaxError(p.src, t.pos, t.raw, "The scope of a property must be sys or user, not '"+t.raw+"'.")
		}
		p.next()
		name = p.next()
		if name.kind != tIdent && name.kind != tDelimited {
			return nil, unexpected(p.src, name, "IDENTIFIER")
		}
	}
	if p.isOp(".") {
		return nil, unexpected(p.src, p.peek(), "")
	}
	if scope != "sys" {
		return &node{op: nProp, pos: t.pos, text: name.text}, nil
	}
	sp, ok := lookupSysProp(name.text)
	if !ok {
		return nil, semanticError("'%s' is not a system property of a message; sys.%s cannot be used.", name.text, name.text)
	}
	return &node{op: nProp, pos: t.pos, text: sp.name, sys: true}, nil
}

// function parses newid() or property(expr) / p(expr).
func (p *parser) function() (*node, error) {
	t := p.next()
	p.next() // (
	var args []*node
	if !p.isOp(")") {
		for {
			a, err := p.expression()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if !p.isOp(",") {
				break
			}
			p.next()
		}
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	switch strings.ToLower(t.text) {
	case "newid":
		if len(args) != 0 {
			return nil, semanticError("The function '%s' takes 0 arguments, not %d.", t.text, len(args))
		}
		return &node{op: nNewID, pos: t.pos}, nil
	case "property", "p":
		if len(args) != 1 {
			return nil, semanticError("The function '%s' takes 1 argument, not %d.", t.text, len(args))
		}
		return &node{op: nPropFn, pos: t.pos, kids: args}, nil
	}
	return nil, semanticError("'%s' is not a known function; the functions are newid(), property(name) and p(name).", t.text)
}

// literal writes a constant for an error message.
func (v value) literal() string {
	switch v.k {
	case kNull:
		return "NULL"
	case kString:
		return "'" + strings.ReplaceAll(v.s, "'", "''") + "'"
	case kBool:
		return strings.ToUpper(v.text())
	}
	return v.text()
}
