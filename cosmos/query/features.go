package query

// Features lists what in q needs all of a container's documents at once:
// "Top", "OrderBy", "OffsetAndLimit", "Aggregate", "GroupBy", "Distinct",
// "HybridSearch" (ORDER BY RANK), in that order. The service's gateway cannot run such a query across
// partitions and asks the client to run it (an SDK's query pipeline); a
// query without them it serves partition by partition.
func (q *Query) Features() []string {
	var out []string
	if q.top != nil {
		out = append(out, "Top")
	}
	if len(q.orderBy) > 0 {
		out = append(out, "OrderBy")
	}
	if q.offset != nil || q.limit != nil {
		out = append(out, "OffsetAndLimit")
	}
	if len(q.aggs) > 0 {
		out = append(out, "Aggregate")
	}
	if len(q.groupBy) > 0 {
		out = append(out, "GroupBy")
	}
	if q.distinct {
		out = append(out, "Distinct")
	}
	if q.rank != nil {
		out = append(out, "HybridSearch")
	}
	return out
}

// WholeDocuments reports whether every row of q is one of its source
// documents, unchanged and in source order, so that a caller may send the
// document's stored text instead of encoding the row: SELECT * from the
// documents themselves (FROM c: no path into them, no IN, no subquery),
// with no JOIN, ORDER BY, GROUP BY, DISTINCT or aggregate. TOP and OFFSET
// LIMIT only keep fewer of them.
func (q *Query) WholeDocuments() bool {
	if !q.star || q.value != nil || len(q.from) != 1 || q.distinct || len(q.orderBy) > 0 || q.rank != nil ||
		len(q.groupBy) > 0 || len(q.aggs) > 0 || q.aggregate {
		return false
	}
	src := q.from[0]
	if src.iterate || src.sub != nil {
		return false
	}
	steps, ok := pathOf(src.x, nil)
	return ok && len(steps) == 0
}

// OnlyEqualities reports whether q's WHERE is absent or made only of the
// AND-ed conditions that Equalities(params) reports, so that a document
// satisfies it exactly when it has those values.
func (q *Query) OnlyEqualities(params Params) bool {
	if q.where == nil {
		return true
	}
	if len(q.from) == 0 || q.from[0].iterate || q.from[0].sub != nil {
		return false
	}
	prefix, ok := pathOf(q.from[0].x, nil)
	if !ok {
		return false
	}
	var only func(x expr) bool
	only = func(x expr) bool {
		switch v := x.(type) {
		case *andExpr:
			return only(v.l) && only(v.r)
		case *binaryExpr:
			if v.op != "=" {
				return false
			}
			if _, _, ok := equality(v.l, v.r, prefix, params); ok {
				return true
			}
			_, _, ok := equality(v.r, v.l, prefix, params)
			return ok
		}
		return false
	}
	return only(q.where)
}

// NeedsCorpus reports whether a run of q reads every document of the
// container besides those in its scope: FullTextScore weighs each
// document against the statistics of all of them (Options.Corpus).
func (q *Query) NeedsCorpus() bool {
	if q.rank == nil {
		return false
	}
	for _, p := range q.rank.parts {
		if _, ok := p.x.(*fullTextExpr); ok {
			return true
		}
	}
	return false
}
