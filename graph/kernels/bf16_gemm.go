package kernels

// SgemmBF16 is Sgemm with bfloat16 products (autocast's semantics): every
// element of op(A) and op(B) is rounded to bfloat16 (ToBF16), the products
// are exact and accumulate in float32 in AMX's order (per block of 16
// pairs of depth, C + (e + o), e and o chains over the even and the odd
// elements; round to nearest even, denormals flushed), and alpha and beta
// apply in float32 as Sgemm's epilogue does. The result's bits are the same
// on every CPU, with or without AMX, on any number of cores (see
// sgemmBF16Ref for the exact definition). Arguments, panics and the
// treatment of beta == 0 are Sgemm's.
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
	if pt := bf16Tiles(); pt != nil {
		sgemmBF16AMX(pt, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parallel)
		return
	}
	sgemmBF16Emul(emulKernel(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parallel)
}

// SgemmBF16Then is SgemmBF16 with alpha 1 and beta 0 (C overwritten),
// followed by epi(i0, i1, j0, j1) on each block of C it finished, on the
// goroutine that computed it, while it is in cache: SgemmPackedThen's
// contract, for a product whose B is not reused (an input gradient with
// the activation's gradient fused after it).
func SgemmBF16Then(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, epi func(i0, i1, j0, j1 int)) {
	checkSgemm("SgemmBF16Then", transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleMatrix(m, n, 0, c, ldc)
		epi(0, m, 0, n)
		return
	}
	par := m*n*k >= parallelMinWork
	if pt := bf16Tiles(); pt != nil {
		sgemmBF16AMXThen(pt, transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc, true, epi)
		return
	}
	sgemmBF16Emul(emulKernel(), transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc, true)
	forRange(par, m, splitGrain(m, 4, 1), func(i0, i1 int) { epi(i0, i1, 0, n) })
}

// PackBBF16 is PackB for products with bfloat16 operands: SgemmPacked,
// SgemmPackedThen and SgemmPackedSerial with the result give SgemmBF16's
// bits (A rounded to bfloat16 as it is read).
func PackBBF16(transB bool, k, n int, b []float32, ldb int) *PackedB {
	return PackBBF16Into(nil, transB, k, n, b, ldb)
}

// PackBBF16Into is PackBBF16 reusing dst's memory when it is large enough
// (dst may be nil, or a PackedB of either precision). The panels are laid
// out for the backend the products run on (bf16Tiles).
func PackBBF16Into(dst *PackedB, transB bool, k, n int, b []float32, ldb int) *PackedB {
	checkPackB("PackBBF16", transB, k, n, b, ldb)
	if dst == nil {
		dst = new(PackedB)
	}
	dst.k, dst.n, dst.bf16 = k, n, true
	dst.tiles = bf16Tiles()
	if dst.tiles != nil { // paired panels in words (amxPackB)
		dst.kern = nil
		dst.words = amxPackB(dst.tiles, dst.words, transB, k, n, b, ldb)
		return dst
	}
	kern := emulKernel()
	kw := (k + tileBlock - 1) / tileBlock * tileBlock
	dst.kern = kern
	dst.npad = (n + kern.nr - 1) / kern.nr * kern.nr
	dst.panels = growFloats(dst.panels, dst.npad*kw)
	packTileEmul(dst.panels, transB, n, k, kw, kern.nr, b, ldb, n*k >= 1<<16)
	return dst
}

// BF16 reports whether p was packed for bfloat16 products (PackBBF16).
func (p *PackedB) BF16() bool { return p.bf16 }

// sgemmPackedBF16 is the product of a bfloat16 PackedB: C = alpha·A·B
// (beta 0), then epi over the whole of C when it is not nil.
func sgemmPackedBF16(m int, alpha float32, a []float32, lda int, b *PackedB, c []float32, ldc int, parallel bool, epi func(i0, i1, j0, j1 int)) {
	k, n := b.k, b.n
	par := parallel && m*n*k >= parallelMinWork
	if b.tiles != nil {
		amxRunPacked(b.tiles, m, n, k, alpha, a, lda, b.words, c, ldc, par, epi)
		return
	}
	runTileEmul(b.kern, false, m, n, k, alpha, a, lda, b.panels, 0, c, ldc, par)
	if epi == nil {
		return
	}
	forRange(par, m, splitGrain(m, 4, 1), func(i0, i1 int) { epi(i0, i1, 0, n) })
}

func growWords(buf []uint32, n int) []uint32 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]uint32, n)
}

func growFloats(buf []float32, n int) []float32 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]float32, n)
}
