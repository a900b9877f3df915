package query

import (
	"encoding/base64"
	encbin "encoding/binary"
	"math"
	"strings"
)

// itemFunctions are the item functions.
var itemFunctions = map[string]*function{
	// DOCUMENTID(root) is the item's number within its physical partition:
	// the last 8 bytes of its _rid, little-endian (the reference example's
	// _rid "36ZyAPW+uN8NAAAAAAAAAA==" is document 13). Items that lapse
	// stored before it numbered them so carry bit 62, which the number
	// leaves out.
	"DOCUMENTID": fn(1, 1, func(_ *env, a []any) any {
		o, ok := a[0].(*Object)
		if !ok {
			return Undefined
		}
		v, _ := o.Get("_rid")
		rid, ok := v.(string)
		if !ok {
			return Undefined
		}
		b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(rid, "-", "/"))
		if err != nil || len(b) != 16 {
			return Undefined
		}
		n := encbin.LittleEndian.Uint64(b[8:]) &^ (1 << 62)
		if n > 1<<53 {
			return Undefined
		}
		return float64(n)
	}),
}

// vectorFunctions are the vector search functions.
var vectorFunctions = map[string]*function{
	// VectorDistance(v1, v2 [, bruteForce [, options]]) is the similarity
	// of two vectors by options.distanceFunction: "cosine" (the default),
	// "dotproduct" or "euclidean".
	"VECTORDISTANCE": fn(2, 4, vectorDistance),
	// _VectorScore is VectorDistance under the name the gateway's hybrid
	// search plans give it in their component queries.
	"_VECTORSCORE": fn(2, 4, vectorDistance),
}

// vectorDistance is VectorDistance(v1, v2 [, bruteForce [, options]]).
func vectorDistance(_ *env, a []any) any {
	x, ok1 := numbers(a[0])
	y, ok2 := numbers(a[1])
	if !ok1 || !ok2 || len(x) != len(y) || len(x) == 0 {
		return Undefined
	}
	if len(a) > 2 {
		if _, ok := a[2].(bool); !ok {
			return Undefined
		}
	}
	metric := vectorDistanceFunction(a)
	switch metric {
	case "cosine":
		var dot, nx, ny float64
		for i := range x {
			dot += x[i] * y[i]
			nx += x[i] * x[i]
			ny += y[i] * y[i]
		}
		if nx == 0 || ny == 0 {
			return Undefined
		}
		return dot / (math.Sqrt(nx) * math.Sqrt(ny))
	case "dotproduct":
		var dot float64
		for i := range x {
			dot += x[i] * y[i]
		}
		return dot
	case "euclidean":
		var s float64
		for i := range x {
			s += (x[i] - y[i]) * (x[i] - y[i])
		}
		return math.Sqrt(s)
	}
	return Undefined
}

// isVectorScore reports whether a function name is VectorDistance or the
// plans' _VectorScore.
func isVectorScore(name string) bool {
	return strings.EqualFold(name, "VectorDistance") || strings.EqualFold(name, "_VectorScore")
}

// vectorDistanceFunction returns the distanceFunction option of a
// VectorDistance call's arguments, in lower case ("cosine" when absent,
// "" when not a string).
func vectorDistanceFunction(a []any) string {
	if len(a) < 4 {
		return "cosine"
	}
	o, ok := a[3].(*Object)
	if !ok {
		return ""
	}
	v, ok := o.Get("distanceFunction")
	if !ok {
		return "cosine"
	}
	s, _ := v.(string)
	return strings.ToLower(s)
}

// numbers returns v as a slice of numbers, if it is an array of them.
func numbers(v any) ([]float64, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]float64, len(arr))
	for i, el := range arr {
		n, ok := el.(float64)
		if !ok {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// similarityFirst reports whether ORDER BY x without ASC or DESC sorts
// descending: x is a VectorDistance call, whose results the service
// always sorts most similar first, which for the cosine and dotproduct
// scores is the highest and for euclidean distances the lowest.
func similarityFirst(x expr) bool {
	c, ok := x.(*callExpr)
	if !ok || !isVectorScore(c.name) {
		return false
	}
	if len(c.args) == 4 {
		if o, ok := c.args[3].(*objectExpr); ok {
			for i, k := range o.keys {
				if l, ok := o.vals[i].(*litExpr); ok && k == "distanceFunction" {
					if s, ok := l.v.(string); ok && strings.EqualFold(s, "euclidean") {
						return false
					}
				}
			}
		}
	}
	return true
}
