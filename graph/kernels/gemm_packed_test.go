package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSgemmPackedMatchesSgemm: a product with a PackedB equals Sgemm's on
// the same B, bit for bit (same kernels, same depth passes; within 1e-5·k
// under OpenBLAS, whose packing of the two differs), for B stored
// either way, with edge rows and columns, serial and split by rows or
// columns, and a depth cut into several passes.
func TestSgemmPackedMatchesSgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var reused *PackedB // PackBInto over every shape in turn, larger and smaller
	for _, s := range [][3]int{{1, 1, 1}, {7, 5, 3}, {197, 192, 192}, {197, 576, 192}, {1576, 192, 768}, {8, 1000, 192}, {13, 17, 1100}, {33, 8, 9}} {
		m, n, k := s[0], s[1], s[2]
		for _, transB := range []bool{false, true} {
			a := make([]float32, m*(k+3))
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			ldb := n + 2
			if transB {
				ldb = k + 2
			}
			b := make([]float32, k*(n+2)+(n*(k+2)))
			for i := range b {
				b[i] = float32(rng.NormFloat64())
			}
			want := make([]float32, m*n)
			Sgemm(false, transB, m, n, k, 1, a, k+3, b, ldb, 0, want, n)
			got := make([]float32, m*(n+1))
			for i := range got {
				got[i] = float32(i) // overwritten: beta is 0
			}
			p := PackB(transB, k, n, b, ldb)
			if p.K() != k || p.N() != n {
				t.Fatalf("PackB: K, N = %d, %d, want %d, %d", p.K(), p.N(), k, n)
			}
			SgemmPacked(m, a, k+3, p, got, n+1)
			same := func(what string) {
				t.Helper()
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						if g, w := got[i*(n+1)+j], want[i*n+j]; SplitInvariant && g != w || math.Abs(float64(g-w)) > 1e-5*float64(k) {
							t.Fatalf("%s %v transB %v: C[%d,%d] = %v, Sgemm %v", what, s, transB, i, j, got[i*(n+1)+j], want[i*n+j])
						}
					}
				}
			}
			same("SgemmPacked")
			// The epilogue sees every element of C once, after its sum.
			seen := make([]int, m*n)
			SgemmPackedThen(m, a, k+3, p, got, n+1, func(i0, i1, j0, j1 int) {
				for i := i0; i < i1; i++ {
					for j := j0; j < j1; j++ {
						seen[i*n+j]++
						got[i*(n+1)+j] -= want[i*n+j] // 0 if the block is finished
					}
				}
			})
			for i, v := range seen {
				if v != 1 {
					t.Fatalf("%v transB %v: epilogue saw C element %d %d times", s, transB, i, v)
				}
				if d := got[i/n*(n+1)+i%n]; SplitInvariant && d != 0 || math.Abs(float64(d)) > 1e-5*float64(k) {
					t.Fatalf("%v transB %v: epilogue ran on C element %d before its sum (off by %v)", s, transB, i, d)
				}
			}
			SgemmPacked(m, a, k+3, p, got, n+1)
			// Serial, with alpha, into a reused PackedB.
			SgemmSerial(false, transB, m, n, k, 0.125, a, k+3, b, ldb, 0, want, n)
			reused = PackBInto(reused, transB, k, n, b, ldb)
			SgemmPackedSerial(m, 0.125, a, k+3, reused, got, n+1)
			same("SgemmPackedSerial")
		}
	}
}

func TestSgemmPackedBadArguments(t *testing.T) {
	p := PackB(false, 4, 3, make([]float32, 12), 3)
	for name, f := range map[string]func(){
		"short a":   func() { SgemmPacked(2, make([]float32, 7), 4, p, make([]float32, 6), 3) },
		"short c":   func() { SgemmPacked(2, make([]float32, 8), 4, p, make([]float32, 5), 3) },
		"small lda": func() { SgemmPacked(2, make([]float32, 8), 3, p, make([]float32, 6), 3) },
		"short b":   func() { PackB(true, 4, 3, make([]float32, 11), 4) },
		"zero k":    func() { PackB(true, 0, 3, nil, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
