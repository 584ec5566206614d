//go:build amd64 && !purego

package kernels

//go:noescape
func addFTZAVX512(dst, src *float32, n int)

//go:noescape
func addFTZAVX2(dst, src *float32, n int)

//go:noescape
func epilogueFTZAVX512(c *float32, ldc int, acc *float32, lacc int, rows, n int, alpha, beta float32)

//go:noescape
func epilogueFTZAVX2(row, acc *float32, n int, alpha, beta float32)

// addFTZ sets dst[i] = fmaFTZ(1, dst[i], src[i]) for i < len(src): a sum
// under DAZ and FTZ, with AVX-512 or AVX2 where the CPU has them.
func addFTZ(dst, src []float32) {
	n := len(src)
	if n == 0 {
		return
	}
	_ = dst[n-1]
	done := 0
	switch {
	case hasAVX512:
		done = n &^ 15
		if done > 0 {
			addFTZAVX512(&dst[0], &src[0], done)
		}
	case hasAVX2:
		done = n &^ 7
		if done > 0 {
			addFTZAVX2(&dst[0], &src[0], done)
		}
	}
	addFTZGo(dst[done:n], src[done:])
}

// epilogueFTZ sets row[j] to v = alpha·acc[j], or to beta·row[j] + v
// (fused) when beta ≠ 0, with fmaFTZ's rounding, with AVX-512 or AVX2
// where the CPU has them.
func epilogueFTZ(row, acc []float32, alpha, beta float32) {
	n := len(acc)
	if n == 0 {
		return
	}
	_ = row[n-1]
	switch {
	case hasAVX512:
		epilogueFTZAVX512(&row[0], 0, &acc[0], 0, 1, n, alpha, beta)
		return
	case hasAVX2:
		if done := n &^ 7; done > 0 {
			epilogueFTZAVX2(&row[0], &acc[0], done, alpha, beta)
			epilogueFTZGo(row[done:n], acc[done:], alpha, beta)
			return
		}
	}
	epilogueFTZGo(row[:n], acc, alpha, beta)
}
