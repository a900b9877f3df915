package query

import "math"

// typeFunctions are the type-checking functions, which answer false rather
// than undefined for an undefined argument, and the conditional functions
// IIF and CHOOSE.
var typeFunctions = map[string]*function{
	"IS_ARRAY":   isType(func(v any) bool { _, ok := v.([]any); return ok }),
	"IS_BOOL":    isType(func(v any) bool { _, ok := v.(bool); return ok }),
	"IS_DEFINED": isType(func(v any) bool { return !isUndef(v) }),
	"IS_NULL":    isType(func(v any) bool { return v == nil }),
	"IS_NUMBER":  isType(func(v any) bool { _, ok := v.(float64); return ok }),
	"IS_OBJECT":  isType(func(v any) bool { _, ok := v.(*Object); return ok }),
	"IS_PRIMITIVE": isType(func(v any) bool {
		switch v.(type) {
		case nil, bool, float64, string:
			return true
		}
		return false
	}),
	"IS_STRING": isType(func(v any) bool { _, ok := v.(string); return ok }),
	"IS_FINITE_NUMBER": isType(func(v any) bool {
		n, ok := v.(float64)
		return ok && !math.IsInf(n, 0) && !math.IsNaN(n)
	}),
	// IS_INTEGER: a number with no fraction in the range of a 64-bit integer.
	"IS_INTEGER": isType(func(v any) bool {
		n, ok := v.(float64)
		return ok && n == math.Trunc(n) && n >= -(1<<63) && n <= 1<<63
	}),
	// IIF(cond, a, b) is a when cond is true, else b (also for a non-boolean
	// or undefined cond). Only the chosen branch has to be defined.
	"IIF": fnU(3, 3, func(_ *env, a []any) any {
		if a[0] == true {
			return a[1]
		}
		return a[2]
	}),
	// CHOOSE(i, v1, v2, ...) is the i-th value, counting from 1; undefined
	// out of range.
	"CHOOSE": fnU(2, -1, func(_ *env, a []any) any {
		i, ok := a[0].(float64)
		if !ok || i != math.Trunc(i) || i < 1 || i >= float64(len(a)) {
			return Undefined
		}
		return a[int(i)]
	}),
}

// isType builds a one-argument type test.
func isType(test func(any) bool) *function {
	return fnU(1, 1, func(_ *env, a []any) any { return test(a[0]) })
}
