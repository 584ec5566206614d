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

// emulOperands are a product's widened operands, laid out for the FTZ
// kernel's rowA (A not transposed: mpad×k2, row stride k2) or colA (A
// transposed: k2×mpad) entry and for its B panels (⌈n/NR⌉ panels of k2×NR).
// Rows of A past m and columns of B past n are zero.
type emulOperands struct {
	a      []float32
	transA bool
	as     int // A's stride: k2 (rowA) or mpad (colA)
	b      []float32
	k2     int
}

// sgemmBF16Emul computes a checked bfloat16 product with the FTZ kernel
// kern.
func sgemmBF16Emul(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	MR, NR := kern.mr, kern.nr
	k2 := (k + 1) &^ 1
	mpad := (m + MR - 1) / MR * MR
	npad := (n + NR - 1) / NR * NR
	par := parallel && m*n*k >= parallelMinWork
	bufA, wa := borrowFloats(mpad * k2)
	defer scratch.Put(bufA)
	bufB, wb := borrowFloats(npad * k2)
	defer scratch.Put(bufB)
	op := emulOperands{a: wa, transA: transA, b: wb, k2: k2}
	widenA(&op, m, mpad, k, a, lda, par)
	widenPanels(wb, transB, k, n, NR, b, ldb, par)
	runEmul(kern, &op, m, n, k, alpha, beta, c, ldc, par)
}

// widenA lays op(A) out widened in op: A not transposed as mpad rows of k2,
// transposed as k2 rows of mpad.
func widenA(op *emulOperands, m, mpad, k int, a []float32, lda int, parallel bool) {
	k2 := op.k2
	if !op.transA {
		op.as = k2
		widen(op.a, k2, a, lda, m, k, true, parallel)
		clear(op.a[m*k2 : mpad*k2])
		return
	}
	op.as = mpad
	widen(op.a, mpad, a, lda, m, k, false, parallel)
	if mpad > m {
		for p := 0; p < k2; p++ {
			clear(op.a[p*mpad+m : (p+1)*mpad])
		}
	}
}

// widenPanels lays op(B) out widened in NR-column panels of k2 rows, panel
// r at dst[r·k2·NR:], columns past n zero.
func widenPanels(dst []float32, transB bool, k, n, NR int, b []float32, ldb int, parallel bool) {
	k2 := (k + 1) &^ 1
	np := (n + NR - 1) / NR
	if transB {
		// Widen Bᵀ's rows (n×k2), then transpose each panel's rows.
		buf, t := borrowFloats(n * k2)
		defer scratch.Put(buf)
		widen(t, k2, b, ldb, n, k, true, parallel)
		run := func(lo, hi int) {
			for r := lo; r < hi; r++ {
				j0 := r * NR
				packTransposed(dst[r*k2*NR:(r+1)*k2*NR], t, k2, j0, min(NR, n-j0), 0, k2, NR)
			}
		}
		if parallel {
			parallelFor(np, 1, 1, run)
		} else {
			run(0, np)
		}
		return
	}
	run := func(lo, hi int) {
		for r := lo; r < hi; r++ {
			j0 := r * NR
			w := min(NR, n-j0)
			panel := dst[r*k2*NR : (r+1)*k2*NR]
			if w < NR {
				clear(panel)
			}
			widen(panel, NR, b[j0:], ldb, w, k, false, false)
		}
	}
	if parallel {
		parallelFor(np, 1, 1, run)
	} else {
		run(0, np)
	}
}

// runEmul runs the passes of C = alpha·op(A)·op(B) + beta·C over the
// widened operands, split over the cores when parallel (splitTiles).
func runEmul(kern *gemmKernel, op *emulOperands, m, n, k int, alpha, beta float32, c []float32, ldc int, parallel bool) {
	splitTiles((m+kern.mr-1)/kern.mr, (n+kern.nr-1)/kern.nr, parallel, func(r0, r1, p0, p1 int) {
		emulTiles(kern, op, m, n, k, r0, r1, p0, p1, alpha, beta, c, ldc)
	})
}

// emulTiles computes the row tiles [r0, r1) × column panels [p0, p1) of C,
// pass by pass, in row blocks that keep a block of A in L2.
func emulTiles(kern *gemmKernel, op *emulOperands, m, n, k, r0, r1, p0, p1 int, alpha, beta float32, c []float32, ldc int) {
	MR, NR := kern.mr, kern.nr
	kstep := bf16Step(k)
	rowBlock := max(kern.mcRows()/MR, 1)
	for pc := 0; pc < op.k2; pc += kstep {
		kc := min(kstep, op.k2-pc)
		be := beta
		if pc > 0 {
			be = 1
		}
		for rb := r0; rb < r1; rb += rowBlock {
			for jp := p0; jp < p1; jp++ {
				j := jp * NR
				mask := uint64(1)<<uint(min(NR, n-j)) - 1
				bp := &op.b[jp*op.k2*NR+pc*NR]
				for it := rb; it < min(rb+rowBlock, r1); it++ {
					i := it * MR
					if op.transA {
						kern.colA(kc, &op.a[pc*op.as+i], op.as, bp, NR, &c[i*ldc+j], ldc, alpha, be, min(MR, m-i), mask)
					} else {
						kern.rowA(kc, &op.a[i*op.as+pc], op.as, bp, NR, &c[i*ldc+j], ldc, alpha, be, min(MR, m-i), mask)
					}
				}
			}
		}
	}
}

// widen sets dst (row stride ldd) to an operand rounded to bfloat16, each
// pair of depth swapped, in the operand's own layout, with the depth k
// rounded up to even k2 (a cut pair padded with +0). The operand has x
// rows of length k along the depth (byRow: A, or a transposed B; dst is
// then x rows of k2) or k rows of length x (dst is k2 rows of x); ld is
// its row stride.
func widen(dst []float32, ldd int, src []float32, ld, x, k int, byRow bool, parallel bool) {
	k2 := (k + 1) &^ 1
	if byRow {
		run := func(lo, hi int) {
			roundRows(dst[lo*ldd:], src[lo*ld:], hi-lo, k, ldd, ld, true)
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
		roundRows(dst[(2*lo+1)*ldd:], src[2*lo*ld:], hi-lo, x, 2*ldd, 2*ld, false)
		odd := min(hi, k/2) - lo // pairs with a row 2q+1
		if odd > 0 {
			roundRows(dst[2*lo*ldd:], src[(2*lo+1)*ld:], odd, x, 2*ldd, 2*ld, false)
		}
	}
	if parallel {
		parallelFor(kp, 32, 1, run)
	} else {
		run(0, kp)
	}
	if k < k2 {
		clear(dst[(k-1)*ldd : (k-1)*ldd+x])
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
