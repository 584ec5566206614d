package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// wordsValues is bf16Values with every class ToBF16 treats apart: ties,
// subnormals, NaNs with payloads (quiet and signalling), infinities and
// finite values that round to infinity.
func wordsValues(r *rand.Rand, n int) []float32 {
	x := bf16Values(r, n, true)
	for i := range x {
		switch r.IntN(64) {
		case 0:
			x[i] = math.Float32frombits(0x7f800000 | r.Uint32()&0x807fffff | 1) // NaN, any sign and payload
		case 1:
			x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 2:
			x[i] = math.MaxFloat32
		}
	}
	return x
}

// TestWordsBF16 pins WordsBF16 to ToBF16 on every backend, every tail
// length and every class of float32, and checks it writes nothing past
// len(src).
func TestWordsBF16(t *testing.T) {
	bf16Backends(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, n := range []int{0, 1, 15, 16, 17, 33, 1000} {
			src := wordsValues(r, n)
			dst := make([]uint16, n+1)
			dst[n] = 0xdead
			WordsBF16(dst, src)
			for i, v := range src {
				if want := ToBF16(v); dst[i] != want {
					t.Fatalf("n=%d: WordsBF16(%#08x) = %#04x, want %#04x", n, math.Float32bits(v), dst[i], want)
				}
			}
			if dst[n] != 0xdead {
				t.Fatalf("n=%d: WordsBF16 wrote past the end", n)
			}
		}
	})
}

// TestWordsProducts pins the products of operands stored as bfloat16
// words to the same products of their float32 values, bit for bit, on
// every backend: SgemmPackedThenWords (a Linear forward, with a bias
// epilogue) to SgemmPackedThen, SgemmBF16Words (a weight gradient) to
// SgemmBF16. The operands have row strides past their widths, odd
// depths, tails of every tile, and a case whose op(B) takes AMX's passes.
func TestWordsProducts(t *testing.T) {
	bf16Backends(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		for _, tc := range []struct{ m, n, k int }{{1, 1, 1}, {15, 33, 17}, {29, 65, 63}, {64, 96, 1025}, {300, 70, 40}, {33, 1024, 800}} {
			// Forward: y = x·Wᵀ + bias, x stored in words.
			lda := tc.k + 3
			x := nanGuard(wordsValues(r, tc.m*lda))
			xw := make([]uint16, len(x))
			WordsBF16(xw, x)
			w := wordsValues(r, tc.n*tc.k)
			bias := wordsValues(r, tc.n)
			pb := PackBBF16(true, tc.k, tc.n, w, tc.k)
			epi := func(y []float32) func(i0, i1, j0, j1 int) {
				return func(i0, i1, j0, j1 int) {
					for i := i0; i < i1; i++ {
						EpilogueRow(y[i*tc.n+j0:i*tc.n+j1], bias[j0:j1], nil, false)
					}
				}
			}
			want := make([]float32, tc.m*tc.n)
			SgemmPackedThen(tc.m, x, lda, pb, want, tc.n, epi(want))
			got := make([]float32, tc.m*tc.n)
			SgemmPackedThenWords(tc.m, xw, lda, pb, got, tc.n, epi(got))
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("SgemmPackedThenWords %dx%dx%d: C[%d] = %g, want %g", tc.m, tc.n, tc.k, i, got[i], want[i])
			}

			// Weight gradient: C = alpha·op(A)·B + beta·C, B stored in words.
			ldb := tc.n + 5
			b := nanGuard(wordsValues(r, tc.k*ldb))
			bw := make([]uint16, len(b))
			WordsBF16(bw, b)
			for _, tA := range []bool{false, true} {
				a := wordsValues(r, tc.m*tc.k)
				la := tc.k
				if tA {
					la = tc.m
				}
				c0 := wordsValues(r, tc.m*tc.n)
				for _, ab := range [][2]float32{{1, 0}, {-0.5, 1.25}} {
					want := append([]float32(nil), c0...)
					SgemmBF16(tA, false, tc.m, tc.n, tc.k, ab[0], a, la, b, ldb, ab[1], want, tc.n)
					got := append([]float32(nil), c0...)
					SgemmBF16Words(tA, tc.m, tc.n, tc.k, ab[0], a, la, bw, ldb, ab[1], got, tc.n)
					if i := firstDiff(got, want); i >= 0 {
						t.Fatalf("SgemmBF16Words %dx%dx%d transA=%v alpha=%v beta=%v: C[%d] = %g, want %g", tc.m, tc.n, tc.k, tA, ab[0], ab[1], i, got[i], want[i])
					}
				}
			}
		}
	})
}

// TestSerialOfProducts pins SgemmBF16SerialOf, every operand given as
// float32 values or as words (A's words not transposed, B's either way),
// to SgemmBF16Serial on the same values, on every backend: the shapes of
// attention's per-head products (T 197, head dim 64, rows 3·d apart) and
// tails.
func TestSerialOfProducts(t *testing.T) {
	bf16Backends(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		for _, tc := range []struct{ m, n, k int }{{197, 197, 64}, {197, 64, 197}, {1, 1, 1}, {15, 33, 17}, {40, 70, 600}} {
			for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
				ar, ac, br, bc := tc.m, tc.k, tc.k, tc.n
				if tr[0] {
					ar, ac = tc.k, tc.m
				}
				if tr[1] {
					br, bc = tc.n, tc.k
				}
				lda, ldb := ac+7, bc+3
				a := nanGuard(wordsValues(r, ar*lda))
				b := nanGuard(wordsValues(r, br*ldb))
				aw, bw := make([]uint16, len(a)), make([]uint16, len(b))
				WordsBF16(aw, a)
				WordsBF16(bw, b)
				c0 := wordsValues(r, tc.m*tc.n)
				for _, ab := range [][2]float32{{0.125, 0}, {-0.5, 1.25}} {
					want := append([]float32(nil), c0...)
					SgemmBF16Serial(tr[0], tr[1], tc.m, tc.n, tc.k, ab[0], a, lda, b, ldb, ab[1], want, tc.n)
					for _, words := range [][2]bool{{false, true}, {true, false}, {true, true}} {
						if words[0] && tr[0] {
							continue
						}
						opA, opB := BF16Operand{F: a, Ld: lda}, BF16Operand{F: b, Ld: ldb}
						if words[0] {
							opA = BF16Operand{W: aw, Ld: lda}
						}
						if words[1] {
							opB = BF16Operand{W: bw, Ld: ldb}
						}
						got := append([]float32(nil), c0...)
						SgemmBF16SerialOf(tr[0], tr[1], tc.m, tc.n, tc.k, ab[0], opA, opB, ab[1], got, tc.n)
						if i := firstDiff(got, want); i >= 0 {
							t.Fatalf("SgemmBF16SerialOf %dx%dx%d trans=%v words=%v alpha=%v beta=%v: C[%d] = %g, want %g", tc.m, tc.n, tc.k, tr, words, ab[0], ab[1], i, got[i], want[i])
						}
					}
				}
			}
		}
	})
}

// TestSerialOfPanics checks SgemmBF16SerialOf's refusals, each naming the
// function and the operand, and that an empty product needs no operand.
func TestSerialOfPanics(t *testing.T) {
	f, w := make([]float32, 16), make([]uint16, 16)
	const fn = "kernels.SgemmBF16SerialOf"
	for _, tc := range []struct {
		name string
		a, b BF16Operand
		tA   bool
		want string
	}{
		{"both", BF16Operand{F: f, W: w, Ld: 4}, BF16Operand{F: f, Ld: 4}, false, fn + ": a has both F and W"},
		{"neither", BF16Operand{F: f, Ld: 4}, BF16Operand{Ld: 4}, false, fn + ": len(b) = 0"},
		{"words transposed", BF16Operand{W: w, Ld: 4}, BF16Operand{F: f, Ld: 4}, true, fn + ": a transposed A must be float32 values"},
		{"short", BF16Operand{W: w[:10], Ld: 4}, BF16Operand{F: f, Ld: 4}, false, fn + ": len(a) = 10"},
		{"lda", BF16Operand{W: w, Ld: 3}, BF16Operand{F: f, Ld: 4}, false, fn + ": lda = 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantPanic(t, tc.want, func() {
				SgemmBF16SerialOf(tc.tA, false, 4, 4, 4, 1, tc.a, tc.b, 0, make([]float32, 16), 4)
			})
		})
	}
	c := []float32{5}
	SgemmBF16SerialOf(false, false, 1, 1, 0, 1, BF16Operand{Ld: 1}, BF16Operand{Ld: 1}, 0, c, 1)
	SgemmBF16Words(false, 0, 0, 0, 1, nil, 1, nil, 1, 0, nil, 1)
	if c[0] != 0 {
		t.Fatalf("an empty depth leaves C = %v, want beta·C = 0", c[0])
	}
}

// TestWidenBF16 pins WidenBF16 to FromBF16 on every word, with every
// kernel this CPU has and every tail length, and checks it writes nothing
// past len(src).
func TestWidenBF16(t *testing.T) {
	withImpls(t, func(t *testing.T) {
		all := make([]uint16, 1<<16)
		for i := range all {
			all[i] = uint16(i)
		}
		for _, n := range append([]int{len(all)}, testLens[:14]...) {
			src := all[len(all)-n:]
			dst := make([]float32, n+1)
			dst[n] = 42
			WidenBF16(dst, src)
			for i, h := range src {
				if math.Float32bits(dst[i]) != uint32(h)<<16 {
					t.Fatalf("n=%d: WidenBF16(%#04x) = %#08x", n, h, math.Float32bits(dst[i]))
				}
			}
			if dst[n] != 42 {
				t.Fatalf("n=%d: WidenBF16 wrote past the end", n)
			}
		}
	})
}
