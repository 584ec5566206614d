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

// dpbf16 is one step of VDPBF16PS for one lane: acc + a·b for bfloat16 a
// and b (given as their float32 values), fused (the product is exact).
// The instruction runs with DAZ and FTZ whatever MXCSR says; so does the
// whole bfloat16 product (fmaFTZ).
func dpbf16(acc, a, b float32) float32 { return fmaFTZ(a, b, acc) }

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

// bf16Step is the depth of each pass of a bfloat16 product of depth k:
// depthStep rounded up to even, so that every pass but the last covers
// whole pairs.
func bf16Step(k int) int { return (depthStep(k) + 1) &^ 1 }

// sgemmBF16Ref is the definition of the bfloat16 product, element by
// element; every kernel gives its bits. For each pass [pc, pc+kc) of
// bf16Step(k), acc starts at +0 and takes, for each pair (p, p+1) from pc,
// the odd element's product and then the even one's (dpbf16, as
// VDPBF16PS orders them; a pair cut by the end of the product pairs p
// with +0·+0). The pass then ends as an SGEMM pass does: v = alpha·acc;
// C = v, or beta·C + v (fused) when beta ≠ 0, for the first pass, and
// C = C + v for the others. Every operation of the product, the epilogue
// included, has DAZ and FTZ semantics (fmaFTZ).
func sgemmBF16Ref(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	at := func(i, p int) float32 {
		if transA {
			return RoundBF16(a[p*lda+i])
		}
		return RoundBF16(a[i*lda+p])
	}
	bt := func(p, j int) float32 {
		if transB {
			return RoundBF16(b[j*ldb+p])
		}
		return RoundBF16(b[p*ldb+j])
	}
	kstep := bf16Step(k)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			e := &c[i*ldc+j]
			for pc := 0; pc < k; pc += kstep {
				end := min(pc+kstep, k)
				var acc float32
				for p := pc; p < end; p += 2 {
					if p+1 < end {
						acc = dpbf16(acc, at(i, p+1), bt(p+1, j))
					} else {
						acc = dpbf16(acc, 0, 0)
					}
					acc = dpbf16(acc, at(i, p), bt(p, j))
				}
				v := fmaFTZ(alpha, acc, float32(math.Copysign(0, -1)))
				switch {
				case pc > 0:
					*e = fmaFTZ(1, *e, v)
				case beta != 0:
					*e = fmaFTZ(beta, *e, v)
				default:
					*e = v
				}
			}
		}
	}
}
