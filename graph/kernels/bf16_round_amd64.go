//go:build amd64 && !purego

package kernels

//go:noescape
func roundBF16AVX512(dst, src *float32, rows, n, ldd, lds int, swap bool)

// roundRows sets, for each of rows rows r, dst[r·ldd + i] =
// RoundBF16(src[r·lds + i]) for i < n, or dst[r·ldd + i^1] when swap (an
// element past a row of odd n read as +0), with AVX-512 where the CPU has
// it.
func roundRows(dst, src []float32, rows, n, ldd, lds int, swap bool) {
	if rows == 0 || n == 0 {
		return
	}
	if !hasAVX512 {
		roundRowsGo(dst, src, rows, n, ldd, lds, swap)
		return
	}
	_ = src[(rows-1)*lds+n-1]
	if swap && n%2 == 1 {
		_ = dst[(rows-1)*ldd+n]
		for r := 0; r < rows; r++ {
			dst[r*ldd+n] = RoundBF16(src[r*lds+n-1])
			dst[r*ldd+n-1] = 0
		}
		n--
		if n == 0 {
			return
		}
	}
	_ = dst[(rows-1)*ldd+n-1]
	roundBF16AVX512(&dst[0], &src[0], rows, n, ldd, lds, swap)
}

//go:noescape
func widenBF16AVX512(dst *float32, src *uint16, n int)

// widenBF16 sets dst[i] = FromBF16(src[i]), with AVX-512 where the CPU
// has it.
func widenBF16(dst []float32, src []uint16) {
	if len(src) == 0 {
		return
	}
	if !hasAVX512 {
		widenBF16Go(dst, src)
		return
	}
	_ = dst[len(src)-1]
	widenBF16AVX512(&dst[0], &src[0], len(src))
}
