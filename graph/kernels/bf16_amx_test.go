//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAMXEqualsReference pins TDPBF16PS, through sgemmBF16AMX, to the
// definition of the product in AMX's order (sgemmBF16Ref), bit for bit,
// for every transpose, beta, tail and the special values (subnormals,
// signed zeros, bfloat16 ties, products near the smallest normal). The
// last two cases are blocked by runAMX: the first passes amxReach (AMX),
// the second dpFlatDepth (VDPBF16PS); TestAMXBlocked covers the blocking. It is skipped where the CPU or the kernel lacks AMX.
func TestAMXEqualsReference(t *testing.T) {
	pairedLegs(t, testAMXEqualsReference)
}

// pairedLegs runs f on each paired backend this CPU has (AMX, VDPBF16PS),
// and says which legs it lacks.
func pairedLegs(t *testing.T, f func(t *testing.T, pt *pairTiles)) {
	if !hasAVX512 || !hasAMX() {
		t.Log("no AMX-BF16 here (CPU flags amx_tile, amx_bf16, or Linux's permission): the AMX leg was not run")
	}
	if !hasDP() {
		t.Log("no AVX512_BF16 here (CPU flag avx512_bf16): the VDPBF16PS leg was not run")
	}
	pts := allPairedTiles()
	if len(pts) == 0 {
		t.Skip("no paired backend on this CPU")
	}
	for _, pt := range pts {
		t.Run(pt.name, func(t *testing.T) { f(t, pt) })
	}
}

func testAMXEqualsReference(t *testing.T, pt *pairTiles) {
	cases := append([]struct{ m, n, k int }{{32, 32, 32}, {64, 96, 64}, {33, 32, 31}}, bf16Cases...)
	small := len(cases)
	cases = append(cases, struct{ m, n, k int }{33, 705, 1100}, struct{ m, n, k int }{20, 40, 2100})
	r := rand.New(rand.NewPCG(3, 4))
	for ci, tc := range cases {
		abs, specials := [][2]float32{{1, 0}, {1.25, 0}, {1, 1}, {1.25, -0.75}}, []bool{false, true}
		if ci >= small { // one variant, for time
			abs, specials = [][2]float32{{1.25, -0.75}}, []bool{true}
		}
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, ab := range abs {
				for _, special := range specials {
					rc := newRefCase(r, tc.m, tc.n, tc.k, tr, ab, special)
					rc.check(t, rc.name, func(c []float32, par bool) {
						sgemmBF16AMX(pt, tr[0], tr[1], tc.m, tc.n, tc.k, ab[0], rc.a, rc.lda, rc.b, rc.ldb, ab[1], c, tc.n, par)
					})
				}
			}
		}
	}
}

// TestAMXBlocked pins runAMXBlocked to the definition, bit for bit, with
// passes of 1 to 3 blocks of depth and of columns, ranges of 1 and 2
// blocks of rows, op(A) converted pass by pass or all at once: the sums
// stored in C (alpha 1, beta 0, whole tiles) or in a buffer, and reloaded
// into the tiles pass after pass.
func TestAMXBlocked(t *testing.T) {
	pairedLegs(t, testAMXBlocked)
}

func testAMXBlocked(t *testing.T, pt *pairTiles) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ m, n, k int }{{32, 64, 96}, {64, 96, 130}, {33, 70, 100}, {7, 17, 601}, {29, 65, 63}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, ab := range [][2]float32{{1, 0}, {1.25, -0.75}} {
				rc := newRefCase(r, tc.m, tc.n, tc.k, tr, ab, true)
				kw := (tc.k + tileBlock - 1) / tileBlock * tileBlock
				npad := (tc.n + 31) / 32 * 32
				bw := make([]uint32, npad*kw/2)
				packPanelsAMX(pt.perm, bw, tr[1], tc.k, tc.n, kw, npad, rc.b, rc.ldb, false)
				for _, plan := range []blockedPlan{
					{db: 1, cb: 1, perPass: true, grain: 1}, {db: 2, cb: 1, perPass: true, grain: 2}, {db: 3, cb: 2, perPass: true, grain: 1},
					{db: 1, cb: 1, grain: 1}, {db: 2, cb: 1, grain: 2}, {db: 3, cb: 2, grain: 1},
				} {
					rc.check(t, fmt.Sprintf("%s/plan=%+v", rc.name, plan), func(c []float32, par bool) {
						src := &amxRows{transA: tr[0], m: tc.m, k: tc.k, a: rc.a, lda: rc.lda, perm: pt.perm}
						runAMXBlocked(pt, nil, src, bw, tc.m, tc.n, tc.k, ab[0], ab[1], c, tc.n, par, nil, plan)
					})
				}
			}
		}
	}
}

// TestRowsBF16 pins rowsBF16 and rowsWords, which convert (or copy), pad
// and permute a block of rows in one call, to ToBF16, +0 and dpPerm, for
// every depth up to 70 and both orders; the values past each row's k are
// NaNs, which a load past k would copy.
func TestRowsBF16(t *testing.T) {
	skipUnpaired(t)
	r := rand.New(rand.NewPCG(9, 10))
	const rows, lds = 5, 75
	src := make([]float32, rows*lds)
	words := make([]uint16, rows*lds)
	for k := 0; k <= 70; k++ {
		for _, kw := range []int{max(32, (k+31)/32*32), (k+31)/32*32 + 32} { // the second with a block past k
			nanPast(r, src, lds, rows, k, words)
			for _, perm := range []bool{false, true} {
				want := make([]uint16, rows*kw)
				for row := 0; row < rows; row++ {
					for i := 0; i < kw; i++ {
						j := i
						if perm {
							j = i/tileBlock*tileBlock + dpPerm[i%tileBlock]
						}
						if j < k {
							want[row*kw+i] = ToBF16(src[row*lds+j])
						}
					}
				}
				for _, tc := range []struct {
					name string
					run  func(dst []uint16)
				}{
					{"rowsBF16", func(dst []uint16) { rowsBF16(dst, kw, src, lds, rows, k, perm) }},
					{"rowsWords", func(dst []uint16) { rowsWords(dst, kw, words, lds, rows, k, perm) }},
				} {
					guarded := make([]uint16, rows*kw+64) // 64 words past dst, never written
					for i := range guarded {
						guarded[i] = 0xffff // every word of dst must be written
					}
					got := guarded[:rows*kw]
					tc.run(got)
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("%s(k=%d, kw=%d, perm=%v): row %d word %d = %#04x, want %#04x", tc.name, k, kw, perm, i/kw, i%kw, got[i], want[i])
						}
					}
					for i, w := range guarded[rows*kw:] {
						if w != 0xffff {
							t.Fatalf("%s(k=%d, kw=%d, perm=%v): word %d past dst written", tc.name, k, kw, perm, i)
						}
					}
				}
			}
		}
	}
}

// skipUnpaired skips a test of the paired backends' packing on a CPU
// that has neither AMX-BF16 nor AVX512_BF16, saying so.
func skipUnpaired(t *testing.T) {
	t.Helper()
	if len(allPairedTiles()) == 0 {
		t.Skip("no AMX-BF16 or AVX512_BF16 here (CPU flags amx_tile, amx_bf16, avx512_bf16): the packing's leg was not run")
	}
}

// nanPast sets x (rows ld apart) to normal values in its first rows × cols
// and NaN elsewhere, and words (when not nil) to their ToBF16: a packer
// that reads past its operand writes NaNs.
func nanPast(r *rand.Rand, x []float32, ld, rows, cols int, words []uint16) {
	for i := range x {
		x[i] = float32(math.NaN())
		if i/ld < rows && i%ld < cols {
			x[i] = float32(r.NormFloat64())
		}
		if words != nil {
			words[i] = ToBF16(x[i])
		}
	}
}

// TestPlanBlocked checks runAMXBlocked's plans for the blocked products
// of ViT-S/16 and ViT-B/16 on VDPBF16PS: a range's sums stay within
// blockedSums, and C's rows are converted pass by pass only where all of
// them fit for blockedRange blocks (npad ≤ 384).
func TestPlanBlocked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m, n    int
		perPass bool
	}{
		{"TINY dW of fc1", 256, 64, true},
		{"ViT-S/16 dW of fc1", 1536, 384, true},
		{"ViT-S/16 dW of fc2", 384, 1536, false},
		{"ViT-B/16 fc2 and dX of fc1", 3152, 768, false},
		{"ViT-B/16 dW of fc2", 768, 3072, false},
	} {
		mb, npad := (tc.m+31)/32, (tc.n+31)/32*32
		p := planBlocked(mb, npad, dpDepthBlocks, amxColBlocks)
		if p.perPass != tc.perPass {
			t.Errorf("%s: perPass = %v, want %v", tc.name, p.perPass, tc.perPass)
		}
		if p.grain < 1 || p.grain*32 > blockedRows {
			t.Errorf("%s: ranges of %d blocks of rows, want 1 to %d", tc.name, p.grain, blockedRows/32)
		}
		if cols := npad; p.perPass && p.grain*32*cols > blockedSums {
			t.Errorf("%s: a range keeps %d sums over all columns, more than %d", tc.name, p.grain*32*cols, blockedSums)
		}
	}
}

// BenchmarkBF16AMX times ViT-S/16's products (batch 32, 6304 tokens) and
// ViT-B/16's linear ones (batch 16, 3152 tokens) on each paired backend
// (AMX, VDPBF16PS) against float32 (Sgemm) and the emulation
// (sgemmBF16Emul), on all cores: "amx" or "avx512bf16" converts and packs
// the operands and runs the tiles, "…_tiles" runs the tiles on operands
// packed once. `go test -run '^$' -bench BF16AMX ./graph/kernels`.
func BenchmarkBF16AMX(b *testing.B) {
	pts := allPairedTiles()
	if len(pts) == 0 {
		b.Skip("no AMX-BF16 or AVX512_BF16 here")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range append(s16GemmShapes, b16GemmShapes...) {
		if s.m < 1000 && s.k < 1000 {
			continue // attention's per-head products
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
		run("emulated", func() { sgemmBF16Emul(emulKernel(), s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n, true) })
		for _, pt := range pts {
			name := strings.Fields(pt.name)[0]
			run(name, func() { sgemmBF16AMX(pt, s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n, true) })
			kw := (s.k + tileBlock - 1) / tileBlock * tileBlock
			npad := (s.n + 31) / 32 * 32
			ah := make([]uint16, (s.m+31)/32*32*kw)
			bw := make([]uint32, npad*kw/2)
			packRowsAMX(pt.perm, ah, s.tA, s.m, s.k, kw, a, lda)
			packPanelsAMX(pt.perm, bw, s.tB, s.k, s.n, kw, npad, bb, ldb, true)
			run(name+"_tiles", func() { runAMX(pt, ah, nil, bw, s.m, s.n, s.k, 1, 0, c, s.n, true, nil) })
		}
	}
}

func TestTranspose16(t *testing.T) {
	if len(allPairedTiles()) == 0 {
		t.Skip("no AMX-BF16 or AVX512_BF16 here (the transposition serves them)")
	}
	src := make([]uint32, 16*20)
	for i := range src {
		src[i] = uint32(i)
	}
	dst := make([]uint32, 16*18)
	transpose16AVX512(&dst[0], 18, &src[0], 20)
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			if dst[j*18+i] != src[i*20+j] {
				t.Fatalf("dst[%d][%d] = %d, want src[%d][%d] = %d", j, i, dst[j*18+i], i, j, src[i*20+j])
			}
		}
	}
}

// BenchmarkBF16AMXAttention times one attention head's products of
// ViT-S/16 (T 197, head dim 64) on one core: float32 (SgemmSerial) against
// AMX (sgemmBF16AMX, not parallel).
func BenchmarkBF16AMXAttention(b *testing.B) {
	pts := allPairedTiles()
	if len(pts) == 0 {
		b.Skip("no AMX-BF16 or AVX512_BF16 here")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range s16GemmShapes {
		if s.m >= 1000 || s.k >= 1000 {
			continue
		}
		a, bb, c, lda, ldb := s.operands(r)
		run := func(name string, f func()) {
			b.Run(s.name+"/"+name, func(b *testing.B) {
				b.ReportAllocs() // a head's product runs thousands of times a step
				for b.Loop() {
					f()
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		run("fp32", func() { SgemmSerial(s.tA, s.tB, s.m, s.n, s.k, 0.125, a, lda, bb, ldb, 0, c, s.n) })
		for _, pt := range pts {
			run(strings.Fields(pt.name)[0], func() { sgemmBF16AMX(pt, s.tA, s.tB, s.m, s.n, s.k, 0.125, a, lda, bb, ldb, 0, c, s.n, false) })
		}
	}
}

// TestPackConversion pins the packing's conversions (VCVTNEPS2BF16 and
// VCVTNE2PS2BF16 in wordsBF16, packPairRows, rowsBF16 and
// transposedRows) to ToBF16, bit for bit, on
// every upper half of a float32 (every sign, exponent and bfloat16
// mantissa: zeros, subnormals, infinities, NaNs) with the lower halves
// that decide the rounding (0, 1, just below, at and above the tie, all
// ones) and a pseudo-random one.
func TestPackConversion(t *testing.T) {
	skipUnpaired(t)
	lows := []uint32{0, 1, 0x7fff, 0x8000, 0x8001, 0xffff, 0}
	x := make([]float32, 0, 1<<16*len(lows))
	r := rand.New(rand.NewPCG(7, 8))
	for hi := uint32(0); hi < 1<<16; hi++ {
		lows[len(lows)-1] = r.Uint32() & 0xffff
		for _, lo := range lows {
			x = append(x, math.Float32frombits(hi<<16|lo))
		}
	}
	x = x[:len(x)-5] // a tail shorter than a vector
	words := make([]uint16, len(x))
	wordsBF16(words, x)
	for i, v := range x {
		if words[i] != ToBF16(v) {
			t.Fatalf("wordsBF16(%#08x) = %#04x, ToBF16 gives %#04x", math.Float32bits(v), words[i], ToBF16(v))
		}
	}
	// packPairRows over the same values as the 61 columns of a matrix.
	const n = 61
	kx := len(x) / n
	kwx := (kx + 31) / 32 * 32
	pairs := make([]uint32, 4*kwx/2*16)
	packPairRows(false, pairs, kx, n, kwx, 64, x, n, false)
	for r := 0; r < kwx/2; r++ {
		for j := 0; j < n; j++ {
			want := uint32(ToBF16(x[2*r*n+j]))
			if 2*r+1 < kx {
				want |= uint32(ToBF16(x[(2*r+1)*n+j])) << 16
			}
			if got := pairs[(j/16*kwx/2+r)*16+j%16]; got != want && 2*r < kx {
				t.Fatalf("packPairRows(%#08x, %#08x) = %#08x, ToBF16 gives %#08x", math.Float32bits(x[2*r*n+j]), math.Float32bits(x[(2*r+1)*n+j]), got, want)
			}
		}
	}
	// rowsBF16 over the same values as rows of 61.
	const rn = 61
	rk := len(x) / rn
	got := make([]uint16, rk*64)
	rowsBF16(got, 64, x, rn, rk, rn, false)
	for i := 0; i < rk; i++ {
		for j := 0; j < rn; j++ {
			if g, want := got[i*64+j], ToBF16(x[i*rn+j]); g != want {
				t.Fatalf("rowsBF16(%#08x) = %#04x, ToBF16 gives %#04x", math.Float32bits(x[i*rn+j]), g, want)
			}
		}
	}
	// transposedRows (VCVTNE2PS2BF16) over the same values as the 61
	// columns of a matrix, the last block of depth part of one.
	const cols = 61
	k := len(x) / cols
	la := (k + 31) / 32 * 32
	rows := make([]uint16, 64*la)
	transposedRows(rows, la, x, cols, k, cols, false)
	for i := 0; i < cols; i++ {
		for d := 0; d < k; d++ {
			if got, want := rows[i*la+d], ToBF16(x[d*cols+i]); got != want {
				t.Fatalf("transposedRows(%#08x) = %#04x, ToBF16 gives %#04x", math.Float32bits(x[d*cols+i]), got, want)
			}
		}
	}
}

// TestTransposedRows pins transposedRows (a transposed op(A) converted,
// transposed, padded and permuted in one pass) to ToBF16, +0 and dpPerm:
// depths around the blocks of 32, column counts around the groups of 16,
// NaNs past k and cols, and every word of dst written. TestPackConversion
// runs it over every special value.
func TestTransposedRows(t *testing.T) {
	skipUnpaired(t)
	r := rand.New(rand.NewPCG(11, 12))
	const lda = 77
	a := make([]float32, 100*lda)
	for _, k := range []int{1, 16, 31, 32, 33, 64, 70, 97} {
		for _, cols := range []int{1, 15, 16, 17, 32, 45, 64, 70} {
			nanPast(r, a, lda, k, cols, nil)
			kp := (k + 31) / 32 * 32
			la := kp + 32 // a depth past k's blocks, as a blocked product's last pass
			rows := (cols + 31) / 32 * 32
			for _, perm := range []bool{false, true} {
				got := make([]uint16, rows*la)
				for i := range got {
					got[i] = 0xffff
				}
				transposedRows(got, la, a, lda, k, cols, perm)
				for i := 0; i < rows; i++ {
					for w := 0; w < la; w++ {
						d := w
						if perm {
							d = w/tileBlock*tileBlock + dpPerm[w%tileBlock]
						}
						var want uint16
						if i < cols && d < k {
							want = ToBF16(a[d*lda+i])
						}
						if g := got[i*la+w]; g != want {
							t.Fatalf("transposedRows(k=%d, cols=%d, perm=%v): row %d word %d = %#04x, want %#04x", k, cols, perm, i, w, g, want)
						}
					}
				}
			}
		}
	}
}

// TestPackPairRows pins packPairRows (a non-transposed op(B) paired
// along the depth in 16-column panels, a block of 32 of depth per pass) to
// ToBF16, +0 and dpPerm, for float32 values and bfloat16 words, serial and
// over the cores: depths around the blocks of 32, widths around the
// panels, NaNs past k and n, every pair of dst written.
func TestPackPairRows(t *testing.T) {
	skipUnpaired(t)
	r := rand.New(rand.NewPCG(13, 14))
	const ldb = 75
	b := make([]float32, 300*ldb)
	w := make([]uint16, len(b))
	for _, k := range []int{1, 16, 31, 32, 33, 70, 97, 290} {
		for _, n := range []int{1, 15, 16, 17, 32, 50, 70} {
			nanPast(r, b, ldb, k, n, w)
			kw := (k + 31) / 32 * 32
			kp := kw / 2
			npad := (n + 31) / 32 * 32
			for _, perm := range []bool{false, true} {
				for _, par := range []bool{false, true} {
					for _, words := range []bool{false, true} {
						got := make([]uint32, npad/16*kp*16)
						for i := range got {
							got[i] = 0xffffffff
						}
						if words {
							packPairRows(perm, got, k, n, kw, npad, w, ldb, par)
						} else {
							packPairRows(perm, got, k, n, kw, npad, b, ldb, par)
						}
						for i, g := range got {
							p, row, j := i/(kp*16), i/16%kp, i%16
							col := 16*p + j
							var want uint32
							for h := 0; h < 2; h++ {
								d := 2*row + h
								if perm {
									d = d/tileBlock*tileBlock + dpPerm[d%tileBlock]
								}
								if d < k && col < n {
									want |= uint32(ToBF16(b[d*ldb+col])) << (16 * h)
								}
							}
							if g != want {
								t.Fatalf("packPairRows(k=%d, n=%d, perm=%v, parallel=%v, words=%v): panel %d pair row %d column %d = %#08x, want %#08x", k, n, perm, par, words, p, row, j, g, want)
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkDPPeak times VDPBF16PS alone, 24 independent chains on one core:
// its GFLOP/s (64 per instruction) is the ceiling of the VDPBF16PS tiles
// and of any other bfloat16 product on a CPU without AMX.
// `go test -run '^$' -bench DPPeak ./graph/kernels`.
func BenchmarkDPPeak(b *testing.B) {
	if !hasDP() {
		b.Skip("no AVX512_BF16 here")
	}
	const rounds = 1 << 16
	for b.Loop() {
		dpPeakLoop(rounds)
	}
	b.ReportMetric(dpPeakFLOPs*rounds*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// TestBF16Peak: the peak is measured on VDPBF16PS (a positive rate), and
// refused where the backend has no peak loop: the emulation and AMX.
func TestBF16Peak(t *testing.T) {
	saved := bf16Tiles()
	defer func() { bf16Pick.tiles = saved }()
	for _, c := range []struct {
		name string
		pt   *pairTiles
		ok   bool
	}{
		{"emulated", nil, false},
		{"amx", amxPaired, false},
		{"vdpbf16ps", dpPaired, true},
	} {
		if c.ok && !hasDP() {
			t.Logf("%s: skipped, no AVX512_BF16 here", c.name)
			continue
		}
		bf16Pick.tiles = c.pt
		g, ok := BF16Peak(2)
		t.Logf("%s: %.0f GFLOP/s, %v", c.name, g, ok)
		if ok != c.ok || (ok && !(g > 0)) || (!ok && g != 0) {
			t.Errorf("%s: BF16Peak(2) = %v, %v; want ok %v and a positive rate when ok", c.name, g, ok, c.ok)
		}
	}
	bf16Pick.tiles = saved
	if g, ok := BF16Peak(0); ok || g != 0 {
		t.Errorf("BF16Peak(0) = %v, %v; want 0, false", g, ok)
	}
}

// TestSerialProductsAllocateNothing: attention runs six serial products per
// image and head (13,824 a ViT-S/16 step at batch 32), with operands as
// float32 values or as words; on a paired backend they must not allocate.
func TestSerialProductsAllocateNothing(t *testing.T) {
	pairedLegs(t, func(t *testing.T, pt *pairTiles) {
		saved := bf16Tiles()
		bf16Pick.tiles = pt
		defer func() { bf16Pick.tiles = saved }()
		op := func(rows, cols int, words bool) BF16Operand {
			if words {
				return BF16Operand{W: make([]uint16, rows*cols), Ld: cols}
			}
			return BF16Operand{F: make([]float32, rows*cols), Ld: cols}
		}
		for _, s := range []struct {
			name         string
			tA, tB       bool
			m, n, k      int
			aWords, bWrd bool
		}{
			{"QKᵀ", false, true, 197, 197, 64, true, true},
			{"PV", false, false, 197, 64, 197, false, true},
			{"dV=Pᵀ·dO", true, false, 197, 64, 197, false, false},
			{"dK=dSᵀ·Q", true, false, 197, 64, 197, false, true},
			{"TINY QKᵀ", false, true, 50, 50, 16, true, true},
		} {
			ar, ac, br, bc := s.m, s.k, s.k, s.n
			if s.tA {
				ar, ac = ac, ar
			}
			if s.tB {
				br, bc = bc, br
			}
			a, b, c := op(ar, ac, s.aWords), op(br, bc, s.bWrd), make([]float32, s.m*s.n)
			if n := testing.AllocsPerRun(10, func() { SgemmBF16SerialOf(s.tA, s.tB, s.m, s.n, s.k, 0.125, a, b, 0, c, s.n) }); n != 0 {
				t.Errorf("%s (%d×%d×%d): %v allocations per call", s.name, s.m, s.n, s.k, n)
			}
		}
	})
}
