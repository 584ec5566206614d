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
