package kernels

import "fmt"

// PackedB is a constant right-hand matrix B (k×n) laid out once for many
// products C = A·B: a Linear layer's weights at inference. Sgemm lays out
// op(B) again on every call, and once per goroutine when it splits a tall
// product by rows; a product with a PackedB reads panels made once, in the
// order the micro-kernel reads them (contiguous, so no cache-set aliasing
// from B's row stride). The OpenBLAS build keeps a plain row-major copy.
type PackedB struct {
	k, n   int
	kern   *gemmKernel // native: the kernel the panels are laid out for
	kstep  int         // native: depth of one pass
	npad   int         // native: n rounded up to the kernel's NR
	panels []float32   // native: per pass, per NR-column panel, kc×NR floats
	rows   []float32   // OpenBLAS: B row-major, k×n
	bf16   bool        // packed by PackBBF16: products take bfloat16 operands
	words  []uint32    // bfloat16 pairs in paired panels (tiles)
	tiles  *pairTiles  // bfloat16 on paired tiles (bf16Tiles): words holds amxPackB's panels; nil: panels holds packTileEmul's
}

// PackB lays out op(B) for SgemmPacked: B is stored k×n (row stride ldb),
// or n×k when transB (a weight stored [out, in]). The result does not
// share memory with b.
func PackB(transB bool, k, n int, b []float32, ldb int) *PackedB {
	return PackBInto(nil, transB, k, n, b, ldb)
}

// PackBInto is PackB reusing dst's memory when it is large enough (dst may
// be nil): for a B that changes between products but is read by many of
// them (attention's K and V, packed once per image and head).
func PackBInto(dst *PackedB, transB bool, k, n int, b []float32, ldb int) *PackedB {
	checkPackB("PackB", transB, k, n, b, ldb)
	if dst == nil {
		dst = new(PackedB)
	}
	dst.bf16, dst.tiles = false, nil
	packB(dst, transB, k, n, b, ldb)
	return dst
}

// checkPackB panics, naming fn, unless b holds op(B), k×n.
func checkPackB(fn string, transB bool, k, n int, b []float32, ldb int) {
	if k <= 0 || n <= 0 {
		panic(fmt.Sprintf("kernels.%s: dimensions k=%d n=%d must be positive", fn, k, n))
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkLd(fn, "ldb", ldb, bc)
	checkLen(fn, "b", len(b), br, bc, ldb)
}

// K and N are the dimensions of op(B).
func (p *PackedB) K() int { return p.k }

// N is the number of columns of op(B).
func (p *PackedB) N() int { return p.n }

// RowTile is the rows of A that the micro-kernel reading p multiplies at
// once (its MR): a product of m rows costs ⌈m/RowTile⌉ tiles per panel, so
// callers that cut rows into blocks of their own (attention's query rows)
// cut them at multiples of it. It is 1 where no such tile is known (the
// OpenBLAS build).
func (p *PackedB) RowTile() int {
	if p.kern == nil {
		return 1
	}
	return p.kern.mr
}

// SgemmPacked computes C = A·B for A m×k (row stride lda) and the packed B,
// into C m×n (row stride ldc), overwriting C; large products are split over
// GOMAXPROCS goroutines as Sgemm's are, and the sums are Sgemm's.
func SgemmPacked(m int, a []float32, lda int, b *PackedB, c []float32, ldc int) {
	sgemmPackedChecked("SgemmPacked", m, a, lda, b, c, ldc, nil)
}

// SgemmPackedThen is SgemmPacked followed by epi(i0, i1, j0, j1) on each
// block of C it finished, rows [i0, i1) × columns [j0, j1), on the
// goroutine that computed the block and while it is still in cache: a
// fused epilogue (bias, activation, residual) instead of further passes
// over C. The blocks cover C once; epi must touch only its block.
func SgemmPackedThen(m int, a []float32, lda int, b *PackedB, c []float32, ldc int, epi func(i0, i1, j0, j1 int)) {
	sgemmPackedChecked("SgemmPackedThen", m, a, lda, b, c, ldc, epi)
}

// sgemmPackedChecked checks the operands of fn (panicking with its name, as
// Sgemm does) and runs the product.
func sgemmPackedChecked(fn string, m int, a []float32, lda int, b *PackedB, c []float32, ldc int, epi func(i0, i1, j0, j1 int)) {
	checkPacked(fn, m, len(a), lda, b, c, ldc)
	if m == 0 {
		return
	}
	if b.bf16 {
		sgemmPackedBF16(m, 1, a, lda, b, c, ldc, true, epi)
		return
	}
	sgemmPacked(m, a, lda, b, c, ldc, epi)
}

// checkPacked panics, naming fn, unless A (alen elements, row stride lda)
// holds m×k and C m×n for the packed B (k×n).
func checkPacked(fn string, m, alen, lda int, b *PackedB, c []float32, ldc int) {
	if m < 0 {
		panic(fmt.Sprintf("kernels.%s: negative m=%d", fn, m))
	}
	checkLd(fn, "lda", lda, b.k)
	checkLd(fn, "ldc", ldc, b.n)
	checkLen(fn, "a", alen, m, b.k, lda)
	checkLen(fn, "c", len(c), m, b.n, ldc)
}

// SgemmPackedSerial computes C = alpha·A·B as SgemmPacked does, on the
// calling goroutine however large the product (for callers that spread
// independent products over the cores themselves).
func SgemmPackedSerial(m int, alpha float32, a []float32, lda int, b *PackedB, c []float32, ldc int) {
	checkPacked("SgemmPackedSerial", m, len(a), lda, b, c, ldc)
	if m == 0 {
		return
	}
	if alpha == 0 {
		scaleMatrix(m, b.n, 0, c, ldc)
		return
	}
	if b.bf16 {
		sgemmPackedBF16(m, alpha, a, lda, b, c, ldc, false, nil)
		return
	}
	sgemmPackedSerial(m, alpha, a, lda, b, c, ldc)
}
