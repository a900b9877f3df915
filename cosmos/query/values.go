// Package query is the Azure Cosmos DB for NoSQL query language: a lexer, a
// parser and an evaluator over decoded JSON documents.
//
// A Value is a JSON value as the query language sees it: nil (null), bool,
// float64, string, []any (array), *Object (object), or Undefined (a missing
// property, or the result of an operation the language leaves undefined).
package query

import (
	"slices"
	"strings"
)

// undefined is the type of Undefined; it has one value.
type undefined struct{}

// Undefined is the query language's undefined value: what a missing property
// evaluates to, and what most operations return when their operands have the
// wrong types. Compare values with it using ==.
var Undefined any = undefined{}

// isUndef reports whether v is Undefined.
func isUndef(v any) bool {
	_, ok := v.(undefined)
	return ok
}

// Object is a JSON object that keeps its properties in order. Keys and Vals
// have the same length; Vals[i] is the value of Keys[i].
type Object struct {
	Keys []string
	Vals []any
}

// Get returns the value of property k and whether it exists.
func (o *Object) Get(k string) (any, bool) {
	for i, key := range o.Keys {
		if key == k {
			return o.Vals[i], true
		}
	}
	return nil, false
}

// Set gives property k the value v, in place if k exists, else appended.
func (o *Object) Set(k string, v any) {
	for i, key := range o.Keys {
		if key == k {
			o.Vals[i] = v
			return
		}
	}
	o.Keys = append(o.Keys, k)
	o.Vals = append(o.Vals, v)
}

// Delete removes property k and reports whether it existed.
func (o *Object) Delete(k string) bool {
	for i, key := range o.Keys {
		if key == k {
			o.Keys = slices.Delete(o.Keys, i, i+1)
			o.Vals = slices.Delete(o.Vals, i, i+1)
			return true
		}
	}
	return false
}

// Type ranks, in the order ORDER BY sorts values of different types.
const (
	rankUndefined = iota
	rankNull
	rankBool
	rankNumber
	rankString
	rankArray
	rankObject
)

// typeRank returns v's place in the cross-type order.
func typeRank(v any) int {
	switch v.(type) {
	case nil:
		return rankNull
	case bool:
		return rankBool
	case float64:
		return rankNumber
	case string:
		return rankString
	case []any:
		return rankArray
	case *Object:
		return rankObject
	}
	return rankUndefined
}

// Compare orders any two values the way ORDER BY does and returns -1, 0 or
// +1. Values of different types order by type: undefined < null < false <
// true < numbers < strings < arrays < objects. Strings compare by code
// point; arrays element by element, then by length; objects by their
// properties sorted by name (property order does not matter, as for Equal).
func Compare(a, b any) int {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		if ra < rb {
			return -1
		}
		return 1
	}
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case []any:
		y := b.([]any)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := Compare(x[i], y[i]); c != 0 {
				return c
			}
		}
		return cmpInt(len(x), len(y))
	case *Object:
		return compareObjects(x, b.(*Object))
	}
	return 0
}

// cmpInt compares two ints.
func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareObjects orders objects by their (name, value) pairs in name order.
func compareObjects(x, y *Object) int {
	xs, ys := sortedIdx(x), sortedIdx(y)
	for i := 0; i < len(xs) && i < len(ys); i++ {
		if c := strings.Compare(x.Keys[xs[i]], y.Keys[ys[i]]); c != 0 {
			return c
		}
		if c := Compare(x.Vals[xs[i]], y.Vals[ys[i]]); c != 0 {
			return c
		}
	}
	return cmpInt(len(xs), len(ys))
}

// sortedIdx returns the indexes of o's properties in name order, skipping
// undefined values (which a serialized object would not have).
func sortedIdx(o *Object) []int {
	idx := make([]int, 0, len(o.Keys))
	for i := range o.Keys {
		if !isUndef(o.Vals[i]) {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(i, j int) int { return strings.Compare(o.Keys[i], o.Keys[j]) })
	return idx
}

// Equal reports whether a and b are the same value: same type and, for
// arrays and objects, deeply equal (objects regardless of property order).
// It is the language's = when both sides have the same type, and the
// identity DISTINCT and GROUP BY use. Undefined equals only Undefined here.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		return ok && compareObjects(x, y) == 0
	case undefined:
		return isUndef(b)
	}
	return false
}
