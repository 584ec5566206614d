package kernels

import "math"

// addFTZGo is addFTZ in Go.
func addFTZGo(dst, src []float32) {
	for i, x := range src {
		dst[i] = fmaFTZ(1, dst[i], x)
	}
}

// epilogueFTZGo is epilogueFTZ in Go: v = alpha·acc[j] as fmaFTZ(alpha,
// acc[j], −0), then fmaFTZ(beta, row[j], v) when beta ≠ 0.
func epilogueFTZGo(row, acc []float32, alpha, beta float32) {
	negZero := float32(math.Copysign(0, -1))
	for j, x := range acc {
		v := fmaFTZ(alpha, x, negZero)
		if beta != 0 {
			v = fmaFTZ(beta, row[j], v)
		}
		row[j] = v
	}
}
