package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkSgemmPackedViT times the products of ViT-Ti/16 and ViT-S/16 at
// one 224×224 image (197 token rows) on weights packed once, as the Frozen
// serving graph runs them (graph.LinearPacked). Run with -cpu 1,2 to see
// what the split over the cores gains.
func BenchmarkSgemmPackedViT(b *testing.B) {
	for _, s := range []struct{ m, k, n int }{
		{197, 192, 576}, {197, 192, 192}, {197, 192, 768}, {197, 768, 192},
		{197, 384, 1152}, {197, 384, 384}, {197, 384, 1536}, {197, 1536, 384},
	} {
		b.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(b *testing.B) {
			w := make([]float32, s.k*s.n)
			for i := range w {
				w[i] = float32(i%7) / 7
			}
			pb := PackB(true, s.k, s.n, w, s.k)
			a := make([]float32, s.m*s.k)
			for i := range a {
				a[i] = float32(i%5) / 5
			}
			c := make([]float32, s.m*s.n)
			b.SetBytes(int64(2 * s.m * s.k * s.n)) // FLOPs, read as MB/s = MFLOP/s
			b.ResetTimer()
			for range b.N {
				SgemmPacked(s.m, a, s.k, pb, c, s.n)
			}
		})
	}
}
