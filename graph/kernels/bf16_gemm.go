package kernels

// SgemmBF16 is Sgemm with bfloat16 products (autocast's semantics): every
// element of op(A) and op(B) is rounded to bfloat16 (ToBF16), the products
// are exact and accumulate in float32 as VDPBF16PS does (pairs of depth,
// the odd element first, round to nearest even, denormals flushed), over
// the same depth passes as Sgemm, and alpha and beta apply in float32 as
// Sgemm's epilogue does. The result's bits are the same on every CPU, with
// or without AVX512_BF16, on any number of cores (see sgemmBF16Ref for the
// exact definition). Arguments, panics and the treatment of beta == 0 are
// Sgemm's.
func SgemmBF16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmBF16Checked("SgemmBF16", transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, true)
}

// SgemmBF16Serial is SgemmBF16 on the calling goroutine (see SgemmSerial).
func SgemmBF16Serial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmBF16Checked("SgemmBF16Serial", transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, false)
}

func sgemmBF16Checked(name string, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	checkSgemm(name, transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scaleMatrix(m, n, beta, c, ldc)
		return
	}
	sgemmBF16(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parallel)
}

// sgemmBF16 runs a checked product with m, n, k > 0 and alpha ≠ 0.
func sgemmBF16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	if kern := bf16Chosen(); kern != nil {
		sgemmBF16HW(kern, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parallel)
		return
	}
	sgemmBF16Emul(emulKernel(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parallel)
}

// PackBBF16 is PackB for products with bfloat16 operands: SgemmPacked,
// SgemmPackedThen and SgemmPackedSerial with the result give SgemmBF16's
// bits (A rounded to bfloat16 as it is read).
func PackBBF16(transB bool, k, n int, b []float32, ldb int) *PackedB {
	return PackBBF16Into(nil, transB, k, n, b, ldb)
}

// PackBBF16Into is PackBBF16 reusing dst's memory when it is large enough
// (dst may be nil, or a PackedB of either precision).
func PackBBF16Into(dst *PackedB, transB bool, k, n int, b []float32, ldb int) *PackedB {
	checkPackB("PackBBF16", transB, k, n, b, ldb)
	if dst == nil {
		dst = new(PackedB)
	}
	k2 := (k + 1) &^ 1
	dst.k, dst.n = k, n
	dst.bf16 = true
	dst.rows = growFloats(dst.rows, k2*n)
	if transB {
		// widen lays a transposed B out as n×k2; the packed form is k2×n.
		bufT, t := borrowFloats(n * k2)
		widen(t, b, ldb, n, k, true, false)
		for p := 0; p < k2; p++ {
			for j := 0; j < n; j++ {
				dst.rows[p*n+j] = t[j*k2+p]
			}
		}
		scratch.Put(bufT)
	} else {
		widen(dst.rows, b, ldb, n, k, false, false)
	}
	return dst
}

// BF16 reports whether p was packed for bfloat16 products (PackBBF16).
func (p *PackedB) BF16() bool { return p.bf16 }

// sgemmPackedBF16 is the product of a bfloat16 PackedB, whose rows hold
// op(B) widened (k2×n, pairs of rows swapped, see widen): C = alpha·A·B
// (beta 0), then epi over the whole of C when it is not nil.
func sgemmPackedBF16(m int, alpha float32, a []float32, lda int, b *PackedB, c []float32, ldc int, parallel bool, epi func(i0, i1, j0, j1 int)) {
	k, n := b.k, b.n
	if hw := bf16Chosen(); hw != nil {
		MR, NR := hw.mr, hw.nr
		kp := (k + 1) / 2
		mpad := (m + MR - 1) / MR * MR
		npad := (n + NR - 1) / NR * NR
		bufA := borrowWords(mpad * kp)
		defer words.Put(bufA)
		bufB := borrowWords(npad * kp)
		defer words.Put(bufB)
		op := bf16Packed{a: *bufA, b: *bufB, kp: kp, npad: npad, rs: kp, qs: 1}
		par := parallel && m*n*k >= parallelMinWork
		convertA(op.a, false, m, mpad, k, a, lda, par)
		packPanelsBF16(op.b, false, 2*kp, n, NR, b.rows, n, true, par)
		runBF16(hw, &op, m, n, k, alpha, 0, c, ldc, par)
	} else {
		k2 := (k + 1) &^ 1
		bufA, wa := borrowFloats(m * k2)
		defer scratch.Put(bufA)
		widen(wa, a, lda, m, k, true, parallel && m*n*k >= parallelMinWork)
		emulPasses(emulKernel(), false, false, m, n, k, alpha, wa, b.rows, 0, c, ldc, parallel)
	}
	if epi != nil {
		epi(0, m, 0, n)
	}
}

func growFloats(buf []float32, n int) []float32 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]float32, n)
}
