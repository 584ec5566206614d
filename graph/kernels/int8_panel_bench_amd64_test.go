//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkInt8Panel times the AVX2 panel kernel alone (int8PanelRaw4x16AVX2:
// the tile's sums and the epilogue) over 64 rows and the 16-column panels
// of one product, operands laid out as Int8LinearThen lays them out, and
// reports G operations a second (2 a multiply-add): set against
// BenchmarkPeaks' int8, how close the kernel runs to its sequence's ceiling.
func BenchmarkInt8Panel(b *testing.B) {
	for _, s := range [][2]int{{384, 1536}, {1536, 384}} {
		k, n := s[0], s[1]
		b.Run(fmt.Sprintf("k%d_n%d", k, n), func(b *testing.B) {
			const rows = 64
			qx := make([]uint8, rows*k)
			for i := range qx {
				qx[i] = uint8(i * 7)
			}
			w := make([]float32, n*k)
			for i := range w {
				w[i] = float32(i%13) - 6
			}
			p := QuantizeInt8(w, n, k, k)
			sx, zx := make([]float32, rows), make([]int32, rows)
			y := make([]float32, rows*n)
			for b.Loop() {
				for c0 := 0; c0 < n; c0 += int8Panel {
					int8PanelRaw4x16AVX2(k/int8Group, rows/4, &qx[0], k, &p.data[c0*k], &p.colSum[c0], &p.Scale[c0], nil, &sx[0], &zx[0], &y[c0], n)
				}
			}
			b.ReportMetric(2*float64(rows*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gop/s")
		})
	}
}
