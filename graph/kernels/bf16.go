package kernels

import "math"

// ToBF16 rounds x to bfloat16 (the upper half of a float32) as Intel's
// VCVTNEPS2BF16 does: to nearest even; a subnormal x becomes a zero of
// its sign (DAZ); a NaN keeps its sign and upper mantissa and is made
// quiet; a finite x beyond bfloat16's largest value rounds to infinity.
func ToBF16(x float32) uint16 {
	u := math.Float32bits(x)
	switch {
	case u&0x7f800000 == 0: // zero or subnormal
		return uint16(u>>16) & 0x8000
	case u&0x7fffffff > 0x7f800000: // NaN
		return uint16(u>>16) | 0x40
	case u&0x7fffffff == 0x7f800000: // infinity
		return uint16(u >> 16)
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// FromBF16 is the float32 whose upper half is h (exact).
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// RoundBF16 is x rounded to bfloat16 and widened back: FromBF16(ToBF16(x)).
func RoundBF16(x float32) float32 { return FromBF16(ToBF16(x)) }

// fmaFTZ is x·y + z rounded once to float32, to nearest even, as x86
// computes it with MXCSR's DAZ and FTZ set: subnormal operands are read as
// zeros of their sign, and a result that is tiny after rounding (below
// 2^-126 when rounded to 24 bits with an unbounded exponent) is a zero of
// its sign. A plain multiply is fmaFTZ(x, y, -0) and an add fmaFTZ(1, x, y).
func fmaFTZ(x, y, z float32) float32 {
	x, y, z = daz(x), daz(y), daz(z)
	r := fma32(x, y, z)
	if u := math.Float32bits(r); u&0x7f800000 == 0 && u&0x7fffff != 0 || u&0x7fffffff == 0x00800000 && tinyAfterRounding(x, y, z) {
		return math.Float32frombits(u & 0x80000000)
	}
	return r
}

// daz is x, or a zero of its sign when x is subnormal.
func daz(x float32) float32 {
	if u := math.Float32bits(x); u&0x7f800000 == 0 {
		return math.Float32frombits(u & 0x80000000)
	}
	return x
}

// tinyAfterRounding reports whether x·y + z, whose float32 rounding with
// gradual underflow is ±2^-126, is tiny after rounding: below 2^-126 −
// 2^-151, the midpoint under 2^-126 of the 24-bit grid (a tie rounds up
// to 2^-126, whose last bit is even). s + e is the exact sum (TwoSum).
func tinyAfterRounding(x, y, z float32) bool {
	p, zz := float64(x)*float64(y), float64(z)
	s := p + zz
	bb := s - p
	e := (p - (s - bb)) + (zz - bb)
	const t = 0x1p-126 - 0x1p-151
	switch as := math.Abs(s); {
	case as < t:
		return true
	case as > t:
		return false
	}
	return e != 0 && (e > 0) != (s > 0)
}
