package query

// Features lists what in q needs all of a container's documents at once:
// "Top", "OrderBy", "OffsetAndLimit", "Aggregate", "GroupBy", "Distinct",
// in that order. The service's gateway cannot run such a query across
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
	return out
}
