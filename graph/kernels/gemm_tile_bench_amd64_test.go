//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkSgemmTile times the AVX2 micro-kernel alone (sgemm6x16AVX2RowA:
// one 6×16 tile of C over kc depths) on operands that stay in L1, A's rows
// lda apart as a product reads them, and reports GFLOP/s: set against
// BenchmarkPeaks' fp32 and BenchmarkSgemmPackedViT, what the tile itself
// reaches and what a whole product loses to its memory traffic.
func BenchmarkSgemmTile(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	for _, kc := range []int{64, 192, 384, 512} {
		b.Run(fmt.Sprintf("kc%d", kc), func(b *testing.B) {
			const lda = 768
			a := make([]float32, 5*lda+kc)
			for i := range a {
				a[i] = float32(i%5) / 5
			}
			bp := make([]float32, kc*16)
			for i := range bp {
				bp[i] = float32(i%7) / 7
			}
			c := make([]float32, 6*16)
			for b.Loop() {
				sgemm6x16AVX2RowA(kc, &a[0], lda, &bp[0], 16, &c[0], 16, 1, 0, 6, 0xffff)
			}
			b.ReportMetric(2*6*16*float64(kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
