package kernels

import (
	"math"
	"unsafe"
)

// The emulated bfloat16 product: VDPBF16PS's two fused multiply-adds per
// pair, odd element first, are an FMA chain over a depth in which each
// pair's two elements are swapped. The operands are rounded to bfloat16,
// widened back to float32 and laid out with that order (A' m×k2, B' k2×n,
// k2 = k rounded up to even, a cut pair padded with +0), and each pass runs
// through the SGEMM driver with a micro-kernel that sets MXCSR to DAZ and
// FTZ (the assembly "FTZ" tiles, or goKernelFTZ). The products of
// bfloat16 values are exact in float32, so each FMA rounds exactly as
// VDPBF16PS's does.

// sgemmBF16Emul computes a checked bfloat16 product with the FTZ kernel
// kern.
func sgemmBF16Emul(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	k2 := (k + 1) &^ 1
	bufA, wa := borrowFloats(m * k2)
	defer scratch.Put(bufA)
	bufB, wb := borrowFloats(k2 * n)
	defer scratch.Put(bufB)
	widenA(wa, transA, m, k, a, lda)
	widenB(wb, transB, k, n, b, ldb)
	emulPasses(kern, m, n, k, alpha, wa, wb, beta, c, ldc, parallel)
}

// emulPasses runs the passes of the product of the widened operands wa
// (m×k2) and wb (k2×n) into C.
func emulPasses(kern *gemmKernel, m, n, k int, alpha float32, wa, wb []float32, beta float32, c []float32, ldc int, parallel bool) {
	k2 := (k + 1) &^ 1
	kstep := bf16Step(k)
	for pc := 0; pc < k2; pc += kstep {
		be := beta
		if pc > 0 {
			be = 1
		}
		sgemmNative(kern, false, false, m, n, min(kstep, k2-pc), alpha, wa[pc:], k2, wb[pc*n:], n, be, c, ldc, parallel)
	}
}

// widenA sets dst (m×k2, row-major) to op(A) rounded to bfloat16, each
// pair of columns swapped, a last odd column paired with +0.
func widenA(dst []float32, transA bool, m, k int, a []float32, lda int) {
	k2 := (k + 1) &^ 1
	for i := 0; i < m; i++ {
		row := dst[i*k2 : (i+1)*k2]
		for p := 0; p < k; p++ {
			var x float32
			if transA {
				x = a[p*lda+i]
			} else {
				x = a[i*lda+p]
			}
			row[p^1] = RoundBF16(x)
		}
		if k < k2 {
			row[k-1] = 0
		}
	}
}

// widenB sets dst (k2×n, row-major) to op(B) rounded to bfloat16, each
// pair of rows swapped, a last odd row paired with a row of +0.
func widenB(dst []float32, transB bool, k, n int, b []float32, ldb int) {
	k2 := (k + 1) &^ 1
	for p := 0; p < k; p++ {
		row := dst[(p^1)*n : (p^1+1)*n]
		for j := range row {
			if transB {
				row[j] = RoundBF16(b[j*ldb+p])
			} else {
				row[j] = RoundBF16(b[p*ldb+j])
			}
		}
	}
	if k < k2 {
		clear(dst[(k-1)*n : k*n])
	}
}

// kernelGoFTZ is the portable micro-kernel of the emulation: goKernel4x4's
// sequence of operations, each with DAZ and FTZ (fmaFTZ).
var kernelGoFTZ = &gemmKernel{
	name: "go 4x4 ftz", mr: 4, nr: 4,
	rowA: func(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64) {
		goKernelFTZ(kc, a, as, 1, b, bs, c, ldc, alpha, beta, mr, mask)
	},
	colA: func(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64) {
		goKernelFTZ(kc, a, 1, as, b, bs, c, ldc, alpha, beta, mr, mask)
	},
}

// goKernelFTZ is the 4×4 tile with A(i, p) at a + i·rs + p·cs: for each
// element an fmaFTZ chain from +0 over p, then alpha·acc, then beta·C + that
// (fused) when beta ≠ 0.
func goKernelFTZ(kc int, ap *float32, rs, cs int, bp *float32, bs int, cp *float32, ldc int, alpha, beta float32, mr int, mask uint64) {
	var acc [4][4]float32
	if kc > 0 {
		a := unsafe.Slice(ap, 3*rs+(kc-1)*cs+1)
		b := unsafe.Slice(bp, (kc-1)*bs+4)
		for p := 0; p < kc; p++ {
			for i := range 4 {
				for j := range 4 {
					acc[i][j] = fmaFTZ(a[i*rs+p*cs], b[p*bs+j], acc[i][j])
				}
			}
		}
	}
	c := unsafe.Slice(cp, (mr-1)*ldc+4)
	negZero := float32(math.Copysign(0, -1))
	for i := 0; i < mr; i++ {
		for j := range 4 {
			if mask&(1<<j) == 0 {
				continue
			}
			v := fmaFTZ(alpha, acc[i][j], negZero)
			if beta != 0 {
				v = fmaFTZ(beta, c[i*ldc+j], v)
			}
			c[i*ldc+j] = v
		}
	}
}
