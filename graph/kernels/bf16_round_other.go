//go:build !amd64 || purego

package kernels

// roundRow sets dst[i] = RoundBF16(src[i]), or dst[i^1] when swap (len(dst)
// even, an element past src read as +0).
func roundRow(dst, src []float32, swap bool) { roundRowGo(dst, src, swap) }
