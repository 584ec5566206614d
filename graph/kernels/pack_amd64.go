//go:build amd64 && !purego

package kernels

import "math"

//go:noescape
func packTransAVX512(dst *float32, ds int, src *float32, ss int, valid, width, kc int)

// packTrans sets dst[p·ds + j] = src[j·ss + p] for p < kc, j < valid and
// zero for valid ≤ j < width (width ≤ 32): the transposing pack of Bᵀ
// panels and of row-major A edge panels. It uses AVX-512 gathers when it
// can and reports whether it did.
func packTrans(dst []float32, ds int, src []float32, ss, valid, width, kc int) bool {
	if !hasAVX512 || width > 32 || kc == 0 || valid == 0 || 16*ss > math.MaxInt32 {
		return false
	}
	// The gathers read src[j·ss + p] for j < valid, p < kc; the stores
	// write dst up to (kc−1)·ds + width.
	_ = src[(valid-1)*ss+kc-1]
	_ = dst[(kc-1)*ds+width-1]
	packTransAVX512(&dst[0], ds, &src[0], ss, valid, width, kc)
	return true
}

// packAVX2 selects the AVX2 panel packs; benchmarks clear it to time the
// Go loops they replace.
var packAVX2 = hasAVX2

//go:noescape
func packPanelsAVX2(dst *float32, src *float32, ld, panels, kc, w int)

//go:noescape
func packTrans8AVX2(dst *float32, ds int, src *float32, ss int, blocks, kc8 int)

// packFullPanels packs the first panels full panels of width w (6 or 16)
// as packPanels does, src starting at the block's first element, with
// AVX2 moves; it reports whether it did.
func packFullPanels(dst, src []float32, ld, panels, kc, w int) bool {
	if !packAVX2 || (w != 6 && w != 16) || panels == 0 || kc == 0 {
		return false
	}
	_ = src[(kc-1)*ld+panels*w-1]
	_ = dst[panels*kc*w-1]
	packPanelsAVX2(&dst[0], &src[0], ld, panels, kc, w)
	return true
}

// packTransBlocks sets dst[p·ds + j] = src[j·ss + p] for the rows j <
// 8·⌊valid/8⌋ and depths p < 8·⌊kc/8⌋ with AVX2 8×8 transposes, and
// returns those two bounds (0, 0 when it did nothing): the caller packs
// the rest.
func packTransBlocks(dst []float32, ds int, src []float32, ss, valid, kc int) (rows, depth int) {
	if !packAVX2 || valid < 8 || kc < 8 {
		return 0, 0
	}
	blocks, kc8 := valid/8, kc/8
	_ = src[(blocks*8-1)*ss+kc8*8-1]
	_ = dst[(kc8*8-1)*ds+blocks*8-1]
	packTrans8AVX2(&dst[0], ds, &src[0], ss, blocks, kc8)
	return blocks * 8, kc8 * 8
}
