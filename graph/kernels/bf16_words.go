package kernels

import "fmt"

// An activation that only feeds bfloat16 products can be kept as
// bfloat16: its words (the upper halves of the float32 values rounded by
// ToBF16) take half the memory, and the products read them without
// converting again. ToBF16 of a word widened back (FromBF16) is the word
// itself for every word ToBF16 makes (it makes no subnormal, and a NaN it
// makes is already quiet), so a product of stored words has the bits of
// the same product of the float32 values: SgemmPackedThenWords is
// SgemmPackedThen, SgemmBF16Words is SgemmBF16.

// WordsBF16 sets dst[i] = ToBF16(src[i]) for i < len(src) (dst at least as
// long).
func WordsBF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("kernels.WordsBF16: dst has %d words, src %d floats", len(dst), len(src)))
	}
	if len(src) == 0 {
		return
	}
	if bf16Tiles() != nil { // AVX512_BF16's conversion (every paired backend has it)
		wordsBF16(dst, src)
		return
	}
	for i, v := range src {
		dst[i] = ToBF16(v)
	}
}

// SgemmPackedThenWords is SgemmPackedThen of a bfloat16 PackedB
// (PackBBF16) with A stored as bfloat16 words, m×k (row stride lda): the
// bits of SgemmPackedThen with A's float32 values.
func SgemmPackedThenWords(m int, a []uint16, lda int, b *PackedB, c []float32, ldc int, epi func(i0, i1, j0, j1 int)) {
	const fn = "SgemmPackedThenWords"
	if !b.bf16 {
		panic("kernels." + fn + ": b was not packed by PackBBF16")
	}
	checkPacked(fn, m, len(a), lda, b, c, ldc)
	if m == 0 {
		return
	}
	k, n := b.k, b.n
	par := m*n*k >= parallelMinWork
	if b.tiles != nil {
		amxRunPackedWords(b.tiles, m, n, k, a, lda, b.words, c, ldc, par, epi)
		return
	}
	buf, af := widenWords(a, m, k, lda)
	defer scratch.Put(buf)
	sgemmPackedBF16(m, 1, af, k, b, c, ldc, true, epi)
}

// SgemmBF16Words is SgemmBF16(transA, false, …) with B stored as bfloat16
// words, k×n (row stride ldb): a weight gradient dyᵀ·x of an activation x
// kept in bfloat16. Its bits are SgemmBF16's with B's float32 values.
func SgemmBF16Words(transA bool, m, n, k int, alpha float32, a []float32, lda int, b []uint16, ldb int, beta float32, c []float32, ldc int) {
	sgemmBF16Of("SgemmBF16Words", true, transA, false, m, n, k, alpha, BF16Operand{F: a, Ld: lda}, BF16Operand{W: b, Ld: ldb}, beta, c, ldc)
}

// WidenBF16 sets dst[i] = FromBF16(src[i]) for i < len(src) (dst at least
// as long): bfloat16 words back to the float32 values they stand for,
// exactly.
func WidenBF16(dst []float32, src []uint16) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("kernels.WidenBF16: dst has %d floats, src %d words", len(dst), len(src)))
	}
	widenBF16(dst, src)
}

// widenBF16Go is widenBF16 in Go.
func widenBF16Go(dst []float32, src []uint16) {
	for i, h := range src {
		dst[i] = FromBF16(h)
	}
}

// widenWords returns the rows×cols words of w (row stride ld) widened to
// float32 (FromBF16) in rows of cols, in a buffer of scratch to give back.
func widenWords(w []uint16, rows, cols, ld int) (*[]float32, []float32) {
	return widenRows(w, rows, cols, ld, rows*cols >= 1<<16)
}

// widenRows is widenWords, split over the cores when parallel.
func widenRows(w []uint16, rows, cols, ld int, parallel bool) (*[]float32, []float32) {
	buf, f := borrowFloats(rows * cols)
	forRange(parallel, rows, splitGrain(rows, 4, 1), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			widenBF16(f[r*cols:(r+1)*cols], w[r*ld:r*ld+cols])
		}
	})
	return buf, f
}

// BF16Operand is an operand of SgemmBF16SerialOf: float32 values F, or
// bfloat16 words W (WordsBF16's), stored row-major with row stride Ld.
// Exactly one of F and W is set.
type BF16Operand struct {
	F  []float32
	W  []uint16
	Ld int
}

// check panics, naming fn and the operand, unless it holds rows×cols with
// row stride Ld in one of F and W (neither is needed when it is empty).
func (o BF16Operand) check(fn, name string, rows, cols int) {
	if o.F != nil && o.W != nil {
		panic(fmt.Sprintf("kernels.%s: %s has both F and W", fn, name))
	}
	checkMatrix(fn, name, len(o.F)+len(o.W), rows, cols, o.Ld)
}

// SgemmBF16SerialOf is SgemmBF16Serial with each operand given as float32
// values or as bfloat16 words (A's words only when A is not transposed):
// the bits of SgemmBF16Serial on the operands' float32 values. The paired
// backends read the words as they are; the emulation widens them first.
// One (image, head) product of attention whose Q, K and V are kept as
// words runs so.
func SgemmBF16SerialOf(transA, transB bool, m, n, k int, alpha float32, a, b BF16Operand, beta float32, c []float32, ldc int) {
	sgemmBF16Of("SgemmBF16SerialOf", false, transA, transB, m, n, k, alpha, a, b, beta, c, ldc)
}

// sgemmBF16Of checks and runs a product of BF16Operands for the public
// function fn, split over the cores when parallel.
func sgemmBF16Of(fn string, parallel, transA, transB bool, m, n, k int, alpha float32, a, b BF16Operand, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernels.%s: negative dimension m=%d n=%d k=%d", fn, m, n, k))
	}
	ar, ac, br, bc := m, k, k, n
	if transA {
		ar, ac = k, m
	}
	if transB {
		br, bc = n, k
	}
	a.check(fn, "a", ar, ac)
	b.check(fn, "b", br, bc)
	if a.W != nil && transA {
		panic("kernels." + fn + ": a transposed A must be float32 values")
	}
	checkMatrix(fn, "c", len(c), m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scaleMatrix(m, n, beta, c, ldc)
		return
	}
	if pt := bf16Tiles(); pt != nil {
		sgemmBF16AMXOf(pt, transA, transB, m, n, k, alpha, a, b, beta, c, ldc, parallel)
		return
	}
	af, lda := a.F, a.Ld
	if a.W != nil {
		buf, f := widenRows(a.W, ar, ac, a.Ld, parallel && ar*ac >= 1<<16)
		defer scratch.Put(buf)
		af, lda = f, ac
	}
	bf, ldb := b.F, b.Ld
	if b.W != nil {
		buf, f := widenRows(b.W, br, bc, b.Ld, parallel && br*bc >= 1<<16)
		defer scratch.Put(buf)
		bf, ldb = f, bc
	}
	sgemmBF16Emul(emulKernel(), transA, transB, m, n, k, alpha, af, lda, bf, ldb, beta, c, ldc, parallel)
}
