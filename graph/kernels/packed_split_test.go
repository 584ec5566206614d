//go:build !openblas

package kernels

import (
	"runtime"
	"testing"
)

// TestPackedByRows: at one image (197 rows) on two cores the products
// whose weights are as wide as ViT's attn.proj and mlp.fc2 split by column
// panels, so that each core fetches only its share of the packed weights
// once, not all of them once per row chunk; tall products (batch 8) and
// narrow ones still split by rows, wide ones by columns.
func TestPackedByRows(t *testing.T) {
	avx2 := &gemmKernel{mr: 6, nr: 16, mc: 120}
	for _, c := range []struct {
		name          string
		m, n, workers int
		want          bool
	}{
		{"ViT-Ti fc2/proj, batch 1", 197, 192, 2, false},
		{"ViT-S fc2/proj, batch 1", 197, 384, 2, false},
		{"ViT-Ti fc1, batch 1", 197, 768, 2, false},
		{"ViT-Ti fc2, batch 8", 1576, 192, 2, true},
		{"ViT-S fc2, batch 8", 1576, 384, 2, true},
		{"ViT-Ti fc2, batch 1, 16 cores", 197, 192, 16, true}, // too few panels for the cores
		{"narrow", 197, 48, 2, true},
		{"one core", 197, 192, 1, true}, // one chunk of 197 rows: ≥ mc
	} {
		nt := (c.n + avx2.nr - 1) / avx2.nr
		if got := packedByRows(avx2, c.m, nt, c.workers); got != c.want {
			t.Errorf("%s: packedByRows(m %d, %d panels, %d cores) = %v, want %v", c.name, c.m, nt, c.workers, got, c.want)
		}
	}
}

// TestSgemmPackedSplitsAgree: a product with an epilogue gives the same
// bits, and each element gets its epilogue once, whichever way it is
// split (one core, rows, column panels).
func TestSgemmPackedSplitsAgree(t *testing.T) {
	for _, s := range []struct{ m, k, n int }{{197, 192, 192}, {197, 384, 384}, {1576, 64, 48}, {61, 700, 200}} {
		a, w := make([]float32, s.m*s.k), make([]float32, s.n*s.k)
		for i := range a {
			a[i] = float32((i*7)%13)/13 - 0.4
		}
		for i := range w {
			w[i] = float32((i*5)%11)/11 - 0.5
		}
		pb := PackB(true, s.k, s.n, w, s.k)
		var ref []float32
		for _, procs := range []int{1, 2, 3, 8} {
			prev := runtime.GOMAXPROCS(procs)
			c := make([]float32, s.m*s.n)
			seen := make([]int, s.m*s.n)
			SgemmPackedThen(s.m, a, s.k, pb, c, s.n, func(i0, i1, j0, j1 int) {
				for i := i0; i < i1; i++ {
					for j := j0; j < j1; j++ {
						seen[i*s.n+j]++
					}
				}
			})
			runtime.GOMAXPROCS(prev)
			for i, v := range seen {
				if v != 1 {
					t.Fatalf("%v at %d cores: element %d got the epilogue %d times", s, procs, i, v)
				}
			}
			if ref == nil {
				ref = c
				continue
			}
			for i := range c {
				if c[i] != ref[i] {
					t.Fatalf("%v at %d cores: c[%d] = %v, at one core %v", s, procs, i, c[i], ref[i])
				}
			}
		}
	}
}
