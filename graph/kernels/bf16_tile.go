package kernels

import "math"

// The definition of the bfloat16 products (SgemmBF16, the products of a
// PackBBF16 operand): AMX's order (TDPBF16PS). The depth is
// cut into blocks of 16 pairs (32 elements; the last block padded with
// +0). For each block, two chains start from +0: e over the products of
// the even elements and o over the odd ones, pair after pair; the
// accumulator then takes (e + o). The accumulator starts from +0 and runs
// over the whole depth, in one pass. Every step rounds to nearest even
// with denormals flushed (fmaFTZ); the products of bfloat16 values are
// exact. experiments/precision/amxprobe and TestAMXEqualsReference pin
// TDPBF16PS to this order.

// tileBlock is the depth of one TDPBF16PS step: 16 pairs.
const tileBlock = 32

// sgemmBF16Ref is the definition of the bfloat16 product, element by
// element; every backend gives its bits: acc as above, then v = alpha·acc
// and C = v, or beta·C + v (fused) when beta ≠ 0, as Sgemm's epilogue.
func sgemmBF16Ref(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	at := func(i, p int) float32 {
		if p >= k {
			return 0
		}
		if transA {
			return RoundBF16(a[p*lda+i])
		}
		return RoundBF16(a[i*lda+p])
	}
	bt := func(p, j int) float32 {
		if p >= k {
			return 0
		}
		if transB {
			return RoundBF16(b[j*ldb+p])
		}
		return RoundBF16(b[p*ldb+j])
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var acc float32
			for p0 := 0; p0 < k; p0 += tileBlock {
				var e, o float32
				for p := p0; p < p0+tileBlock; p += 2 {
					e = fmaFTZ(at(i, p), bt(p, j), e)
					o = fmaFTZ(at(i, p+1), bt(p+1, j), o)
				}
				acc = fmaFTZ(1, acc, fmaFTZ(1, e, o))
			}
			v := fmaFTZ(alpha, acc, float32(math.Copysign(0, -1)))
			if beta == 0 {
				c[i*ldc+j] = v
			} else {
				c[i*ldc+j] = fmaFTZ(beta, c[i*ldc+j], v)
			}
		}
	}
}
