package query

import (
	"math"
	"strconv"
	"strings"
)

// QueryInfo is the part of a query plan that tells a client's query
// pipeline what to do with the rows of each partition key range: the
// queryInfo object of the gateway's answer to a query-plan request
// (x-ms-cosmos-is-query-plan-request). The field names and values are the
// ones the SDKs read (the JS SDK's PartitionedQueryExecutionInfo, the
// Python SDK's _QueryExecutionInfo).
type QueryInfo struct {
	DistinctType                string             `json:"distinctType"` // None, Ordered, Unordered
	Top                         *int               `json:"top"`
	Offset                      *int               `json:"offset"`
	Limit                       *int               `json:"limit"`
	OrderBy                     []string           `json:"orderBy"` // Ascending, Descending
	OrderByExpressions          []string           `json:"orderByExpressions"`
	GroupByExpressions          []string           `json:"groupByExpressions"`
	GroupByAliases              []string           `json:"groupByAliases"`
	Aggregates                  []string           `json:"aggregates"`
	GroupByAliasToAggregateType map[string]*string `json:"groupByAliasToAggregateType"`
	RewrittenQuery              string             `json:"rewrittenQuery"`
	HasSelectValue              bool               `json:"hasSelectValue"`
	HasNonStreamingOrderBy      bool               `json:"hasNonStreamingOrderBy"`
}

// PlanFeatures lists the query features a client's pipeline must support
// to run q across partition key ranges, in the words of the SDKs'
// x-ms-cosmos-supported-query-features: the gateway refuses a plan to a
// client that lacks one.
func (q *Query) PlanFeatures() []string {
	var out []string
	add := func(ok bool, f string) {
		if ok {
			out = append(out, f)
		}
	}
	_, valueAgg := q.value.(*aggExpr)
	add(len(q.aggs) > 0, "Aggregate")
	add(len(q.aggs) > 1, "MultipleAggregates")
	add(q.distinct, "Distinct")
	add(len(q.groupBy) > 0 || len(q.aggs) > 0 && !valueAgg, "GroupBy")
	add(q.offset != nil, "OffsetAndLimit")
	add(len(q.orderBy) > 0, "OrderBy")
	add(len(q.orderBy) > 1, "MultipleOrderBy")
	add(q.top != nil, "Top")
	add(q.rank != nil, "HybridSearch")
	add(q.rank != nil && q.rank.weights, "WeightedRankFusion")
	return out
}

// OrderByFilter is the placeholder of a rewritten ORDER BY query that a
// client replaces with "true", or with the condition that resumes after
// the last row it has (its continuation).
const OrderByFilter = "{documentdb-formattableorderbyquery-filter}"

// PlanOptions are what a plan depends on besides the query.
type PlanOptions struct {
	// CompositeMinMax asks for MIN and MAX per range as {"min": x,
	// "count": n} (and "max"), which tells an empty range from one whose
	// values do not compare; the JS, Java and .NET pipelines read that
	// form, the Python SDK (query version 1.0) reads the bare value.
	CompositeMinMax bool
}

// Plan returns the queryInfo of q's plan: what a client's pipeline merges
// across partition key ranges, and the query it sends to each range
// instead of q (RewrittenQuery, empty when q itself serves), whose rows
// carry what the merge needs: ORDER BY's keys beside each row, each
// range's partial aggregates, GROUP BY's keys, OFFSET and LIMIT left to
// the client. ok is false for what lapse does not plan this way (ORDER BY
// RANK, whose plan is HybridPlan; ORDER BY with GROUP BY, COUNTIF, an
// aggregate inside another expression); a
// caller answers with a plan that leaves it all to the one range, which
// lapse runs whole.
func (q *Query) Plan(params Params, opt PlanOptions) (info QueryInfo, ok bool) {
	info = QueryInfo{
		DistinctType:                "None",
		OrderBy:                     []string{},
		OrderByExpressions:          []string{},
		GroupByExpressions:          []string{},
		GroupByAliases:              []string{},
		Aggregates:                  []string{},
		GroupByAliasToAggregateType: map[string]*string{},
		HasSelectValue:              q.value != nil,
	}
	if q.rank != nil || len(q.from) > 1 && len(q.orderBy) > 0 {
		return info, false
	}
	for _, a := range q.aggs {
		if a.kind == aggCountIf {
			return info, false
		}
	}
	count := func(c *countSpec) (*int, bool) {
		if c == nil {
			return nil, true
		}
		n := c.n
		if c.param != nil {
			f, ok := params[c.param.name].(float64)
			if !ok {
				return nil, false
			}
			n = f
		}
		if n < 0 || n != math.Trunc(n) || n > math.MaxInt32 {
			return nil, false
		}
		v := int(n)
		return &v, true
	}
	var okTop, okOff, okLim bool
	info.Top, okTop = count(q.top)
	info.Offset, okOff = count(q.offset)
	info.Limit, okLim = count(q.limit)
	if !okTop || !okOff || !okLim {
		return info, false
	}
	if q.distinct {
		info.DistinctType = "Unordered"
		if len(q.orderBy) > 0 {
			info.DistinctType = "Ordered"
		}
	}
	for i, o := range q.orderBy {
		dir := "Ascending"
		if o.desc {
			dir = "Descending"
		}
		info.OrderBy = append(info.OrderBy, dir)
		info.OrderByExpressions = append(info.OrderByExpressions, q.textOf(q.at.orders[i]))
		if similarityFirst(o.x) || isVectorDistance(o.x) {
			info.HasNonStreamingOrderBy = true
		}
	}
	// aggregates lists SELECT VALUE's aggregate; a select list's are in
	// groupByAliasToAggregateType (the JS SDK refuses a plan with
	// aggregates and no VALUE).
	if a, ok := q.value.(*aggExpr); ok {
		info.Aggregates = append(info.Aggregates, aggName(a.kind))
	}
	var b strings.Builder
	switch {
	case q.aggregate:
		if len(q.orderBy) > 0 || !q.planAggregates(&info, &b, opt) {
			return info, false
		}
	case len(q.orderBy) > 0:
		if !q.planOrderBy(&info, &b) {
			return info, false
		}
	case q.offset != nil:
		// Each range returns its first offset+limit rows; the client
		// skips and takes.
		b.WriteString(q.text[:q.at.offset])
		b.WriteString("OFFSET 0 LIMIT ")
		b.WriteString(strconv.Itoa(*info.Offset + *info.Limit))
	}
	info.RewrittenQuery = b.String()
	return info, true
}

// planOrderBy writes the ORDER BY rewrite: each row is the range's row
// with its sort keys and _rid, filtered by the client's resume condition.
func (q *Query) planOrderBy(info *QueryInfo, b *strings.Builder) bool {
	root, ok := q.rootAlias()
	if !ok {
		return false
	}
	b.WriteString("SELECT ")
	if q.distinct {
		b.WriteString("DISTINCT ")
	}
	if q.top != nil {
		b.WriteString("TOP " + strconv.Itoa(*info.Top) + " ")
	}
	if !q.distinct {
		b.WriteString(root + "._rid, ")
	}
	b.WriteString("[")
	for i, s := range q.at.orders {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"item": ` + q.textOf(s) + "}")
	}
	b.WriteString("] AS orderByItems, ")
	q.writePayload(b, root)
	b.WriteString(" AS payload ")
	q.writeSource(b)
	b.WriteString(" ORDER BY ")
	for i, s := range q.at.orders {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q.textOf(s))
		if q.orderBy[i].desc {
			b.WriteString(" DESC")
		} else {
			b.WriteString(" ASC")
		}
	}
	if q.offset != nil {
		b.WriteString(" OFFSET 0 LIMIT " + strconv.Itoa(*info.Offset+*info.Limit))
	}
	return true
}

// planAggregates writes the rewrite of a query with aggregates or GROUP
// BY: each range returns its groups' keys and partial aggregates, which
// the client merges.
func (q *Query) planAggregates(info *QueryInfo, b *strings.Builder, opt PlanOptions) bool {
	if q.nestedAggs() {
		return false
	}
	partial := func(x expr, s span) (string, bool) {
		a, ok := x.(*aggExpr)
		if !ok {
			return q.textOf(s), true
		}
		arg := q.aggArgText(s)
		switch {
		case a.kind == aggAvg:
			return `{"item": {"sum": SUM(` + arg + `), "count": COUNT(` + arg + `)}}`, true
		case (a.kind == aggMin || a.kind == aggMax) && opt.CompositeMinMax:
			f := strings.ToLower(aggFunc(a.kind))
			return `{"item": {"` + f + `": ` + aggFunc(a.kind) + `(` + arg + `), "count": COUNT(` + arg + `)}}`, true
		}
		return `{"item": ` + q.textOf(s) + `}`, true
	}
	b.WriteString("SELECT ")
	if len(q.groupBy) > 0 {
		b.WriteString("[")
		for i, g := range splitList(q.textOf(q.at.group)) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`{"item": ` + g + "}")
			info.GroupByExpressions = append(info.GroupByExpressions, g)
		}
		b.WriteString("] AS groupByItems, ")
	}
	switch {
	case q.value != nil:
		p, ok := partial(q.value, q.at.value)
		if !ok {
			return false
		}
		if len(q.groupBy) == 0 {
			// SELECT VALUE [{"item": COUNT(1)}]: one partial per range.
			if _, isAgg := q.value.(*aggExpr); !isAgg {
				return false
			}
			b.Reset()
			b.WriteString("SELECT VALUE [" + p + "] ")
			q.writeSource(b)
			return true
		}
		if _, isAgg := q.value.(*aggExpr); isAgg {
			b.WriteString("[" + p + "] AS payload ")
		} else {
			b.WriteString(p + " AS payload ")
		}
	case q.star:
		return false
	default:
		b.WriteString("{")
		for i, it := range q.items {
			p, ok := partial(it.x, q.at.items[i])
			if !ok {
				return false
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(it.name) + ": " + p)
			info.GroupByAliases = append(info.GroupByAliases, it.name)
			var kind *string
			if a, ok := it.x.(*aggExpr); ok {
				k := aggName(a.kind)
				kind = &k
			}
			info.GroupByAliasToAggregateType[it.name] = kind
		}
		b.WriteString("} AS payload ")
	}
	q.writeSource(b)
	if len(q.groupBy) > 0 {
		b.WriteString(" GROUP BY " + q.textOf(q.at.group))
	}
	return true
}

// writePayload writes what a rewritten row carries as its payload: the
// document for SELECT *, the value of SELECT VALUE, else an object of the
// select items under their names.
func (q *Query) writePayload(b *strings.Builder, root string) {
	switch {
	case q.star:
		b.WriteString(root)
	case q.value != nil:
		b.WriteString(q.textOf(q.at.value))
	default:
		b.WriteString("{")
		for i, it := range q.items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(it.name) + ": " + q.textOf(q.at.items[i]))
		}
		b.WriteString("}")
	}
}

// writeSource writes q's FROM clause and its WHERE, with the ORDER BY
// resume condition when q has ORDER BY.
func (q *Query) writeSource(b *strings.Builder) {
	if q.at.from >= 0 {
		b.WriteString(q.text[q.at.from:q.at.fromEnd])
	}
	var conds []string
	if q.where != nil {
		conds = append(conds, "("+q.textOf(q.at.where)+")")
	}
	if len(q.orderBy) > 0 && !q.aggregate {
		conds = append(conds, "("+OrderByFilter+")")
	}
	if len(conds) > 0 {
		b.WriteString(" WHERE " + strings.Join(conds, " AND "))
	}
}

// rootAlias is the name of the alias of q's documents, when q reads the
// container's documents themselves (FROM c, FROM root r), not a path
// into them.
func (q *Query) rootAlias() (string, bool) {
	if len(q.from) == 0 || q.from[0].sub != nil || q.from[0].iterate {
		return "", false
	}
	if _, ok := q.from[0].x.(rootRef); !ok || q.from[0].alias == "" {
		return "", false
	}
	return q.from[0].alias, true
}

// textOf is the text of s in q.
func (q *Query) textOf(s span) string { return strings.TrimSpace(q.text[s.start:s.end]) }

// aggArgText is the text of the argument of the aggregate call at s.
func (q *Query) aggArgText(s span) string {
	t := q.textOf(s)
	open, close := strings.IndexByte(t, '('), strings.LastIndexByte(t, ')')
	if open < 0 || close < open {
		return t
	}
	return strings.TrimSpace(t[open+1 : close])
}

// splitList splits an expression list's text at its top-level commas.
func splitList(t string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(t[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(t[start:]))
}

// nestedAggs reports whether an aggregate of q sits inside another
// expression of its select list rather than being a select item (or the
// VALUE) itself.
func (q *Query) nestedAggs() bool {
	top := 0
	if _, ok := q.value.(*aggExpr); ok {
		top++
	}
	for _, it := range q.items {
		if _, ok := it.x.(*aggExpr); ok {
			top++
		}
	}
	return top != len(q.aggs)
}

// isVectorDistance reports whether x is a VectorDistance call.
func isVectorDistance(x expr) bool {
	c, ok := x.(*callExpr)
	return ok && strings.EqualFold(c.name, "VectorDistance")
}

// aggName is an aggregate's name in a plan.
func aggName(k aggKind) string {
	switch k {
	case aggCount:
		return "Count"
	case aggSum:
		return "Sum"
	case aggAvg:
		return "Average"
	case aggMin:
		return "Min"
	case aggCountIf:
		return "CountIf"
	}
	return "Max"
}

// aggFunc is an aggregate's SQL function name.
func aggFunc(k aggKind) string {
	switch k {
	case aggCount:
		return "COUNT"
	case aggSum:
		return "SUM"
	case aggAvg:
		return "AVG"
	case aggMin:
		return "MIN"
	case aggCountIf:
		return "COUNTIF"
	}
	return "MAX"
}
