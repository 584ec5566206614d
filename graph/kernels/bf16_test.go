package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// bf16Cases are product shapes: tails of every tile (14×32, 6×16, 4×4),
// odd depths (a padded pair), several passes (k > 512, odd pass lengths).
var bf16Cases = []struct{ m, n, k int }{
	{1, 1, 1}, {3, 5, 2}, {13, 31, 7}, {14, 32, 16}, {15, 33, 17}, {29, 65, 63},
	{6, 16, 600}, {7, 17, 601}, {40, 50, 1025}, {64, 96, 1200}, {197, 64, 64},
}

// bf16Operands fills a slice with values of every scale the products meet,
// with some specials: subnormals, signed zeros, and values near bfloat16
// rounding ties.
func bf16Operands(r *rand.Rand, n int, special bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if special {
			switch r.IntN(16) {
			case 0:
				x[i] = math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal or ±0
			case 1:
				x[i] = math.Float32frombits(math.Float32bits(x[i])&0xffff0000 | 0x8000) // tie
			case 2:
				x[i] *= 0x1p-63 // products near the smallest normal
			}
		}
	}
	return x
}

// TestBF16EmulatedEqualsReference pins every emulating micro-kernel this
// CPU has, on 1 and several cores, to the definition, bit for bit, for
// every transpose and beta.
func TestBF16EmulatedEqualsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, kern := range allEmulKernels() {
		for _, tc := range bf16Cases {
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				for _, beta := range []float32{0, 1, -0.75} {
					for _, special := range []bool{false, true} {
						name := fmt.Sprintf("%s/%dx%dx%d/tA=%v,tB=%v/beta=%v/special=%v", kern.name, tc.m, tc.n, tc.k, tr[0], tr[1], beta, special)
						a := bf16Operands(r, tc.m*tc.k, special)
						b := bf16Operands(r, tc.k*tc.n, special)
						c0 := bf16Operands(r, tc.m*tc.n, special)
						lda, ldb := tc.k, tc.n
						if tr[0] {
							lda = tc.m
						}
						if tr[1] {
							ldb = tc.k
						}
						want := append([]float32(nil), c0...)
						sgemmBF16Ref(tr[0], tr[1], tc.m, tc.n, tc.k, 1.25, a, lda, b, ldb, beta, want, tc.n)
						for _, par := range []bool{false, true} {
							got := append([]float32(nil), c0...)
							sgemmBF16Emul(kern, tr[0], tr[1], tc.m, tc.n, tc.k, 1.25, a, lda, b, ldb, beta, got, tc.n, par)
							if i := firstDiff(got, want); i >= 0 {
								t.Fatalf("%s parallel=%v: C[%d] = %g (%#x), want %g (%#x)", name, par, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
							}
						}
					}
				}
			}
		}
	}
}

// TestBF16Underflow pins the denormal handling of the bfloat16 products
// with sums built to land at the smallest normal float32, 2^-126: every
// kernel flushes a result that is tiny after rounding (below 2^-126 when
// rounded to 24 bits with an unbounded exponent) and reads a subnormal C
// as zero, as VDPBF16PS and MXCSR's FTZ and DAZ do. The 1×1 product of
// depth 2 is acc = a1·b1, then acc + a0·b0, then alpha·acc + beta·C.
func TestBF16Underflow(t *testing.T) {
	p := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	for _, tc := range []struct {
		name           string
		a0, b0, a1, b1 float32
		alpha, beta, c float32
		want           float32
	}{
		{"exact 2^-126", p(-63), p(-63), 0, 0, 1, 0, 0, p(-126)},
		{"subnormal product", p(-63), p(-64), 0, 0, 1, 0, 0, 0},
		{"negative subnormal", -p(-63), p(-64), 0, 0, 1, 0, 0, float32(math.Copysign(0, -1))},
		// 2^-126 − 2^-151: a tie on the 24-bit grid, rounds up to 2^-126.
		{"tie rounds to 2^-126", -p(-75), p(-76), p(-63), p(-63), 1, 0, 0, p(-126)},
		// 2^-126 − 2^-150: on the 24-bit grid below 2^-126, so tiny, though
		// gradual underflow would round it up to 2^-126.
		{"tiny after rounding", -p(-75), p(-75), p(-63), p(-63), 1, 0, 0, 0},
		// 2^-126 − 2^-151·(1+2^-7): below the tie, tiny.
		{"below the tie", -p(-75) * (1 + p(-7)), p(-76), p(-63), p(-63), 1, 0, 0, 0},
		{"alpha makes it tiny", p(-50), p(-50), 0, 0, p(-27), 0, 0, 0},
		{"subnormal C read as zero", p(-60), p(-60), 0, 0, 1, 1, p(-130), p(-120)},
		{"beta·C tiny plus v", p(-63), p(-63), 0, 0, 1, -0.5, p(-125) * (1 - p(-20)), 0},
	} {
		a := []float32{tc.a0, tc.a1}
		b := []float32{tc.b0, tc.b1}
		c := []float32{tc.c}
		sgemmBF16Ref(false, false, 1, 1, 2, tc.alpha, a, 2, b, 1, tc.beta, c, 1)
		if math.Float32bits(c[0]) != math.Float32bits(tc.want) {
			t.Errorf("%s: reference gives %g (%#x), want %g (%#x)", tc.name, c[0], math.Float32bits(c[0]), tc.want, math.Float32bits(tc.want))
		}
		for _, kern := range allEmulKernels() {
			c := []float32{tc.c}
			sgemmBF16Emul(kern, false, false, 1, 1, 2, tc.alpha, a, 2, b, 1, tc.beta, c, 1, false)
			if math.Float32bits(c[0]) != math.Float32bits(tc.want) {
				t.Errorf("%s: %s gives %g (%#x), want %g (%#x)", tc.name, kern.name, c[0], math.Float32bits(c[0]), tc.want, math.Float32bits(tc.want))
			}
		}
	}
}
