package query

import "strings"

// Operator precedence, loosest first, as in the service's grammar: the
// string concatenation || binds loosest of the binary operators, then
// | ^ & (bitwise), = != (equality), < <= > >= (relational), << >> >>>
// (shifts), + -, and * / % tightest. Unary operators, NOT included, bind
// tighter than all of them: NOT a = b is (NOT a) = b.
var binaryLevels = [][]string{
	{"||"},
	{"|"},
	{"^"},
	{"&"},
	{"=", "!=", "<>"},
	{"<", "<=", ">", ">="},
	{"<<", ">>", ">>>"},
	{"+", "-"},
	{"*", "/", "%"},
}

// maxNesting bounds how deeply expressions and subqueries may nest, so that
// a hostile query cannot exhaust the stack.
const maxNesting = 256

// expr parses a scalar expression: the conditional c ? a : b is loosest.
func (p *parser) expr() (expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxNesting {
		t := p.peek()
		return nil, errAt(codeSyntax, span{t.start, t.end}, "The query is nested too deeply: more than %d levels.", maxNesting)
	}
	c, err := p.coalesce()
	if err != nil {
		return nil, err
	}
	if !p.acceptOp("?") {
		return c, nil
	}
	a, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.expectOp(":"); err != nil {
		return nil, err
	}
	b, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &condExpr{c: c, a: a, b: b}, nil
}

// coalesce parses a ?? b ?? ... (right-associative).
func (p *parser) coalesce() (expr, error) {
	a, err := p.or()
	if err != nil {
		return nil, err
	}
	if !p.acceptOp("??") {
		return a, nil
	}
	b, err := p.coalesce()
	if err != nil {
		return nil, err
	}
	return &coalesceExpr{a: a, b: b}, nil
}

// or parses a OR b OR ...
func (p *parser) or() (expr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.acceptKw(kwOr) {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &orExpr{l: l, r: r}
	}
	return l, nil
}

// and parses a AND b AND ...
func (p *parser) and() (expr, error) {
	l, err := p.predicate()
	if err != nil {
		return nil, err
	}
	for p.acceptKw(kwAnd) {
		r, err := p.predicate()
		if err != nil {
			return nil, err
		}
		l = &andExpr{l: l, r: r}
	}
	return l, nil
}

// predicate parses a binary expression optionally followed by
// [NOT] BETWEEN lo AND hi, [NOT] IN (list) or [NOT] LIKE pattern [ESCAPE s].
func (p *parser) predicate() (expr, error) {
	x, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	not := false
	if p.isKw(kwNot) {
		next := p.peekAt(1)
		if next.kind != tokIdent || next.kw != kwBetween && next.kw != kwIn && next.kw != kwLike {
			return x, nil
		}
		p.advance()
		not = true
	}
	switch {
	case p.acceptKw(kwBetween):
		lo, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		if err := p.expectKw(kwAnd); err != nil {
			return nil, err
		}
		hi, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		return &betweenExpr{x: x, lo: lo, hi: hi, not: not}, nil
	case p.acceptKw(kwIn):
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		list, err := p.exprList()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return &inExpr{x: x, list: list, not: not}, nil
	case p.acceptKw(kwLike):
		pat, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		l := &likeExpr{x: x, pattern: pat, not: not}
		if p.acceptKw(kwEscape) {
			t := p.peek()
			if t.kind != tokString {
				return nil, p.unexpected()
			}
			p.advance()
			l.escape, l.hasEscape = t.str, true
		}
		return l, nil
	}
	return x, nil
}

// binary parses the binary operators from precedence level upward.
func (p *parser) binary(level int) (expr, error) {
	if level == len(binaryLevels) {
		return p.unary()
	}
	l, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tokOp || !contains(binaryLevels[level], t.str) {
			return l, nil
		}
		p.advance()
		r, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		op := t.str
		if op == "<>" {
			op = "!="
		}
		l = &binaryExpr{op: op, l: l, r: r}
	}
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// unary parses - + ~ NOT prefixes, then a postfix expression.
func (p *parser) unary() (expr, error) {
	t := p.peek()
	switch {
	case t.kind == tokOp && (t.str == "-" || t.str == "+" || t.str == "~"):
		p.advance()
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxNesting {
			return nil, errAt(codeSyntax, span{t.start, t.end}, "The query is nested too deeply: more than %d levels.", maxNesting)
		}
		// A sign directly before a number is part of the literal.
		if n := p.peek(); n.kind == tokNumber && t.str != "~" && n.start == t.end {
			p.advance()
			x, err := p.postfix(&litExpr{signed(t.str, n.num)})
			if err != nil {
				return nil, err
			}
			return x, nil
		}
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{op: t.str, x: x}, nil
	case t.kind == tokIdent && t.kw == kwNot:
		p.advance()
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxNesting {
			return nil, errAt(codeSyntax, span{t.start, t.end}, "The query is nested too deeply: more than %d levels.", maxNesting)
		}
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{op: "NOT", x: x}, nil
	}
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	return p.postfix(x)
}

// signed applies a sign to a number literal.
func signed(sign string, n float64) float64 {
	if sign == "-" {
		return -n
	}
	return n
}

// postfix parses .name and [index] steps after x.
func (p *parser) postfix(x expr) (expr, error) {
	for {
		switch {
		case p.acceptOp("."):
			n, err := p.name()
			if err != nil {
				return nil, err
			}
			x = &propExpr{x: x, name: n.str}
		case p.acceptOp("["):
			idx, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp("]"); err != nil {
				return nil, err
			}
			x = &indexExpr{x: x, idx: idx}
		default:
			return x, nil
		}
	}
}

// primary parses a literal, identifier, parameter, function call,
// constructor, parenthesized expression or subquery.
func (p *parser) primary() (expr, error) {
	t := p.peek()
	switch t.kind {
	case tokNumber:
		p.advance()
		return &litExpr{t.num}, nil
	case tokString:
		p.advance()
		return &litExpr{t.str}, nil
	case tokParam:
		p.advance()
		return p.param(t), nil
	case tokOp:
		switch t.str {
		case "[":
			return p.arrayLiteral()
		case "{":
			return p.objectLiteral()
		case "(":
			return p.paren()
		}
	case tokIdent:
		return p.identPrimary(t)
	}
	return nil, p.unexpected()
}

// identPrimary parses what starts with an identifier or keyword.
func (p *parser) identPrimary(t token) (expr, error) {
	switch t.kw {
	case kwTrue:
		p.advance()
		return &litExpr{true}, nil
	case kwFalse:
		p.advance()
		return &litExpr{false}, nil
	case kwNull:
		p.advance()
		return &litExpr{nil}, nil
	case kwUndefined:
		p.advance()
		return &litExpr{Undefined}, nil
	case kwExists, kwArray:
		p.advance()
		if !p.isOp("(") || p.peekAt(1).kind != tokIdent || p.peekAt(1).kw != kwSelect {
			// EXISTS and ARRAY take a subquery: the error is at what
			// stands in its place.
			p.acceptOp("(")
			return nil, p.unexpected()
		}
		p.advance()
		q, err := p.query(true)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		kind := subExists
		if t.kw == kwArray {
			kind = subArray
		}
		return &subqueryExpr{q: q, kind: kind}, nil
	case kwUdf:
		p.advance()
		if err := p.expectOp("."); err != nil {
			return nil, err
		}
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		args, err := p.callArgs()
		if err != nil {
			return nil, err
		}
		u := &udfExpr{name: n.str, args: args, span: span{t.start, n.end}, end: p.toks[p.i-1].end}
		p.udfs = append(p.udfs, u)
		return u, nil
	case kwLeft, kwRight, kwNone:
		p.advance()
		if p.isOp("(") {
			args, err := p.callArgs()
			if err != nil {
				return nil, err
			}
			return &callExpr{name: t.str, args: args, span: span{t.start, t.end}, end: p.toks[p.i-1].end}, nil
		}
		if t.kw != kwNone {
			p.i--
			return nil, p.unexpected()
		}
		if t.str == "NaN" || t.str == "Infinity" {
			return &litExpr{nanOrInf(t.str)}, nil
		}
		return &identExpr{name: t.str, span: span{t.start, t.end}}, nil
	}
	return nil, p.unexpected()
}

// callArgs parses a parenthesized, possibly empty, argument list.
func (p *parser) callArgs() ([]expr, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	if p.acceptOp(")") {
		return nil, nil
	}
	args, err := p.exprList()
	if err != nil {
		return nil, err
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return args, nil
}

// paren parses a parenthesized expression or a scalar subquery.
func (p *parser) paren() (expr, error) {
	p.advance()
	if p.isKw(kwSelect) {
		q, err := p.query(true)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return &subqueryExpr{q: q, kind: subScalar}, nil
	}
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return x, nil
}

// arrayLiteral parses [a, b, ...].
func (p *parser) arrayLiteral() (expr, error) {
	p.advance()
	a := &arrayExpr{}
	if p.acceptOp("]") {
		return a, nil
	}
	list, err := p.exprList()
	if err != nil {
		return nil, err
	}
	if err := p.expectOp("]"); err != nil {
		return nil, err
	}
	a.elems = list
	return a, nil
}

// objectLiteral parses {name: x, "name": y, ...}.
func (p *parser) objectLiteral() (expr, error) {
	p.advance()
	o := &objectExpr{}
	if p.acceptOp("}") {
		return o, nil
	}
	for {
		t := p.peek()
		var key string
		switch {
		case t.kind == tokString:
			key = t.str
		case p.isName():
			key = t.str
		default:
			return nil, p.unexpected()
		}
		p.advance()
		if err := p.expectOp(":"); err != nil {
			return nil, err
		}
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		o.keys = append(o.keys, key)
		o.vals = append(o.vals, x)
		if p.acceptOp("}") {
			return o, nil
		}
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
	}
}

// isAggregateName reports whether name (any case) is an aggregate function.
func isAggregateName(name string) (aggKind, bool) {
	switch strings.ToUpper(name) {
	case "COUNT":
		return aggCount, true
	case "SUM":
		return aggSum, true
	case "AVG":
		return aggAvg, true
	case "MIN":
		return aggMin, true
	case "MAX":
		return aggMax, true
	case "COUNTIF":
		return aggCountIf, true
	}
	return 0, false
}
