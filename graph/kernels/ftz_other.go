//go:build !amd64 || purego

package kernels

// addFTZ sets dst[i] = fmaFTZ(1, dst[i], src[i]) for i < len(src).
func addFTZ(dst, src []float32) { addFTZGo(dst[:len(src)], src) }

// epilogueFTZ sets row[j] to v = alpha·acc[j], or to beta·row[j] + v
// (fused) when beta ≠ 0, with fmaFTZ's rounding.
func epilogueFTZ(row, acc []float32, alpha, beta float32) {
	epilogueFTZGo(row[:len(acc)], acc, alpha, beta)
}
