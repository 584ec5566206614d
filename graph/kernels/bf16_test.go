package kernels

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// bf16Cases are product shapes: tails of every tile (14×32, 6×16, 4×4),
// odd depths (a padded pair), several passes (k > 512, odd pass lengths).
var bf16Cases = []struct{ m, n, k int }{
	{1, 1, 1}, {3, 5, 2}, {13, 31, 7}, {14, 32, 16}, {15, 33, 17}, {29, 65, 63},
	{6, 16, 600}, {7, 17, 601}, {40, 50, 1025}, {64, 96, 1200}, {197, 64, 64},
}

// bf16Values fills a slice with values of every scale the products meet,
// with some specials: subnormals, signed zeros, and values near bfloat16
// rounding ties.
func bf16Values(r *rand.Rand, n int, special bool) []float32 {
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

// TestBF16Underflow pins the denormal handling of the bfloat16 products
// with sums built to land at the smallest normal float32, 2^-126: every
// backend flushes a result that is tiny after rounding (below 2^-126 when
// rounded to 24 bits with an unbounded exponent) and reads a subnormal C
// as zero, as TDPBF16PS and MXCSR's FTZ and DAZ do. The 1×1 product of
// depth 4 has a chain of odd depths o = a1·b1, then o + a3·b3 (the even
// chain takes zeros), then the block's padding (+0·+0, which turns a −0
// into +0), acc = +0 + (e + o), then alpha·acc + beta·C.
func TestBF16Underflow(t *testing.T) {
	p := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	for _, tc := range []struct {
		name           string
		a3, b3, a1, b1 float32
		alpha, beta, c float32
		want           float32
	}{
		{"exact 2^-126", p(-63), p(-63), 0, 0, 1, 0, 0, p(-126)},
		{"subnormal product", p(-63), p(-64), 0, 0, 1, 0, 0, 0},
		{"negative subnormal, then +0·+0", -p(-63), p(-64), 0, 0, 1, 0, 0, 0},
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
		a := []float32{0, tc.a1, 0, tc.a3}
		b := []float32{0, tc.b1, 0, tc.b3}
		check := func(backend string, c []float32) {
			if math.Float32bits(c[0]) != math.Float32bits(tc.want) {
				t.Errorf("%s: %s gives %g (%#x), want %g (%#x)", tc.name, backend, c[0], math.Float32bits(c[0]), tc.want, math.Float32bits(tc.want))
			}
		}
		c := []float32{tc.c}
		sgemmBF16Ref(false, false, 1, 1, 4, tc.alpha, a, 4, b, 1, tc.beta, c, 1)
		check("the reference", c)
		for _, pt := range allPairedTiles() {
			c := []float32{tc.c}
			sgemmBF16AMX(pt, false, false, 1, 1, 4, tc.alpha, a, 4, b, 1, tc.beta, c, 1, false)
			check(pt.name, c)
		}
		for _, kern := range allEmulKernels() {
			c := []float32{tc.c}
			sgemmBF16Emul(kern, false, false, 1, 1, 4, tc.alpha, a, 4, b, 1, tc.beta, c, 1, false)
			check(kern.name, c)
		}
	}
}

// TestBF16SignOfZero pins the sign of a zero sum across blocks of depth.
// In the last block each chain's first step ends at -0 (-2^-125 then
// +1.5·2^-126: a tiny sum, flushed), and the padding after it (+0·+0,
// which VDPBF16PS's tiles skip) turns it into +0; so the accumulator's -0
// (flushed in the second block) plus the chains' sum stays +0. k = 68:
// blocks of 32, 32 and 4. (Without its +0 the VDPBF16PS tiles give -0.)
func TestBF16SignOfZero(t *testing.T) {
	p := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	const k = 68
	a := make([]float32, k)
	b := make([]float32, k)
	a[0], b[0] = 3*p(-64), p(-63)     // block 1: 1.5·2^-126
	a[32], b[32] = -p(-62), p(-63)    // block 2: -2^-125; the sum -2^-127 flushes to -0
	for _, d := range []int{64, 65} { // block 3: the even chain (64, 66), the odd (65, 67)
		a[d], b[d] = -p(-62), p(-63)
		a[d+2], b[d+2] = 3*p(-64), p(-63)
	}
	check := func(backend string, c []float32) {
		if math.Float32bits(c[0]) != 0 {
			t.Errorf("%s gives %g (%#x), want +0", backend, c[0], math.Float32bits(c[0]))
		}
	}
	c := []float32{1}
	sgemmBF16Ref(false, false, 1, 1, k, 1, a, k, b, 1, 0, c, 1)
	check("the reference", c)
	for _, pt := range allPairedTiles() {
		c := []float32{1}
		sgemmBF16AMX(pt, false, false, 1, 1, k, 1, a, k, b, 1, 0, c, 1, false)
		check(pt.name, c)
	}
	for _, kern := range allEmulKernels() {
		c := []float32{1}
		sgemmBF16Emul(kern, false, false, 1, 1, k, 1, a, k, b, 1, 0, c, 1, false)
		check(kern.name, c)
	}
}

// BenchmarkSgemmBF16 times ViT-S/16's products (batch 32, 6304 tokens) in
// float32 and in bfloat16, on each paired backend the CPU has and on the
// emulation: forward x·Wᵀ, input gradient dY·W, weight gradient dYᵀ·X;
// then the blocked products (runAMXBlocked) of ViT-B/16 (batch 16, 3152
// tokens) and TINY's weight gradient (batch 128, 6400 tokens):
// `go test -run '^$' -bench SgemmBF16 ./graph/kernels`.
func BenchmarkSgemmBF16(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct {
		name    string
		tA, tB  bool
		m, n, k int
	}{
		{"fwd_qkv", false, true, 6304, 1152, 384},
		{"dx_fc1", false, false, 6304, 384, 1536},
		{"dw_fc1", true, false, 1536, 384, 6304},
		{"b16_fwd_fc2", false, true, 3152, 768, 3072},
		{"b16_dx_fc1", false, false, 3152, 768, 3072},
		{"b16_dw_fc1", true, false, 3072, 768, 3152},
		{"b16_dw_fc2", true, false, 768, 3072, 3152},
		{"tiny_dw_fc1", true, false, 256, 64, 6400},
	} {
		lda, ldb := s.k, s.n
		if s.tA {
			lda = s.m
		}
		if s.tB {
			ldb = s.k
		}
		a := bf16Values(r, s.m*s.k, false)
		bb := bf16Values(r, s.k*s.n, false)
		c := make([]float32, s.m*s.n)
		run := func(name string, f func()) {
			b.Run(s.name+"/"+name, func(b *testing.B) {
				for range b.N {
					f()
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		run("fp32", func() { Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n) })
		for _, pt := range allPairedTiles() {
			run(strings.Fields(pt.name)[0], func() { sgemmBF16AMX(pt, s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n, true) })
		}
		run("emulated", func() { sgemmBF16Emul(emulKernel(), s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n, true) })
	}
}

// bf16Backends runs f with each bfloat16 backend this CPU has: the
// emulation and, where present, AMX and VDPBF16PS.
func bf16Backends(t *testing.T, f func(t *testing.T)) {
	pt := bf16Tiles()
	defer func() { bf16Pick.tiles = pt }()
	bf16Pick.tiles = nil
	t.Run("emulated", f)
	if !hasAVX512 || !hasAMX() {
		t.Log("this CPU (or Linux) lacks AMX-BF16: the AMX leg is not run")
	}
	if !hasDP() {
		t.Log("this CPU lacks AVX512_BF16: the VDPBF16PS leg is not run")
	}
	for _, p := range allPairedTiles() {
		bf16Pick.tiles = p
		t.Run(strings.Fields(p.name)[0], f)
	}
}

// TestBF16PublicAPI checks SgemmBF16, SgemmBF16Serial and the products of
// a PackBBF16 operand against the definition on every backend.
func TestBF16PublicAPI(t *testing.T) {
	bf16Backends(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, tc := range []struct{ m, n, k int }{{1, 1, 1}, {15, 33, 17}, {29, 65, 63}, {64, 96, 1025}, {300, 70, 40}} {
			for _, tB := range []bool{false, true} {
				a := bf16Values(r, tc.m*tc.k, true)
				b := bf16Values(r, tc.k*tc.n, true)
				ldb := tc.n
				if tB {
					ldb = tc.k
				}
				want := make([]float32, tc.m*tc.n)
				sgemmBF16Ref(false, tB, tc.m, tc.n, tc.k, 1, a, tc.k, b, ldb, 0, want, tc.n)
				wantA := make([]float32, tc.m*tc.n)
				sgemmBF16Ref(false, tB, tc.m, tc.n, tc.k, -0.5, a, tc.k, b, ldb, 0, wantA, tc.n)
				pb := PackBBF16(tB, tc.k, tc.n, b, ldb)
				for name, run := range map[string]func(c []float32) []float32{
					"SgemmBF16": func(c []float32) []float32 {
						SgemmBF16(false, tB, tc.m, tc.n, tc.k, 1, a, tc.k, b, ldb, 0, c, tc.n)
						return want
					},
					"SgemmBF16Serial": func(c []float32) []float32 {
						SgemmBF16Serial(false, tB, tc.m, tc.n, tc.k, 1, a, tc.k, b, ldb, 0, c, tc.n)
						return want
					},
					"SgemmPacked": func(c []float32) []float32 { SgemmPacked(tc.m, a, tc.k, pb, c, tc.n); return want },
					"SgemmPackedThen": func(c []float32) []float32 {
						return epilogueOnce(t, "SgemmPackedThen", tc.m, tc.n, c, want, func(epi func(i0, i1, j0, j1 int)) {
							SgemmPackedThen(tc.m, a, tc.k, pb, c, tc.n, epi)
						})
					},
					"SgemmBF16Then": func(c []float32) []float32 {
						return epilogueOnce(t, "SgemmBF16Then", tc.m, tc.n, c, want, func(epi func(i0, i1, j0, j1 int)) {
							SgemmBF16Then(false, tB, tc.m, tc.n, tc.k, a, tc.k, b, ldb, c, tc.n, epi)
						})
					},
					"SgemmPackedSerial": func(c []float32) []float32 { SgemmPackedSerial(tc.m, -0.5, a, tc.k, pb, c, tc.n); return wantA },
				} {
					got := make([]float32, tc.m*tc.n)
					w := run(got)
					if i := firstDiff(got, w); i >= 0 {
						t.Fatalf("%s %dx%dx%d transB=%v: C[%d] = %g, want %g", name, tc.m, tc.n, tc.k, tB, i, got[i], w[i])
					}
				}
			}
		}
	})
}

// epilogueOnce runs a product with an epilogue (run) into c, m×n, whose
// epilogue subtracts want: it fails t unless the epilogue saw every
// element exactly once, and returns what c must then hold (+0 everywhere,
// so an epilogue run before an element's sum was final leaves a
// difference).
func epilogueOnce(t *testing.T, name string, m, n int, c, want []float32, run func(epi func(i0, i1, j0, j1 int))) []float32 {
	t.Helper()
	seen := make([]int, m*n)
	run(func(i0, i1, j0, j1 int) {
		for i := i0; i < i1; i++ {
			for j := j0; j < j1; j++ {
				seen[i*n+j]++
				c[i*n+j] -= want[i*n+j]
			}
		}
	})
	for i, v := range seen {
		if v != 1 {
			t.Fatalf("%s %dx%d: the epilogue saw C[%d] %d times", name, m, n, i, v)
		}
	}
	return make([]float32, m*n)
}

// TestRoundBF16 checks ToBF16 on the cases its definition names, and
// roundRow (vectorised where the CPU allows) against it on every class of
// float32, both orders, every tail length.
func TestRoundBF16(t *testing.T) {
	for _, tc := range []struct {
		x    uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie, even below
		{0x3f818000, 0x3f82}, // tie, odd below: up
		{0x3f808001, 0x3f81}, // above the tie
		{0x00000001, 0x0000}, // subnormal: +0
		{0x807fffff, 0x8000}, // subnormal: −0
		{0x00800000, 0x0080}, // smallest normal
		{0x7f7fffff, 0x7f80}, // largest float32: rounds to +Inf
		{0xff800000, 0xff80}, // −Inf
		{0x7f800001, 0x7fc0}, // signalling NaN: made quiet
		{0xffc12345, 0xffc1}, // quiet NaN keeps sign and payload top
	} {
		if got := ToBF16(math.Float32frombits(tc.x)); got != tc.want {
			t.Errorf("ToBF16(%#08x) = %#04x, want %#04x", tc.x, got, tc.want)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	src := make([]float32, 67)
	for i := range src {
		src[i] = math.Float32frombits(r.Uint32())
		if i%3 == 0 {
			src[i] = math.Float32frombits(r.Uint32()&0x807fffff | uint32(r.IntN(3))<<23) // near zero
		}
	}
	for i, x := range []uint32{0x3f808000, 0x3f818000, 0x7f7fffff, 0xff800000, 0x7f800001, 0xffc12345, 0x7fffffff, 0x80000000} {
		src[5*i+1] = math.Float32frombits(x)
	}
	for n := 0; n <= len(src); n++ {
		for _, swap := range []bool{false, true} {
			dst := make([]float32, n+1)
			roundRows(dst, src, 1, n, n+1, n, swap)
			for i := 0; i < n; i++ {
				j := i
				if swap {
					j = i ^ 1
				}
				if math.Float32bits(dst[j]) != uint32(ToBF16(src[i]))<<16 {
					t.Fatalf("n=%d swap=%v: element %d (%#08x) → %#08x, want %#04x0000", n, swap, i, math.Float32bits(src[i]), math.Float32bits(dst[j]), ToBF16(src[i]))
				}
			}
			if swap && n%2 == 1 && dst[n-1] != 0 {
				t.Fatalf("n=%d: pad %g, want 0", n, dst[n-1])
			}
		}
	}
}
