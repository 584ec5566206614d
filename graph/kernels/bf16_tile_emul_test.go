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
						rc := newRefCase(r, tc.m, tc.n, tc.k, tr, ab, special)
						rc.check(t, kern.name+"/"+rc.name, func(c []float32, par bool) {
							sgemmBF16Emul(kern, tr[0], tr[1], tc.m, tc.n, tc.k, ab[0], rc.a, rc.lda, rc.b, rc.ldb, ab[1], c, tc.n, par)
						})
					}
				}
			}
		}
	}
}

// refCase is one product of the bfloat16 reference tests: op(A)·op(B)
// with alpha and beta on bfloat16-representative operands (NaN-guarded),
// C's values before it, and what the definition (sgemmBF16Ref) gives.
type refCase struct {
	name           string
	a, b, c0, want []float32
	lda, ldb       int
}

// newRefCase draws a refCase: tr is (transA, transB), ab is (alpha, beta).
func newRefCase(r *rand.Rand, m, n, k int, tr [2]bool, ab [2]float32, special bool) refCase {
	rc := refCase{
		name: fmt.Sprintf("%dx%dx%d/tA=%v,tB=%v/alpha=%v,beta=%v/special=%v", m, n, k, tr[0], tr[1], ab[0], ab[1], special),
		a:    nanGuard(bf16Values(r, m*k, special)),
		b:    nanGuard(bf16Values(r, k*n, special)),
		c0:   bf16Values(r, m*n, special),
		lda:  k, ldb: n,
	}
	if tr[0] {
		rc.lda = m
	}
	if tr[1] {
		rc.ldb = k
	}
	rc.want = append([]float32(nil), rc.c0...)
	sgemmBF16Ref(tr[0], tr[1], m, n, k, ab[0], rc.a, rc.lda, rc.b, rc.ldb, ab[1], rc.want, n)
	return rc
}

// check runs the product on a copy of c0 (row stride n), on one core and
// on several, and fails at the first bit that differs from the definition.
func (rc refCase) check(t *testing.T, name string, run func(c []float32, parallel bool)) {
	t.Helper()
	for _, par := range []bool{false, true} {
		got := append([]float32(nil), rc.c0...)
		run(got, par)
		if i := firstDiff(got, rc.want); i >= 0 {
			t.Fatalf("%s/parallel=%v: C[%d] = %g (%#08x), the definition gives %g (%#08x)", name, par, i, got[i], math.Float32bits(got[i]), rc.want[i], math.Float32bits(rc.want[i]))
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
