package query

import (
	"fmt"
	"strings"
)

// scope is the set of aliases an expression can name: those of its own
// query's FROM clause bound so far, then those of the enclosing queries.
type scope struct {
	aliases []string // by slot; "" for an unnamed source
	outer   *scope
}

// resolve finds name in s or an enclosing scope.
func (s *scope) resolve(name string) (depth, slot int, ok bool) {
	for d := 0; s != nil; d, s = d+1, s.outer {
		for i := len(s.aliases) - 1; i >= 0; i-- {
			if s.aliases[i] == name {
				return d, i, true
			}
		}
	}
	return 0, 0, false
}

// binder resolves identifiers, functions and aggregates of a parsed query.
type binder struct {
	aggs   *[]*aggExpr  // where the current select list's aggregates go; nil outside it
	inAgg  bool         // inside an aggregate's argument
	clause string       // the clause being bound, for messages
	inRank bool         // binding a score of ORDER BY RANK
	from   []fromSource // the FROM sources of the query being bound
}

// bindTop binds the top-level query: its first FROM source starts at the
// container.
func bindTop(q *Query) error {
	return bindQuery(q, nil, true)
}

// bindQuery binds q in the scope outer. containerScoped says q's first FROM
// source names the container rather than an alias.
func bindQuery(q *Query, outer *scope, containerScoped bool) error {
	sc := &scope{outer: outer}
	q.container = containerScoped
	for i := range q.from {
		src := &q.from[i]
		if src.sub != nil {
			if err := bindQuery(src.sub, sc, containerScoped && i == 0); err != nil {
				return err
			}
		} else {
			x, err := bindCollection(src.x, sc, containerScoped && i == 0)
			if err != nil {
				return err
			}
			src.x = x
		}
		if src.alias != "" && contains(sc.aliases, src.alias) {
			return errAt(codeSemantic, src.span, "The input set name or alias '%s' is specified more than once in the FROM clause.", src.alias)
		}
		sc.aliases = append(sc.aliases, src.alias)
	}
	q.nslots = len(q.from)
	b := &binder{clause: "WHERE", from: q.from}
	var err error
	if q.where != nil {
		if q.where, err = b.bind(q.where, sc); err != nil {
			return err
		}
	}
	b.clause = "GROUP BY"
	for i := range q.groupBy {
		if q.groupBy[i], err = b.bind(q.groupBy[i], sc); err != nil {
			return err
		}
	}
	b.clause = "ORDER BY"
	for i := range q.orderBy {
		if q.orderBy[i].x, err = b.bind(q.orderBy[i].x, sc); err != nil {
			return err
		}
	}
	if q.rank != nil {
		if err := b.bindRank(q, sc); err != nil {
			return err
		}
	}
	b.clause, b.aggs = "SELECT", &q.aggs
	if q.star {
		if !q.hasFrom {
			return errAt(codeSemantic, span{0, len("SELECT")}, "'SELECT *' is not valid if FROM clause is omitted.")
		}
		if len(q.from) != 1 {
			return errAt(codeSemantic, span{0, len("SELECT")}, "'SELECT *' is only valid with a single input set.")
		}
	}
	if q.value != nil {
		if q.value, err = b.bind(q.value, sc); err != nil {
			return err
		}
	}
	unnamed := 0
	for i := range q.items {
		it := &q.items[i]
		if it.x, err = b.bind(it.x, sc); err != nil {
			return err
		}
		if it.name == "" {
			it.name = implicitName(it.x)
		}
		if it.name == "" {
			unnamed++
			it.name = fmt.Sprintf("$%d", unnamed)
		}
	}
	q.aggregate = len(q.aggs) > 0 || len(q.groupBy) > 0
	if q.aggregate {
		if err := checkGrouped(q); err != nil {
			return err
		}
	}
	if len(q.groupBy) > 0 && len(q.orderBy) > 0 {
		return errAt(codeSemantic, span{0, len(q.text)}, "ORDER BY is not supported in presence of GROUP BY.")
	}
	return nil
}

// implicitName is the property name a select item gets without AS: the
// name of an alias or of the last property step, else "".
func implicitName(x expr) string {
	switch x := x.(type) {
	case *aliasRef:
		return x.name
	case *propExpr:
		return x.name
	case *indexExpr:
		if l, ok := x.idx.(*litExpr); ok {
			if s, ok := l.v.(string); ok {
				return s
			}
		}
	}
	return ""
}

// bindCollection binds a FROM collection path. A container-scoped path's
// head names the container: any identifier (the container's name, or ROOT)
// is the document itself.
func bindCollection(x expr, sc *scope, containerScoped bool) (expr, error) {
	switch v := x.(type) {
	case *identExpr:
		if containerScoped {
			return rootRef{}, nil
		}
		d, slot, ok := sc.resolve(v.name)
		if !ok {
			return nil, errAt(codeUnresolved, v.span, "Identifier '%s' could not be resolved.", v.name)
		}
		return &aliasRef{name: v.name, depth: d, slot: slot, span: v.span}, nil
	case *propExpr:
		inner, err := bindCollection(v.x, sc, containerScoped)
		if err != nil {
			return nil, err
		}
		v.x = inner
		return v, nil
	case *indexExpr:
		inner, err := bindCollection(v.x, sc, containerScoped)
		if err != nil {
			return nil, err
		}
		v.x = inner
		return v, nil
	}
	return x, nil
}

// bind resolves the identifiers and calls of expression x in scope sc and
// returns the bound expression.
func (b *binder) bind(x expr, sc *scope) (expr, error) {
	var err error
	switch v := x.(type) {
	case *identExpr:
		d, slot, ok := sc.resolve(v.name)
		if !ok {
			return nil, errAt(codeUnresolved, v.span, "Identifier '%s' could not be resolved.", v.name)
		}
		return &aliasRef{name: v.name, depth: d, slot: slot, span: v.span}, nil
	case *propExpr:
		v.x, err = b.bind(v.x, sc)
	case *indexExpr:
		if v.x, err = b.bind(v.x, sc); err == nil {
			v.idx, err = b.bind(v.idx, sc)
		}
	case *unaryExpr:
		v.x, err = b.bind(v.x, sc)
	case *binaryExpr:
		if v.l, err = b.bind(v.l, sc); err == nil {
			v.r, err = b.bind(v.r, sc)
		}
	case *andExpr:
		if v.l, err = b.bind(v.l, sc); err == nil {
			v.r, err = b.bind(v.r, sc)
		}
	case *orExpr:
		if v.l, err = b.bind(v.l, sc); err == nil {
			v.r, err = b.bind(v.r, sc)
		}
	case *betweenExpr:
		err = b.bindAll(sc, &v.x, &v.lo, &v.hi)
	case *inExpr:
		if v.x, err = b.bind(v.x, sc); err == nil {
			err = b.bindList(v.list, sc)
		}
	case *likeExpr:
		err = b.bindAll(sc, &v.x, &v.pattern)
		if l, ok := v.pattern.(*litExpr); ok && err == nil {
			if s, ok := l.v.(string); ok {
				v.compiled = compileLike(s, v.escape, v.hasEscape)
			}
		}
	case *condExpr:
		err = b.bindAll(sc, &v.c, &v.a, &v.b)
	case *coalesceExpr:
		err = b.bindAll(sc, &v.a, &v.b)
	case *objectExpr:
		err = b.bindList(v.vals, sc)
	case *arrayExpr:
		err = b.bindList(v.elems, sc)
	case *callExpr:
		return b.bindCall(v, sc)
	case *udfExpr:
		err = b.bindList(v.args, sc)
	case *subqueryExpr:
		err = bindQuery(v.q, sc, false)
	}
	if err != nil {
		return nil, err
	}
	return x, nil
}

// bindAll binds each of xs in place.
func (b *binder) bindAll(sc *scope, xs ...*expr) error {
	for _, p := range xs {
		x, err := b.bind(*p, sc)
		if err != nil {
			return err
		}
		*p = x
	}
	return nil
}

// bindList binds each element of list in place.
func (b *binder) bindList(list []expr, sc *scope) error {
	for i := range list {
		x, err := b.bind(list[i], sc)
		if err != nil {
			return err
		}
		list[i] = x
	}
	return nil
}

// bindCall resolves a function call: an aggregate (allowed only in the
// select list, not nested) or a built-in scalar function with the right
// number of arguments.
func (b *binder) bindCall(c *callExpr, sc *scope) (expr, error) {
	if kind, ok := isAggregateName(c.name); ok {
		if b.aggs == nil {
			return nil, errAt(codeSemantic, c.span, "Aggregate functions are not allowed in the %s clause.", b.clause)
		}
		if b.inAgg {
			return nil, errAt(codeSemantic, c.span, "Cannot perform an aggregate function on an expression containing an aggregate or a subquery.")
		}
		if len(c.args) != 1 {
			return nil, errAt(codeSemantic, c.span, "The %s function requires 1 argument(s).", strings.ToUpper(c.name))
		}
		b.inAgg = true
		arg, err := b.bind(c.args[0], sc)
		b.inAgg = false
		if err != nil {
			return nil, err
		}
		a := &aggExpr{kind: kind, arg: arg, idx: len(*b.aggs)}
		*b.aggs = append(*b.aggs, a)
		return a, nil
	}
	switch strings.ToUpper(c.name) {
	case "FULLTEXTCONTAINS", "FULLTEXTCONTAINSALL", "FULLTEXTCONTAINSANY", "FULLTEXTSCORE",
		"_FULLTEXTSCORE", "_FULLTEXTWORDCOUNT":
		return b.bindFullText(c, sc)
	case "RRF":
		// RRF is only ORDER BY RANK's own call (bindRank): elsewhere the
		// service knows no such function, once its arguments are checked.
		if err := b.bindList(c.args, sc); err != nil {
			return nil, err
		}
	}
	fn := lookupFunction(c.name)
	if fn == nil {
		return nil, errAt(codeUnknownFunc, c.span, "'%s' is not a recognized built-in function name.", c.name)
	}
	if len(c.args) < fn.minArgs || fn.maxArgs >= 0 && len(c.args) > fn.maxArgs {
		return nil, errAt(codeSemantic, c.span, "The %s function requires %s argument(s).", strings.ToUpper(c.name), fn.arity())
	}
	c.fn = fn
	if err := b.bindList(c.args, sc); err != nil {
		return nil, err
	}
	return c, nil
}
