package query

import "math"

// env is what an expression is evaluated against: the values bound to the
// query's aliases, the document being read (top level), the enclosing
// query's environment, and the run's parameters and clock.
type env struct {
	vals    []any
	doc     any
	outer   *env
	rs      *runState
	aggVals []any // the current group's aggregate results, when projecting a group
}

// nanOrInf returns the value of the NaN or Infinity constant.
func nanOrInf(name string) float64 {
	if name == "NaN" {
		return math.NaN()
	}
	return math.Inf(1)
}

func (x *litExpr) eval(*env) any { return x.v }

func (x *identExpr) eval(*env) any { return Undefined } // never evaluated: binding replaces it

func (rootRef) eval(e *env) any { return e.doc }

func (x *aliasRef) eval(e *env) any {
	for d := x.depth; d > 0; d-- {
		e = e.outer
	}
	return e.vals[x.slot]
}

func (x *paramExpr) eval(e *env) any { return e.rs.params[x.idx] }

func (x *propExpr) eval(e *env) any {
	if o, ok := x.x.eval(e).(*Object); ok {
		if v, ok := o.Get(x.name); ok {
			return v
		}
	}
	return Undefined
}

func (x *indexExpr) eval(e *env) any {
	return index(x.x.eval(e), x.idx.eval(e))
}

// index returns v[i]: an array element for an integral number in range, an
// object property for a string, else Undefined.
func index(v, i any) any {
	switch v := v.(type) {
	case []any:
		if n, ok := i.(float64); ok && n >= 0 && n < float64(len(v)) && n == math.Trunc(n) {
			return v[int(n)]
		}
	case *Object:
		if k, ok := i.(string); ok {
			if r, ok := v.Get(k); ok {
				return r
			}
		}
	}
	return Undefined
}

func (x *unaryExpr) eval(e *env) any {
	v := x.x.eval(e)
	switch x.op {
	case "NOT":
		if b, ok := v.(bool); ok {
			return !b
		}
	case "-":
		if n, ok := v.(float64); ok {
			return -n
		}
	case "+":
		if n, ok := v.(float64); ok {
			return n
		}
	case "~":
		if n, ok := v.(float64); ok {
			return float64(^toInt32(n))
		}
	}
	return Undefined
}

// toInt32 converts a number to a 32-bit integer the way JavaScript's bitwise
// operators do: truncate, then wrap modulo 2^32.
func toInt32(f float64) int32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	f = math.Trunc(f)
	m := math.Mod(f, 1<<32)
	if m < 0 {
		m += 1 << 32
	}
	return int32(uint32(m))
}

func (x *binaryExpr) eval(e *env) any {
	return binary(x.op, x.l.eval(e), x.r.eval(e))
}

// binary applies a binary operator. Operands of the wrong types give
// Undefined: there is no implicit conversion.
func binary(op string, l, r any) any {
	switch op {
	case "=":
		if typeRank(l) != typeRank(r) || isUndef(l) {
			return Undefined
		}
		return Equal(l, r)
	case "!=":
		if typeRank(l) != typeRank(r) || isUndef(l) {
			return Undefined
		}
		return !Equal(l, r)
	case "<", "<=", ">", ">=":
		c, ok := compareOp(l, r)
		if !ok {
			return Undefined
		}
		switch op {
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		}
		return c >= 0
	case "||":
		ls, ok1 := l.(string)
		rs, ok2 := r.(string)
		if ok1 && ok2 {
			return ls + rs
		}
		return Undefined
	}
	a, ok1 := l.(float64)
	b, ok2 := r.(float64)
	if !ok1 || !ok2 {
		return Undefined
	}
	switch op {
	case "+":
		return a + b
	case "-":
		return a - b
	case "*":
		return a * b
	case "/":
		return a / b
	case "%":
		return math.Mod(a, b)
	case "&":
		return float64(toInt32(a) & toInt32(b))
	case "|":
		return float64(toInt32(a) | toInt32(b))
	case "^":
		return float64(toInt32(a) ^ toInt32(b))
	case "<<":
		return float64(toInt32(a) << (uint32(toInt32(b)) & 31))
	case ">>":
		return float64(toInt32(a) >> (uint32(toInt32(b)) & 31))
	case ">>>":
		return float64(uint32(toInt32(a)) >> (uint32(toInt32(b)) & 31))
	}
	return Undefined
}

// compareOp orders two values for < <= > >=: only null, booleans, numbers
// and strings compare, and only with their own type.
func compareOp(l, r any) (int, bool) {
	rl := typeRank(l)
	if rl != typeRank(r) || rl == rankUndefined || rl == rankArray || rl == rankObject {
		return 0, false
	}
	if a, ok := l.(float64); ok && (math.IsNaN(a) || math.IsNaN(r.(float64))) {
		return 0, false
	}
	return Compare(l, r), true
}

func (x *andExpr) eval(e *env) any {
	l := x.l.eval(e)
	if b, ok := l.(bool); ok && !b {
		return false
	}
	r := x.r.eval(e)
	if b, ok := r.(bool); ok && !b {
		return false
	}
	if l == true && r == true {
		return true
	}
	return Undefined
}

func (x *orExpr) eval(e *env) any {
	l := x.l.eval(e)
	if l == true {
		return true
	}
	r := x.r.eval(e)
	if r == true {
		return true
	}
	if l == false && r == false {
		return false
	}
	return Undefined
}

func (x *betweenExpr) eval(e *env) any {
	v := x.x.eval(e)
	c1, ok1 := compareOp(v, x.lo.eval(e))
	c2, ok2 := compareOp(v, x.hi.eval(e))
	if !ok1 || !ok2 {
		return Undefined
	}
	return (c1 >= 0 && c2 <= 0) != x.not
}

func (x *inExpr) eval(e *env) any {
	v := x.x.eval(e)
	if isUndef(v) {
		return Undefined
	}
	for _, item := range x.list {
		if Equal(v, item.eval(e)) {
			return !x.not
		}
	}
	return x.not
}

func (x *likeExpr) eval(e *env) any {
	s, ok := x.x.eval(e).(string)
	if !ok {
		return Undefined
	}
	pat := x.compiled
	if pat == nil {
		p, ok := x.pattern.eval(e).(string)
		if !ok {
			return Undefined
		}
		pat = compileLike(p, x.escape, x.hasEscape)
	}
	return pat.match(s) != x.not
}

func (x *condExpr) eval(e *env) any {
	if x.c.eval(e) == true {
		return x.a.eval(e)
	}
	return x.b.eval(e)
}

func (x *coalesceExpr) eval(e *env) any {
	if v := x.a.eval(e); !isUndef(v) {
		return v
	}
	return x.b.eval(e)
}

func (x *objectExpr) eval(e *env) any {
	o := &Object{Keys: make([]string, 0, len(x.keys)), Vals: make([]any, 0, len(x.keys))}
	for i, k := range x.keys {
		if v := x.vals[i].eval(e); !isUndef(v) {
			o.Set(k, v)
		}
	}
	return o
}

func (x *arrayExpr) eval(e *env) any {
	a := make([]any, 0, len(x.elems))
	for _, el := range x.elems {
		if v := el.eval(e); !isUndef(v) {
			a = append(a, v)
		}
	}
	return a
}

func (x *callExpr) eval(e *env) any {
	var buf [4]any
	args := buf[:0]
	for _, a := range x.args {
		v := a.eval(e)
		if isUndef(v) && !x.fn.undefinedOK {
			return Undefined
		}
		args = append(args, v)
	}
	return x.fn.call(e, args)
}

func (x *udfExpr) eval(e *env) any {
	if e.rs.err != nil {
		return Undefined
	}
	args := make([]any, 0, len(x.args))
	for _, a := range x.args {
		v := a.eval(e)
		if isUndef(v) {
			return Undefined
		}
		args = append(args, v)
	}
	v, err := e.rs.udfs[x](args)
	if err != nil {
		e.rs.err = err
		return Undefined
	}
	return v
}

func (x *aggExpr) eval(e *env) any {
	if e.aggVals == nil {
		return Undefined
	}
	return e.aggVals[x.idx]
}

func (x *subqueryExpr) eval(e *env) any {
	switch x.kind {
	case subExists:
		found := false
		e.rs.execSub(x.q, e, func(any) bool { found = true; return false })
		return found
	case subArray:
		rows := []any{}
		e.rs.execSub(x.q, e, func(v any) bool { rows = append(rows, v); return true })
		return rows
	}
	var first any = Undefined
	e.rs.execSub(x.q, e, func(v any) bool { first = v; return false })
	return first
}

// truthy reports whether a filter value keeps its row: only true does.
func truthy(v any) bool {
	b, ok := v.(bool)
	return ok && b
}
