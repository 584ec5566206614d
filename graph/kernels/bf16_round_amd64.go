//go:build amd64 && !purego

package kernels

//go:noescape
func roundBF16AVX512(dst, src *float32, n int, swap bool)

// roundRow sets dst[i] = RoundBF16(src[i]), or dst[i^1] when swap (len(dst)
// even, an element past src read as +0), with AVX-512 where the CPU has it.
func roundRow(dst, src []float32, swap bool) {
	if hasAVX512 && len(src) > 0 {
		n := len(src)
		if swap && n%2 == 1 {
			dst[n] = RoundBF16(src[n-1])
			dst[n-1] = 0
			n--
			if n == 0 {
				return
			}
		}
		_ = dst[n-1]
		roundBF16AVX512(&dst[0], &src[0], n, swap)
		return
	}
	roundRowGo(dst, src, swap)
}
