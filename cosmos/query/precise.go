package query

import (
	"math"
	"math/big"
)

// The service computes LOG, LOG10 and TAN with its C runtime, whose
// results are correctly rounded (or nearly) where Go's math package can be
// off in the last places: LOG10(5) is 0.6989700043360189 there,
// 0.6989700043360187 with math.Log10; TAN(PI()/2) is 16331239353195370
// there, 16331239353195392 with math.Tan. So the logarithms are computed
// with 128 bits and rounded once, and TAN reduces its argument with a
// 128-bit pi.

// logPrec is the working precision of the logarithms.
const logPrec = 128

// bigLn returns the natural logarithm of x > 0 (finite) at logPrec bits:
// x = m·2^e with m in [0.5, 1), ln x = e·ln 2 + 2·atanh((m-1)/(m+1)).
func bigLn(x float64) *big.Float {
	m := new(big.Float).SetPrec(logPrec)
	e := new(big.Float).SetPrec(logPrec).SetFloat64(x).MantExp(m)
	r := atanh2(ratio(m))
	return r.Add(r, new(big.Float).SetPrec(logPrec).Mul(new(big.Float).SetInt64(int64(e)), bigLn2()))
}

// ratio returns (m-1)/(m+1).
func ratio(m *big.Float) *big.Float {
	one := new(big.Float).SetPrec(logPrec).SetInt64(1)
	num := new(big.Float).SetPrec(logPrec).Sub(m, one)
	den := new(big.Float).SetPrec(logPrec).Add(m, one)
	return num.Quo(num, den)
}

// atanh2 returns 2·atanh(z) = 2·(z + z³/3 + z⁵/5 + ...) for |z| ≤ 1/3.
func atanh2(z *big.Float) *big.Float {
	sum := new(big.Float).SetPrec(logPrec)
	z2 := new(big.Float).SetPrec(logPrec).Mul(z, z)
	term := new(big.Float).SetPrec(logPrec).Set(z)
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -logPrec-4)
	for k := int64(1); ; k += 2 {
		t := new(big.Float).SetPrec(logPrec).Quo(term, new(big.Float).SetInt64(k))
		sum.Add(sum, t)
		if t.Abs(t).Cmp(eps) < 0 {
			break
		}
		term.Mul(term, z2)
	}
	return sum.Add(sum, sum)
}

// bigLn2 returns ln 2 = 2·atanh(1/3).
func bigLn2() *big.Float {
	third := new(big.Float).SetPrec(logPrec).Quo(big.NewFloat(1), big.NewFloat(3))
	return atanh2(third)
}

// logOf returns ln x / ln base rounded once to a float64 (base 0 means e),
// with the special cases of math.Log for x ≤ 0, infinities and NaN.
func logOf(x, base float64) float64 {
	if !(x > 0) || math.IsInf(x, 1) || base != 0 && (!(base > 0) || math.IsInf(base, 1) || base == 1) {
		if base == 0 {
			return math.Log(x)
		}
		return math.Log(x) / math.Log(base)
	}
	if x == 1 {
		return 0
	}
	l := bigLn(x)
	if base != 0 {
		l.Quo(l, bigLn(base))
	}
	f, _ := l.Float64()
	return f
}

// piDigits is pi to 100 decimal places.
const piDigits = "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679"

// tanOf returns tan x. The argument is reduced to r = x - k·π/2 with
// |r| ≤ π/4 in 128-bit arithmetic; then tan x is sin r / cos r for even k
// and -cos r / sin r for odd k.
func tanOf(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1<<50 {
		return math.Tan(x)
	}
	halfPi, _, _ := big.ParseFloat(piDigits, 10, logPrec, big.ToNearestEven)
	halfPi.Quo(halfPi, big.NewFloat(2))
	k := math.Round(x / (math.Pi / 2))
	r := new(big.Float).SetPrec(logPrec).Mul(halfPi, big.NewFloat(k))
	r.Sub(new(big.Float).SetPrec(logPrec).SetFloat64(x), r)
	rf, _ := r.Float64()
	s, c := math.Sincos(rf)
	if math.Mod(k, 2) == 0 {
		return s / c
	}
	return -c / s
}
