package query

import "math"

// parser is a recursive-descent parser over the tokens of one query text.
type parser struct {
	src    string
	toks   []token
	i      int
	params map[string]int // parameter name -> idx, shared by subqueries
	names  []string       // parameter names by idx
	counts []*countSpec   // every TOP, OFFSET and LIMIT of the query tree
	udfs   []*udfExpr     // every call of a user-defined function of the query tree
	depth  int            // nesting of expressions being parsed
}

// Parse parses a query text into a Query. Errors are *Error with the
// service's codes: SC1001 and SC1002 for syntax, SC1012 for a bad string
// literal, SC2001 for an identifier that names no alias, SC2005 for an
// unknown function.
func Parse(text string) (*Query, error) {
	p := &parser{src: text, params: map[string]int{}}
	l := lexer{src: text}
	for {
		t := l.next()
		if t.kind == tokString && t.badString {
			return nil, errAt(codeBadString, span{t.start, t.start + 1}, "Syntax error, invalid string literal token '%s'.", text[t.start:t.start+1])
		}
		p.toks = append(p.toks, t)
		if t.kind == tokEOF {
			break
		}
	}
	q, err := p.query(false)
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, p.unexpected()
	}
	q.text = text
	q.params = p.names
	q.counts = p.counts
	q.udfs = p.udfs
	if err := bindTop(q); err != nil {
		return nil, err
	}
	return q, nil
}

// peek returns the current token.
func (p *parser) peek() token { return p.toks[p.i] }

// last is where the last token taken ends.
func (p *parser) last() int {
	if p.i == 0 {
		return 0
	}
	return p.toks[p.i-1].end
}

// peekAt returns the token n places ahead of the current one.
func (p *parser) peekAt(n int) token {
	if p.i+n >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[p.i+n]
}

// advance consumes and returns the current token.
func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// unexpected returns the syntax error for the current token.
func (p *parser) unexpected() *Error {
	t := p.peek()
	if t.kind == tokEOF {
		return errAt(codeEOF, span{t.start, t.end}, "Syntax error, unexpected end-of-file.")
	}
	return errAt(codeSyntax, span{t.start, t.end}, "Syntax error, incorrect syntax near '%s'.", p.src[t.start:t.end])
}

// isKw reports whether the current token is keyword k.
func (p *parser) isKw(k keyword) bool {
	t := p.peek()
	return t.kind == tokIdent && t.kw == k
}

// acceptKw consumes keyword k if it is next.
func (p *parser) acceptKw(k keyword) bool {
	if p.isKw(k) {
		p.i++
		return true
	}
	return false
}

// expectKw consumes keyword k or fails.
func (p *parser) expectKw(k keyword) error {
	if !p.acceptKw(k) {
		return p.unexpected()
	}
	return nil
}

// isOp reports whether the current token is operator op.
func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tokOp && t.str == op
}

// acceptOp consumes operator op if it is next.
func (p *parser) acceptOp(op string) bool {
	if p.isOp(op) {
		p.i++
		return true
	}
	return false
}

// expectOp consumes operator op or fails.
func (p *parser) expectOp(op string) error {
	if !p.acceptOp(op) {
		return p.unexpected()
	}
	return nil
}

// isName reports whether the current token is an identifier that is not a
// reserved word, so it can name an alias or a property.
func (p *parser) isName() bool {
	t := p.peek()
	return t.kind == tokIdent && t.kw == kwNone
}

// name consumes an identifier that is not a reserved word.
func (p *parser) name() (token, error) {
	if !p.isName() {
		return token{}, p.unexpected()
	}
	return p.advance(), nil
}

// query parses SELECT ... [FROM ...] [WHERE ...] [GROUP BY ...] [ORDER BY ...]
// [OFFSET n LIMIT m].
func (p *parser) query(sub bool) (*Query, error) {
	q := &Query{sub: sub}
	q.at.from, q.at.order, q.at.offset = -1, -1, -1
	if err := p.expectKw(kwSelect); err != nil {
		return nil, err
	}
	if err := p.selectClause(q); err != nil {
		return nil, err
	}
	q.at.end = p.last()
	if p.isKw(kwFrom) {
		q.at.from = p.peek().start
	}
	if p.acceptKw(kwFrom) {
		q.hasFrom = true
		if err := p.fromClause(q); err != nil {
			return nil, err
		}
		q.at.fromEnd = p.last()
	}
	if p.acceptKw(kwWhere) {
		start := p.peek().start
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		q.where, q.at.where = x, span{start, p.last()}
	}
	if p.acceptKw(kwGroup) {
		if err := p.expectKw(kwBy); err != nil {
			return nil, err
		}
		start := p.peek().start
		list, err := p.exprList()
		if err != nil {
			return nil, err
		}
		q.groupBy, q.at.group = list, span{start, p.last()}
	}
	if p.acceptKw(kwOrder) {
		start := p.toks[p.i-1].start
		q.at.order = start
		if err := p.expectKw(kwBy); err != nil {
			return nil, err
		}
		if p.isRank() {
			rc, err := p.rankClause(start)
			if err != nil {
				return nil, err
			}
			q.rank = rc
		}
		for q.rank == nil {
			xs := p.peek().start
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			q.at.orders = append(q.at.orders, span{xs, p.last()})
			item := orderItem{x: x}
			switch {
			case p.acceptKw(kwDesc):
				item.desc = true
			case p.acceptKw(kwAsc):
			default:
				item.desc = similarityFirst(x)
			}
			q.orderBy = append(q.orderBy, item)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.isKw(kwOffset) {
		q.at.offset = p.peek().start
	}
	if p.acceptKw(kwOffset) {
		off, err := p.count()
		if err != nil {
			return nil, err
		}
		if err := p.expectKw(kwLimit); err != nil {
			return nil, err
		}
		lim, err := p.count()
		if err != nil {
			return nil, err
		}
		q.offset, q.limit = off, lim
	}
	return q, nil
}

// selectClause parses what follows SELECT.
func (p *parser) selectClause(q *Query) error {
	q.distinct = p.acceptKw(kwDistinct)
	if p.acceptKw(kwTop) {
		c, err := p.count()
		if err != nil {
			return err
		}
		q.top = c
	}
	q.at.list = p.peek().start
	switch {
	case p.acceptOp("*"):
		q.star = true
		return nil
	case p.acceptKw(kwValue):
		start := p.peek().start
		x, err := p.expr()
		if err != nil {
			return err
		}
		q.value, q.at.value = x, span{start, p.last()}
		// SELECT VALUE x AS name is allowed; the name has no effect.
		if p.acceptKw(kwAs) {
			if _, err := p.name(); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		start := p.peek().start
		x, err := p.expr()
		if err != nil {
			return err
		}
		q.at.items = append(q.at.items, span{start, p.last()})
		item := selectItem{x: x}
		if p.acceptKw(kwAs) {
			t, err := p.name()
			if err != nil {
				return err
			}
			item.name = t.str
		} else if p.isName() {
			item.name = p.advance().str
		}
		q.items = append(q.items, item)
		if !p.acceptOp(",") {
			return nil
		}
	}
}

// count parses the number of TOP, OFFSET or LIMIT: a number literal or a
// parameter.
func (p *parser) count() (*countSpec, error) {
	t := p.peek()
	switch t.kind {
	case tokNumber:
		p.advance()
		c := &countSpec{n: t.num, span: span{t.start, t.end}}
		if t.num != math.Trunc(t.num) || math.IsInf(t.num, 0) {
			return nil, countError(c, t.num)
		}
		p.counts = append(p.counts, c)
		return c, nil
	case tokParam:
		p.advance()
		c := &countSpec{param: p.param(t), span: span{t.start, t.end}}
		p.counts = append(p.counts, c)
		return c, nil
	}
	return nil, p.unexpected()
}

// param returns the parameter expression for token t, numbering new names.
func (p *parser) param(t token) *paramExpr {
	idx, ok := p.params[t.str]
	if !ok {
		idx = len(p.names)
		p.params[t.str] = idx
		p.names = append(p.names, t.str)
	}
	return &paramExpr{name: t.str, idx: idx, span: span{t.start, t.end}}
}

// fromClause parses the sources after FROM, with their JOINs.
func (p *parser) fromClause(q *Query) error {
	for {
		src, err := p.fromSource()
		if err != nil {
			return err
		}
		src.slot = len(q.from)
		q.from = append(q.from, src)
		if !p.acceptKw(kwJoin) {
			return nil
		}
	}
}

// fromSource parses `alias IN collection` or `collection [[AS] alias]`.
func (p *parser) fromSource() (fromSource, error) {
	start := p.peek().start
	if p.isName() && p.peekAt(1).kind == tokIdent && p.peekAt(1).kw == kwIn {
		alias := p.advance().str
		p.advance()
		x, sub, _, err := p.collection()
		if err != nil {
			return fromSource{}, err
		}
		return fromSource{alias: alias, iterate: true, x: x, sub: sub, span: span{start, p.toks[p.i-1].end}}, nil
	}
	x, sub, inferred, err := p.collection()
	if err != nil {
		return fromSource{}, err
	}
	src := fromSource{alias: inferred, x: x, sub: sub, span: span{start, p.toks[p.i-1].end}}
	if p.acceptKw(kwAs) {
		t, err := p.name()
		if err != nil {
			return fromSource{}, err
		}
		src.alias = t.str
	} else if p.isName() {
		src.alias = p.advance().str
	}
	return src, nil
}

// collection parses a FROM collection: a subquery in parentheses, or an
// identifier followed by property and literal index steps. It returns the
// alias the collection implies when none is given.
func (p *parser) collection() (expr, *Query, string, error) {
	if p.isOp("(") && p.peekAt(1).kind == tokIdent && p.peekAt(1).kw == kwSelect {
		p.advance()
		q, err := p.query(true)
		if err != nil {
			return nil, nil, "", err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, nil, "", err
		}
		return nil, q, "", nil
	}
	t, err := p.name()
	if err != nil {
		return nil, nil, "", err
	}
	var x expr = &identExpr{name: t.str, span: span{t.start, t.end}}
	alias := t.str
	for {
		switch {
		case p.acceptOp("."):
			n, err := p.name()
			if err != nil {
				return nil, nil, "", err
			}
			x = &propExpr{x: x, name: n.str}
			alias = n.str
		case p.acceptOp("["):
			i := p.peek()
			switch i.kind {
			case tokNumber:
				x = &indexExpr{x: x, idx: &litExpr{i.num}}
				alias = ""
			case tokString:
				x = &indexExpr{x: x, idx: &litExpr{i.str}}
				alias = i.str
			default:
				return nil, nil, "", p.unexpected()
			}
			p.advance()
			if err := p.expectOp("]"); err != nil {
				return nil, nil, "", err
			}
		default:
			return x, nil, alias, nil
		}
	}
}

// exprList parses one or more comma-separated expressions.
func (p *parser) exprList() ([]expr, error) {
	var list []expr
	for {
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		list = append(list, x)
		if !p.acceptOp(",") {
			return list, nil
		}
	}
}
