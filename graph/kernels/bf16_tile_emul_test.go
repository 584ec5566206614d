package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBF16EmulatedEqualsReference pins every FTZ tile this CPU has, running the
// product in AMX's order (sgemmBF16Emul), to its definition
// (sgemmBF16Ref), bit for bit, on 1 and several cores, for every
// transpose, alpha and beta, tails and special values; the operands are
// followed by NaNs, so a read past an end fails it.
func TestBF16EmulatedEqualsReference(t *testing.T) {
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
						sgemmBF16Ref(tr[0], tr[1], tc.m, tc.n, tc.k, ab[0], a, lda, b, ldb, ab[1], want, tc.n)
						for _, par := range []bool{false, true} {
							got := append([]float32(nil), c0...)
							sgemmBF16Emul(kern, tr[0], tr[1], tc.m, tc.n, tc.k, ab[0], a, lda, b, ldb, ab[1], got, tc.n, par)
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
