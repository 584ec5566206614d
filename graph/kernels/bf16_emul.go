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
	par := parallel && m*n*k >= parallelMinWork
	widen(wa, a, lda, m, k, !transA, par)
	widen(wb, b, ldb, n, k, transB, par)
	emulPasses(kern, transA, transB, m, n, k, alpha, wa, wb, beta, c, ldc, parallel)
}

// emulPasses runs the passes of the product of the widened operands wa
// and wb (see widen) into C.
func emulPasses(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, wa, wb []float32, beta float32, c []float32, ldc int, parallel bool) {
	k2 := (k + 1) &^ 1
	kstep := bf16Step(k)
	lda, ldb := k2, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k2
	}
	for pc := 0; pc < k2; pc += kstep {
		be := beta
		if pc > 0 {
			be = 1
		}
		ao, bo := pc, pc*n
		if transA {
			ao = pc * m
		}
		if transB {
			bo = pc
		}
		sgemmNative(kern, transA, transB, m, n, min(kstep, k2-pc), alpha, wa[ao:], lda, wb[bo:], ldb, be, c, ldc, parallel)
	}
}

// widen sets dst to an operand rounded to bfloat16, each pair of depth
// swapped, in the operand's own layout, with the depth k rounded up to even
// k2 (a cut pair padded with +0). The operand has x rows of length k along
// the depth (byRow: A, or a transposed B; dst is then x×k2) or k rows of
// length x (dst is k2×x); ld is its row stride.
func widen(dst, src []float32, ld, x, k int, byRow bool, parallel bool) {
	k2 := (k + 1) &^ 1
	if byRow {
		run := func(lo, hi int) {
			roundRows(dst[lo*k2:], src[lo*ld:], hi-lo, k, k2, ld, true)
		}
		if parallel {
			parallelFor(x, 64, 1, run)
		} else {
			run(0, x)
		}
		return
	}
	// Rows 2q go to 2q+1 and rows 2q+1 to 2q: two strided passes per
	// range of pairs.
	kp := (k + 1) / 2
	run := func(lo, hi int) {
		roundRows(dst[(2*lo+1)*x:], src[2*lo*ld:], hi-lo, x, 2*x, 2*ld, false)
		odd := min(hi, k/2) - lo // pairs with a row 2q+1
		if odd > 0 {
			roundRows(dst[2*lo*x:], src[(2*lo+1)*ld:], odd, x, 2*x, 2*ld, false)
		}
	}
	if parallel {
		parallelFor(kp, 32, 1, run)
	} else {
		run(0, kp)
	}
	if k < k2 {
		clear(dst[(k-1)*x : k*x])
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

// roundRowsGo is roundRows in Go.
func roundRowsGo(dst, src []float32, rows, n, ldd, lds int, swap bool) {
	for r := 0; r < rows; r++ {
		d, x := dst[r*ldd:], src[r*lds:r*lds+n]
		if !swap {
			for i, v := range x {
				d[i] = RoundBF16(v)
			}
			continue
		}
		for i, v := range x {
			d[i^1] = RoundBF16(v)
		}
		if n%2 == 1 {
			d[n-1] = 0
		}
	}
}
