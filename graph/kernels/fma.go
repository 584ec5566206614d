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
	s := float64(x)*float64(y) + float64(z)
	// The slow path is needed when s is a midpoint between two float32s
	// (the 29 bits float32 drops are 1 followed by 28 zeros) or when
	// 0 < |s| < 2^-126 (a subnormal float32). A zero s is exact: p + z
	// cannot round to zero in float64.
	if b := math.Float64bits(s); b&(1<<29-1) == 1<<28 || b<<1 < (1023-126)<<53 && b<<1 != 0 {
		return fma32Slow(x, y, z)
	}
	return float32(s)
}

// fma32Fast is fma32 for the cases that need no fix-up, small enough to be
// inlined: r is fma32(x, y, z) when ok is true; when ok is false the
// caller must call fma32.
func fma32Fast(x, y, z float32) (r float32, ok bool) {
	s := float64(x)*float64(y) + float64(z)
	b := math.Float64bits(s)
	return float32(s), b&(1<<29-1) != 1<<28 && (b<<1 >= (1023-126)<<53 || b<<1 == 0)
}

// fma32Slow rounds p + z (p = x·y, exact in float64; s = p + z rounded to
// float64) to float32 through round-to-odd: s is moved one float64 ulp towards the
// exact sum when it is inexact and its last bit is even. Rounding an odd
// 53-bit value to 24 bits (or fewer, for subnormals) is then correct:
// round-to-odd with two or more extra bits never creates a false tie.
func fma32Slow(x, y, z32 float32) float32 {
	p, z := float64(x)*float64(y), float64(z32)
	s := p + z
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
