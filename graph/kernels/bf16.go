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
// and b (given as their float32 values), fused (the product is exact),
// rounded to nearest even, with a subnormal acc read as zero (DAZ) and a
// result below the smallest normal float32 after rounding flushed to a
// zero of its sign (FTZ). The bfloat16 operands are never subnormal: ToBF16
// flushes them.
func dpbf16(acc, a, b float32) float32 {
	if math.Float32bits(acc)&0x7f800000 == 0 {
		acc = math.Float32frombits(math.Float32bits(acc) & 0x80000000)
	}
	r := fma32(a, b, acc)
	if u := math.Float32bits(r); u&0x7f800000 == 0 && u&0x7fffff != 0 || u&0x7fffffff == 0x00800000 && tiny(a, b, acc) {
		return math.Float32frombits(u & 0x80000000)
	}
	return r
}

// tiny reports whether a·b + acc, rounded to float32's 24 bits with an
// unbounded exponent, lies below 2^-126: x86 detects tininess after
// rounding, so a sum just below 2^-126 that rounds up to it (as fma32's
// subnormal rounding makes it) is still flushed when its 24-bit rounding
// stays below.
func tiny(a, b, acc float32) bool {
	// Scale by 2^64 so that the unbounded rounding is float32's own: the
	// product and the sum stay exact in float64 up to the one rounding
	// fma32 does.
	const s = 1 << 32
	r := fma32(a*s, b*s, acc*s*s)
	return math.Abs(float64(r)) < 0x1p-62
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
// C = v, or fma32(beta, C, v) when beta ≠ 0, for the first pass, and
// C = C + v for the others.
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
				v := float32(alpha * acc) // rounded: no fusion with the add
				switch {
				case pc > 0:
					*e += v
				case beta != 0:
					*e = fma32(beta, *e, v)
				default:
					*e = v
				}
			}
		}
	}
}
