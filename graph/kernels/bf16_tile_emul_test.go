package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBF16TileEmulMatchesRef pins every FTZ tile this CPU has, running the
// product in AMX's order (sgemmBF16TileEmul), to its definition
// (sgemmBF16TileRef), bit for bit, on 1 and several cores, for every
// transpose, alpha and beta, tails and special values; the operands are
// followed by NaNs, so a read past an end fails it.
func TestBF16TileEmulMatchesRef(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cases := append([]struct{ m, n, k int }{{32, 32, 32}, {33, 31, 65}}, bf16Cases...)
	for _, kern := range allEmulKernels() {
		for _, tc := range cases {
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				for _, ab := range [][2]float32{{1, 0}, {1.25, -0.75}} {
					for _, special := range []bool{false, true} {
						name := fmt.Sprintf("%s/%dx%dx%d/tA=%v,tB=%v/alpha=%v,beta=%v/special=%v", kern.name, tc.m, tc.n, tc.k, tr[0], tr[1], ab[0], ab[1], special)
						a := nanGuard(bf16Values(r, tc.m*tc.k, special))
						b := nanGuard(bf16Values(r, tc.k*tc.n, special))
						c0 := bf16Values(r, tc.m*tc.n, special)
						lda, ldb := tc.k, tc.n
						if tr[0] {
							lda = tc.m
						}
						if tr[1] {
							ldb = tc.k
						}
						want := append([]float32(nil), c0...)
						sgemmBF16TileRef(tr[0], tr[1], tc.m, tc.n, tc.k, ab[0], a, lda, b, ldb, ab[1], want, tc.n)
						for _, par := range []bool{false, true} {
							got := append([]float32(nil), c0...)
							sgemmBF16TileEmul(kern, tr[0], tr[1], tc.m, tc.n, tc.k, ab[0], a, lda, b, ldb, ab[1], got, tc.n, par)
							for i := range got {
								if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
									t.Fatalf("%s/parallel=%v: C[%d] = %g (%#08x), the definition gives %g (%#08x)", name, par, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
								}
							}
						}
					}
				}
			}
		}
	}
}

// nanGuard returns x in a slice whose capacity runs on with NaNs, so that
// a kernel reading past the operand's end spoils the result instead of
// reading harmless memory.
func nanGuard(x []float32) []float32 {
	g := make([]float32, len(x)+256)
	copy(g, x)
	for i := len(x); i < len(g); i++ {
		g[i] = float32(math.NaN())
	}
	return g[:len(x)]
}

// BenchmarkBF16TileEmul times ViT-S/16's products (batch 32, 6304 tokens)
// in AMX's order on the FTZ tile (sgemmBF16TileEmul) beside today's
// emulation (sgemmBF16Emul, VDPBF16PS's order) and float32, on all cores.
func BenchmarkBF16TileEmul(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range s16GemmShapes {
		if s.m < 1000 && s.k < 1000 {
			continue
		}
		a, bb, c, lda, ldb := s.operands(r)
		run := func(name string, f func()) {
			b.Run(s.name+"/"+name, func(b *testing.B) {
				for b.Loop() {
					f()
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		run("fp32", func() { Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n) })
		run("emul", func() { sgemmBF16Emul(emulKernel(), s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n, true) })
		run("tile_emul", func() {
			sgemmBF16TileEmul(emulKernel(), s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n, true)
		})
	}
}
