package sqlfilter

import (
	"crypto/rand"
)

// evalFn computes a value for one message; predFn a truth. Compiling the
// syntax tree to closures once keeps Match free of tree walking and of
// allocation beyond what the message's own accessors do.
type (
	evalFn func(m Message) (value, error)
	predFn func(m Message) (truth, error)
)

func compileExpr(n *node) evalFn {
	switch n.op {
	case nConst:
		v := n.val
		return func(Message) (value, error) { return v, nil }
	case nProp:
		name := n.text
		if n.sys {
			return func(m Message) (value, error) {
				v, ok := m.System(name)
				if !ok {
					return null, nil
				}
				return fromGo(v), nil
			}
		}
		return func(m Message) (value, error) {
			v, ok := m.UserFold(name)
			if !ok {
				return null, nil
			}
			return fromGo(v), nil
		}
	case nNewID:
		return func(Message) (value, error) { return value{k: kUUID, u: newID()}, nil }
	case nPropFn:
		arg := compileExpr(n.kids[0])
		return func(m Message) (value, error) {
			name, err := arg(m)
			if err != nil || name.k == kNull {
				return null, err
			}
			v, ok := m.UserFold(name.text())
			if !ok {
				return null, nil
			}
			return fromGo(v), nil
		}
	case nNeg, nPos:
		x := compileExpr(n.kids[0])
		plus := n.op == nPos
		return func(m Message) (value, error) {
			a, err := x(m)
			if err != nil {
				return null, err
			}
			return negate(a, plus)
		}
	case nAdd, nSub, nMul, nDiv, nMod:
		x, y := compileExpr(n.kids[0]), compileExpr(n.kids[1])
		op := n.text
		return func(m Message) (value, error) {
			a, err := x(m)
			if err != nil {
				return null, err
			}
			b, err := y(m)
			if err != nil {
				return null, err
			}
			return arith(op, a, b)
		}
	}
	// A predicate where a value is expected: only TRUE and FALSE pass the
	// parser's checks, and they are constants.
	p := compilePred(n)
	return func(m Message) (value, error) {
		t, err := p(m)
		if err != nil || t == unknown {
			return null, err
		}
		return boolValue(t == truthy), nil
	}
}

func compilePred(n *node) predFn {
	switch n.op {
	case nConst:
		t := unknown
		if n.val.k == kBool {
			t = truthOf(n.val.n != 0)
		}
		return func(Message) (truth, error) { return t, nil }
	case nCmp:
		x, y := compileExpr(n.kids[0]), compileExpr(n.kids[1])
		op := n.text
		return func(m Message) (truth, error) {
			a, err := x(m)
			if err != nil {
				return unknown, err
			}
			b, err := y(m)
			if err != nil {
				return unknown, err
			}
			return compare(op, a, b)
		}
	case nAnd, nOr:
		return compileLogical(n)
	case nNot:
		x := compilePred(n.kids[0])
		return func(m Message) (truth, error) {
			t, err := x(m)
			return t.not(), err
		}
	case nIn:
		return compileIn(n)
	case nLike:
		return compileLikeNode(n)
	case nIsNull:
		x := compileExpr(n.kids[0])
		not := n.not
		return func(m Message) (truth, error) {
			v, err := x(m)
			if err != nil {
				return unknown, err
			}
			return truthOf((v.k == kNull) != not), nil
		}
	case nExists:
		prop := n.kids[0]
		name := prop.text
		if prop.sys {
			return func(m Message) (truth, error) {
				_, ok := m.System(name)
				return truthOf(ok), nil
			}
		}
		return func(m Message) (truth, error) {
			_, ok := m.UserFold(name)
			return truthOf(ok), nil
		}
	}
	// A value where a condition is expected cannot pass the parser.
	return func(Message) (truth, error) { return unknown, runtimeError("not a condition") }
}

// compileLogical evaluates AND and OR left to right, stopping at the first
// operand that decides the result (FALSE for AND, TRUE for OR), as the
// service's AndAlso and OrElse do; an error in a later operand is then not
// raised.
func compileLogical(n *node) predFn {
	kids := make([]predFn, len(n.kids))
	for i, k := range n.kids {
		kids[i] = compilePred(k)
	}
	decisive := falsy
	if n.op == nOr {
		decisive = truthy
	}
	return func(m Message) (truth, error) {
		result := decisive.not()
		for _, k := range kids {
			t, err := k(m)
			if err != nil {
				return unknown, err
			}
			if t == decisive {
				return t, nil
			}
			if t == unknown {
				result = unknown
			}
		}
		return result, nil
	}
}

// compileIn: an unknown left side makes the result unknown; a list item
// that is unknown, or of a type that cannot be compared, is just not equal.
func compileIn(n *node) predFn {
	x := compileExpr(n.kids[0])
	items := make([]evalFn, len(n.kids)-1)
	for i, k := range n.kids[1:] {
		items[i] = compileExpr(k)
	}
	not := n.not
	return func(m Message) (truth, error) {
		a, err := x(m)
		if err != nil || a.k == kNull {
			return unknown, err
		}
		for _, item := range items {
			b, err := item(m)
			if err != nil {
				return unknown, err
			}
			if b.k != kNull && equal(a, b) {
				return truthOf(!not), nil
			}
		}
		return truthOf(not), nil
	}
}

// compileLikeNode compiles the pattern once when it and the escape are
// constants. Operands are converted to text (5 LIKE '5%' is TRUE), and any
// unknown operand makes the result unknown, as the service does.
func compileLikeNode(n *node) predFn {
	x := compileExpr(n.kids[0])
	not := n.not
	var escNode *node
	if len(n.kids) == 3 {
		escNode = n.kids[2]
	}
	patNode := n.kids[1]
	if patNode.op == nConst && (escNode == nil || escNode.op == nConst) {
		if patNode.val.k == kNull || escNode != nil && escNode.val.k == kNull {
			return func(m Message) (truth, error) {
				_, err := x(m)
				return unknown, err
			}
		}
		esc := ""
		if escNode != nil {
			esc = escNode.val.text()
		}
		l := compileLike(patNode.val.text(), esc)
		return func(m Message) (truth, error) {
			a, err := x(m)
			if err != nil || a.k == kNull {
				return unknown, err
			}
			return truthOf(l.match(a.text()) != not), nil
		}
	}
	pat := compileExpr(patNode)
	var escFn evalFn
	if escNode != nil {
		escFn = compileExpr(escNode)
	}
	return func(m Message) (truth, error) {
		a, err := x(m)
		if err != nil {
			return unknown, err
		}
		p, err := pat(m)
		if err != nil {
			return unknown, err
		}
		esc := ""
		if escFn != nil {
			e, err := escFn(m)
			if err != nil {
				return unknown, err
			}
			if e.k == kNull {
				return unknown, nil
			}
			esc = e.text()
		}
		if a.k == kNull || p.k == kNull {
			return unknown, nil
		}
		return truthOf(compileLike(p.text(), esc).match(a.text()) != not), nil
	}
}

// newID is newid(): a random (version 4) UUID, as System.Guid.NewGuid.
func newID() [16]byte {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24+)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}
