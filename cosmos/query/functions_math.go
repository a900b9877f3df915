package query

import "math"

// mathFunctions are the mathematical functions. They take numbers and give
// numbers; any other argument makes the result undefined.
var mathFunctions = map[string]*function{
	"ABS":     num1(math.Abs),
	"CEILING": num1(math.Ceil),
	"FLOOR":   num1(math.Floor),
	"ROUND":   num1(math.Round), // halves away from zero: ROUND(2.5) = 3, ROUND(-2.5) = -3
	"TRUNC":   num1(math.Trunc),
	"SQRT":    num1(math.Sqrt),
	"SQUARE":  num1(func(x float64) float64 { return x * x }),
	"EXP":     num1(math.Exp),
	"LOG10":   num1(func(x float64) float64 { return logOf(x, 10) }),
	"SIGN": num1(func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}),
	"SIN":     num1(math.Sin),
	"COS":     num1(math.Cos),
	"TAN":     num1(tanOf),
	"COT":     num1(func(x float64) float64 { return 1 / tanOf(x) }),
	"ASIN":    num1(math.Asin),
	"ACOS":    num1(math.Acos),
	"ATAN":    num1(math.Atan),
	"DEGREES": num1(func(x float64) float64 { return x * 180 / math.Pi }),
	"RADIANS": num1(func(x float64) float64 { return x * math.Pi / 180 }),
	"POWER":   num2(math.Pow),
	"ATN2":    num2(math.Atan2),
	"LOG": fn(1, 2, func(_ *env, a []any) any {
		x, ok := argNum(a, 0)
		if !ok {
			return Undefined
		}
		if len(a) == 1 {
			return logOf(x, 0)
		}
		base, ok := argNum(a, 1)
		if !ok || base == 0 {
			return Undefined
		}
		return logOf(x, base)
	}),
	"PI":   fn(0, 0, func(*env, []any) any { return math.Pi }),
	"RAND": fn(0, 0, func(e *env, _ []any) any { return e.rs.rng.Float64() }),
	// NumberBin(x, size) rounds x down to a multiple of size.
	"NUMBERBIN": fn(1, 2, func(_ *env, a []any) any {
		x, ok := argNum(a, 0)
		if !ok {
			return Undefined
		}
		size := 1.0
		if len(a) == 2 {
			if size, ok = argNum(a, 1); !ok || size == 0 {
				return Undefined
			}
		}
		return math.Floor(x/size) * size
	}),
	"INTADD": int2(func(a, b int64) (int64, bool) { return a + b, true }),
	"INTSUB": int2(func(a, b int64) (int64, bool) { return a - b, true }),
	"INTMUL": int2(func(a, b int64) (int64, bool) { return a * b, true }),
	"INTDIV": int2(func(a, b int64) (int64, bool) {
		if b == 0 {
			return 0, false
		}
		return a / b, true
	}),
	"INTMOD": int2(func(a, b int64) (int64, bool) {
		if b == 0 {
			return 0, false
		}
		return a % b, true
	}),
	"INTBITAND":        int2(func(a, b int64) (int64, bool) { return a & b, true }),
	"INTBITOR":         int2(func(a, b int64) (int64, bool) { return a | b, true }),
	"INTBITXOR":        int2(func(a, b int64) (int64, bool) { return a ^ b, true }),
	"INTBITLEFTSHIFT":  int2(func(a, b int64) (int64, bool) { return a << (uint64(b) & 63), b >= 0 }),
	"INTBITRIGHTSHIFT": int2(func(a, b int64) (int64, bool) { return a >> (uint64(b) & 63), b >= 0 }),
	"INTBITNOT": fn(1, 1, func(_ *env, a []any) any {
		x, ok := argInt(a, 0)
		if !ok {
			return Undefined
		}
		return float64(^x)
	}),
}

// num1 builds a one-number function.
func num1(f func(float64) float64) *function {
	return fn(1, 1, func(_ *env, a []any) any {
		if x, ok := argNum(a, 0); ok {
			return f(x)
		}
		return Undefined
	})
}

// num2 builds a two-number function.
func num2(f func(x, y float64) float64) *function {
	return fn(2, 2, func(_ *env, a []any) any {
		x, ok1 := argNum(a, 0)
		y, ok2 := argNum(a, 1)
		if !ok1 || !ok2 {
			return Undefined
		}
		return f(x, y)
	})
}

// argInt returns args[i] as a 64-bit integer: a number without fraction.
func argInt(args []any, i int) (int64, bool) {
	f, ok := args[i].(float64)
	if !ok || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// int2 builds a function over two integers; non-integers make it undefined.
func int2(f func(a, b int64) (int64, bool)) *function {
	return fn(2, 2, func(_ *env, a []any) any {
		x, ok1 := argInt(a, 0)
		y, ok2 := argInt(a, 1)
		if !ok1 || !ok2 {
			return Undefined
		}
		r, ok := f(x, y)
		if !ok {
			return Undefined
		}
		return float64(r)
	})
}
