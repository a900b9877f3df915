package query

// expr is a scalar expression: it evaluates to a value in an environment.
type expr interface {
	eval(e *env) any
}

// span is a byte range of the query text, for error reports.
type span struct{ start, end int }

// litExpr is a constant.
type litExpr struct{ v any }

// identExpr is a bare identifier before binding resolves it to an alias.
type identExpr struct {
	name string
	span
}

// aliasRef is an identifier bound to a FROM alias: slot in the scope depth
// levels out (0 is the query's own).
type aliasRef struct {
	name        string
	depth, slot int
	span
}

// rootRef is the document the top-level query is looking at; the first FROM
// source of the top-level query starts from it.
type rootRef struct{}

// paramExpr is an @parameter; idx indexes the run's parameter values.
type paramExpr struct {
	name string
	idx  int
	span
}

// propExpr is x.name.
type propExpr struct {
	x    expr
	name string
}

// indexExpr is x[idx]: an array element or a property by computed name.
type indexExpr struct {
	x, idx expr
}

// unaryExpr is -x, +x, ~x or NOT x.
type unaryExpr struct {
	op string
	x  expr
}

// binaryExpr is an arithmetic, comparison, bitwise or || operation.
type binaryExpr struct {
	op   string
	l, r expr
}

// andExpr is l AND r.
type andExpr struct{ l, r expr }

// orExpr is l OR r.
type orExpr struct{ l, r expr }

// betweenExpr is x [NOT] BETWEEN lo AND hi.
type betweenExpr struct {
	x, lo, hi expr
	not       bool
}

// inExpr is x [NOT] IN (list...).
type inExpr struct {
	x    expr
	list []expr
	not  bool
}

// likeExpr is x [NOT] LIKE pattern [ESCAPE 'c'].
type likeExpr struct {
	x, pattern expr
	escape     string // "" when there is no ESCAPE clause
	hasEscape  bool
	not        bool
	compiled   *likePattern // when pattern is a constant string
}

// condExpr is c ? a : b.
type condExpr struct{ c, a, b expr }

// coalesceExpr is a ?? b.
type coalesceExpr struct{ a, b expr }

// objectExpr is an object constructor {name: expr, ...}.
type objectExpr struct {
	keys []string
	vals []expr
}

// arrayExpr is an array constructor [expr, ...].
type arrayExpr struct{ elems []expr }

// udfExpr is a call of a user-defined function, udf.name(args), which
// Options.UDF resolves when the query runs.
type udfExpr struct {
	name string
	args []expr
	span     // from "udf" to the name
	end  int // the end of the closing parenthesis
}

// callExpr is a call of a built-in scalar function.
type callExpr struct {
	name string
	fn   *function
	args []expr
	span     // the name
	end  int // the end of the closing parenthesis
}

// aggKind is an aggregate function.
type aggKind uint8

// The aggregate functions.
const (
	aggCount aggKind = iota
	aggSum
	aggAvg
	aggMin
	aggMax
	aggCountIf // COUNTIF(x): the rows whose x is true
)

// aggExpr is an aggregate call; idx indexes the group's results.
type aggExpr struct {
	kind aggKind
	arg  expr
	idx  int
}

// subKind says how a subquery in an expression is used.
type subKind uint8

// The subquery uses.
const (
	subScalar subKind = iota // (SELECT ...): its first row, or undefined
	subExists                // EXISTS(SELECT ...)
	subArray                 // ARRAY(SELECT ...)
)

// subqueryExpr is a correlated subquery used as a scalar expression.
type subqueryExpr struct {
	q    *Query
	kind subKind
}

// selectItem is one entry of a select list.
type selectItem struct {
	x    expr
	name string
}

// countSpec is the number of TOP, OFFSET or LIMIT: a literal or a parameter.
type countSpec struct {
	n     float64
	param *paramExpr
	span
}

// orderItem is one ORDER BY key.
type orderItem struct {
	x    expr
	desc bool
}

// fromSource is one FROM or JOIN source.
type fromSource struct {
	alias   string // "" for an unnamed subquery source
	slot    int
	iterate bool   // alias IN collection: one binding per array element
	x       expr   // the collection: a path from an alias or from the root
	sub     *Query // a subquery collection, else nil
	span
}

// Query is a parsed query, ready to Run any number of times, concurrently.
type Query struct {
	text string

	distinct  bool
	top       *countSpec
	star      bool
	value     expr         // SELECT VALUE x
	items     []selectItem // SELECT a, b AS n
	from      []fromSource
	where     expr
	groupBy   []expr
	orderBy   []orderItem
	rank      *rankClause // ORDER BY RANK, instead of orderBy
	offset    *countSpec
	limit     *countSpec
	hasFrom   bool
	aggs      []*aggExpr   // aggregates of the select list, each with its idx
	nslots    int          // aliases bound by FROM and JOIN
	params    []string     // parameter names of the whole query tree, by idx (top level only)
	sub       bool         // this is a subquery
	container bool         // the first FROM source reads the container's documents
	counts    []*countSpec // every TOP, OFFSET and LIMIT of the query tree (top level only)
	udfs      []*udfExpr   // every call of a user-defined function of the query tree (top level only)
	aggregate bool         // aggregates or GROUP BY: one row per group
	at        clauses      // where its parts are in text, for Plan
}

// clauses are where the parts of a query are in its text: Plan writes a
// query's rewritten form from them.
type clauses struct {
	list    int    // where the select list starts (after DISTINCT and TOP)
	end     int    // where the select list ends
	value   span   // SELECT VALUE's expression
	items   []span // the select items' expressions
	from    int    // where FROM starts; -1 without one
	fromEnd int    // where the FROM clause (with its JOINs) ends
	where   span   // WHERE's condition; empty without one
	group   span   // GROUP BY's list
	order   int    // where ORDER BY starts; -1 without one
	orders  []span // ORDER BY's expressions
	offset  int    // where OFFSET starts; -1 without one
}
