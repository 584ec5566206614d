package kernels

import "math"

// fma32 returns x·y + z rounded once to float32 (round to nearest even), as
// the VFMADD instructions compute it, subnormals included. The portable
// kernels call it wherever the assembly fuses a multiply and an add, so
// that every implementation gives the same bits.
//
// The product of two float32s is exact in float64 (24+24 < 53 bits), so
// s = p + z rounded to float64 is the only rounding before the final one
// to float32. That double rounding is wrong only when s lands exactly on a
// float32 rounding boundary (a midpoint) while the addition was inexact,
// or when the float32 result is subnormal (its boundaries lie elsewhere);
// fma32Slow handles those cases by rounding to odd.
func fma32(x, y, z float32) float32 {
	p := float64(x) * float64(y)
	s := p + float64(z)
	b := math.Float64bits(s)
	// Normal float32 range (|s| ≥ 2^-126, Inf and NaN included) and s not
	// a midpoint between two float32s: the 29 bits float32 drops are not
	// 1 followed by 28 zeros.
	if b&(0x7ff<<52) >= (1023-126)<<52 && b&(1<<29-1) != 1<<28 {
		return float32(s)
	}
	return fma32Slow(p, float64(z), s)
}

// fma32Slow rounds p + z (p exact, s = p + z rounded to float64) to
// float32 through round-to-odd: s is moved one float64 ulp towards the
// exact sum when it is inexact and its last bit is even. Rounding an odd
// 53-bit value to 24 bits (or fewer, for subnormals) is then correct:
// round-to-odd with two or more extra bits never creates a false tie.
func fma32Slow(p, z, s float64) float32 {
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// TwoSum: s + e = p + z exactly (no overflow: |p| ≤ 2^256).
	bb := s - p
	e := (p - (s - bb)) + (z - bb)
	b := math.Float64bits(s)
	if e == 0 || b&1 == 1 {
		return float32(s)
	}
	if (e > 0) == (s > 0) {
		b++ // away from zero
	} else {
		b-- // towards zero; s ≠ 0 here, since s = 0 implies e = 0
	}
	return float32(math.Float64frombits(b))
}
