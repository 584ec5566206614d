//go:build !amd64 || purego

package kernels

// roundRows sets, for each of rows rows r, dst[r·ldd + i] =
// RoundBF16(src[r·lds + i]) for i < n, or dst[r·ldd + i^1] when swap (an
// element past a row of odd n read as +0).
func roundRows(dst, src []float32, rows, n, ldd, lds int, swap bool) {
	roundRowsGo(dst, src, rows, n, ldd, lds, swap)
}

// widenBF16 sets dst[i] = FromBF16(src[i]).
func widenBF16(dst []float32, src []uint16) { widenBF16Go(dst, src) }
