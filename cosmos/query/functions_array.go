package query

import "math"

// arrayFunctions are the array and object functions.
var arrayFunctions = map[string]*function{
	"ARRAY_CONCAT": fn(2, -1, func(_ *env, a []any) any {
		out := []any{}
		for _, v := range a {
			arr, ok := v.([]any)
			if !ok {
				return Undefined
			}
			out = append(out, arr...)
		}
		return out
	}),
	// ARRAY_CONTAINS(arr, v [, partial]): with partial true, an object v
	// matches an element object that has all of v's properties.
	"ARRAY_CONTAINS": fn(2, 3, func(_ *env, a []any) any {
		arr, ok1 := a[0].([]any)
		partial, ok2 := optBool(a, 2)
		if !ok1 || !ok2 {
			return Undefined
		}
		for _, el := range arr {
			if partial && partialMatch(el, a[1]) || !partial && Equal(el, a[1]) {
				return true
			}
		}
		return false
	}),
	// ARRAY_CONTAINS_ANY and _ALL take the values to look for as further
	// arguments; an undefined one is neither found nor missing, so the
	// result follows OR and AND over undefined.
	"ARRAY_CONTAINS_ANY": fnU(2, -1, func(_ *env, a []any) any {
		arr, ok := a[0].([]any)
		if !ok {
			return Undefined
		}
		var acc any = false
		for _, v := range a[1:] {
			acc = orValues(acc, containsValue(arr, v))
		}
		return acc
	}),
	"ARRAY_CONTAINS_ALL": fnU(2, -1, func(_ *env, a []any) any {
		arr, ok := a[0].([]any)
		if !ok {
			return Undefined
		}
		var acc any = true
		for _, v := range a[1:] {
			acc = andValues(acc, containsValue(arr, v))
		}
		return acc
	}),
	"ARRAY_LENGTH": fn(1, 1, func(_ *env, a []any) any {
		if arr, ok := a[0].([]any); ok {
			return float64(len(arr))
		}
		return Undefined
	}),
	// ARRAY_SLICE(arr, start [, length]): a negative start counts from the end.
	"ARRAY_SLICE": fn(2, 3, func(_ *env, a []any) any {
		arr, ok1 := a[0].([]any)
		start, ok2 := argNum(a, 1)
		if !ok1 || !ok2 {
			return Undefined
		}
		n := float64(len(arr))
		start = math.Trunc(start)
		if start < 0 {
			start = math.Max(0, n+start)
		}
		start = math.Min(start, n)
		end := n
		if len(a) == 3 {
			l, ok := argNum(a, 2)
			if !ok {
				return Undefined
			}
			end = math.Max(start, math.Min(n, start+math.Trunc(l)))
		}
		return append([]any{}, arr[int(start):int(end)]...)
	}),
	// SetIntersect(a, b): the distinct values of b that a has too, in b's order.
	"SETINTERSECT": fn(2, 2, func(_ *env, a []any) any {
		x, ok1 := a[0].([]any)
		y, ok2 := a[1].([]any)
		if !ok1 || !ok2 {
			return Undefined
		}
		out := []any{}
		for _, v := range y {
			if containsValue(x, v) == true && containsValue(out, v) != true {
				out = append(out, v)
			}
		}
		return out
	}),
	// SetUnion(a, b): the distinct values of a, then of b, in order.
	"SETUNION": fn(2, 2, func(_ *env, a []any) any {
		x, ok1 := a[0].([]any)
		y, ok2 := a[1].([]any)
		if !ok1 || !ok2 {
			return Undefined
		}
		out := []any{}
		for _, v := range append(append([]any{}, x...), y...) {
			if containsValue(out, v) != true {
				out = append(out, v)
			}
		}
		return out
	}),
	// ObjectToArray(obj [, keyName [, valueName]]): one {k, v} object per property.
	"OBJECTTOARRAY": fn(1, 3, func(_ *env, a []any) any {
		o, ok := a[0].(*Object)
		if !ok {
			return Undefined
		}
		kName, vName := "k", "v"
		if len(a) > 1 {
			if kName, ok = argStr(a, 1); !ok {
				return Undefined
			}
		}
		if len(a) > 2 {
			if vName, ok = argStr(a, 2); !ok {
				return Undefined
			}
		}
		out := make([]any, 0, len(o.Keys))
		for i, k := range o.Keys {
			if isUndef(o.Vals[i]) {
				continue
			}
			out = append(out, &Object{Keys: []string{kName, vName}, Vals: []any{k, o.Vals[i]}})
		}
		return out
	}),
}

// containsValue reports whether arr has an element equal to v: true,
// false, or Undefined when v is undefined.
func containsValue(arr []any, v any) any {
	if isUndef(v) {
		return Undefined
	}
	for _, el := range arr {
		if Equal(el, v) {
			return true
		}
	}
	return false
}

// partialMatch reports whether el matches v for ARRAY_CONTAINS with partial
// matching: objects match when el has each of v's properties with an equal
// value; other values must be equal.
func partialMatch(el, v any) bool {
	vo, ok1 := v.(*Object)
	eo, ok2 := el.(*Object)
	if !ok1 || !ok2 {
		return Equal(el, v)
	}
	for i, k := range vo.Keys {
		ev, ok := eo.Get(k)
		if !ok || !Equal(ev, vo.Vals[i]) {
			return false
		}
	}
	return true
}

// orValues is the OR of two logical values (true, false or Undefined).
func orValues(a, b any) any {
	if a == true || b == true {
		return true
	}
	if a == false && b == false {
		return false
	}
	return Undefined
}

// andValues is the AND of two logical values (true, false or Undefined).
func andValues(a, b any) any {
	if a == false || b == false {
		return false
	}
	if a == true && b == true {
		return true
	}
	return Undefined
}
