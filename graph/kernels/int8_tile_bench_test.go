package kernels

import "testing"

// BenchmarkInt8Tile times the int8 tile alone on operands in L1 (k = 384):
// "bytes" are multiply-adds.
func BenchmarkInt8Tile(b *testing.B) {
	const k4 = 96
	a := make([]uint8, 4*4*k4)
	w := make([]int8, 64*k4)
	var acc [64]int32
	tile := bestInt8Tile()
	b.SetBytes(64 * 4 * k4)
	for range b.N {
		tile(k4, &a[0], &a[4*k4], &a[8*k4], &a[12*k4], &w[0], &acc)
	}
}
