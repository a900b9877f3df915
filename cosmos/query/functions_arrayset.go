package query

import "slices"

// arraySetFunctions are the array aggregates (ARRAY_AVG, ARRAY_MAX, ...)
// and the set functions added beside SetIntersect and SetUnion.
var arraySetFunctions = map[string]*function{
	"ARRAY_SUM":    arrayNumbers(func(ns []float64) any { return sumOf(ns) }),
	"ARRAY_AVG":    arrayNumbers(avgOf),
	"ARRAY_MEDIAN": arrayNumbers(medianOf),
	"ARRAY_MAX":    arrayBest(aggMax),
	"ARRAY_MIN":    arrayBest(aggMin),
	// SetDifference(a, b): the distinct values of a that b lacks, in a's order.
	"SETDIFFERENCE": fn(2, 2, func(_ *env, a []any) any {
		x, ok1 := a[0].([]any)
		y, ok2 := a[1].([]any)
		if !ok1 || !ok2 {
			return Undefined
		}
		out := []any{}
		for _, v := range x {
			if containsValue(y, v) != true && containsValue(out, v) != true {
				out = append(out, v)
			}
		}
		return out
	}),
	// SetEqual(a, b): whether a and b hold the same distinct values.
	"SETEQUAL": fn(2, 2, func(_ *env, a []any) any {
		x, ok1 := a[0].([]any)
		y, ok2 := a[1].([]any)
		if !ok1 || !ok2 {
			return Undefined
		}
		for _, v := range x {
			if containsValue(y, v) != true {
				return false
			}
		}
		for _, v := range y {
			if containsValue(x, v) != true {
				return false
			}
		}
		return true
	}),
}

// arrayNumbers builds an array aggregate over numbers: undefined elements
// are skipped, and any other non-number makes the result undefined.
func arrayNumbers(f func(ns []float64) any) *function {
	return fn(1, 1, func(_ *env, a []any) any {
		arr, ok := a[0].([]any)
		if !ok {
			return Undefined
		}
		ns := make([]float64, 0, len(arr))
		for _, v := range arr {
			if isUndef(v) {
				continue
			}
			n, ok := v.(float64)
			if !ok {
				return Undefined
			}
			ns = append(ns, n)
		}
		return f(ns)
	})
}

// sumOf adds ns in order, as SUM does (0 for none).
func sumOf(ns []float64) float64 {
	s := 0.0
	for _, n := range ns {
		s += n
	}
	return s
}

// avgOf is the mean of ns, the sum in order divided by the count; of no
// number it is undefined, as AVG is.
func avgOf(ns []float64) any {
	if len(ns) == 0 {
		return Undefined
	}
	return sumOf(ns) / float64(len(ns))
}

// medianOf is the middle value of ns, or the mean of the two middle ones;
// of no number it is undefined.
func medianOf(ns []float64) any {
	if len(ns) == 0 {
		return Undefined
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// arrayBest builds ARRAY_MIN or ARRAY_MAX: the least or greatest element
// in the order MIN and MAX use (null < booleans < numbers < strings),
// undefined elements skipped; an array or object element, or no element,
// makes it undefined.
func arrayBest(kind aggKind) *function {
	return fn(1, 1, func(_ *env, a []any) any {
		arr, ok := a[0].([]any)
		if !ok {
			return Undefined
		}
		acc := &accumulator{kind: kind}
		for _, v := range arr {
			acc.add(v)
		}
		return acc.result()
	})
}
