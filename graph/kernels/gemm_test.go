package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// refSgemm is the float64 triple loop the kernels are checked against.
func refSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) []float64 {
	out := make([]float64, len(c))
	for i := range c {
		out[i] = float64(c[i])
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				ai, bi := i*lda+p, p*ldb+j
				if transA {
					ai = p*lda + i
				}
				if transB {
					bi = j*ldb + p
				}
				av, bv := a[ai], b[bi]
				s += float64(av) * float64(bv)
			}
			v := float64(alpha) * s
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			out[i*ldc+j] = v
		}
	}
	return out
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// gemmCase is one product; pad is added to every minimal leading dimension.
type gemmCase struct {
	tA, tB      bool
	m, n, k     int
	pad         int
	alpha, beta float32
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,m=%d,n=%d,k=%d,pad=%d,alpha=%g,beta=%g", tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.pad, tc.alpha, tc.beta)
}

// operands builds A, B and C for tc; C holds NaN where beta == 0 (it must
// be ignored) and marker values in the padding (they must survive).
func (tc gemmCase) operands(r *rand.Rand) (a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	ar, ac := tc.m, tc.k
	if tc.tA {
		ar, ac = tc.k, tc.m
	}
	br, bc := tc.k, tc.n
	if tc.tB {
		br, bc = tc.n, tc.k
	}
	lda, ldb, ldc = max(ac, 1)+tc.pad, max(bc, 1)+tc.pad, max(tc.n, 1)+tc.pad
	a = randSlice(r, needLen(ar, ac, lda))
	b = randSlice(r, needLen(br, bc, ldb))
	c = randSlice(r, needLen(tc.m, tc.n, ldc)+tc.pad)
	for i := range c {
		if i%ldc >= tc.n || i >= needLen(tc.m, tc.n, ldc) {
			c[i] = 12345
		} else if tc.beta == 0 {
			c[i] = float32(math.NaN())
		}
	}
	return
}

// checkGemm compares got with the float64 reference; the bound scales with
// k and the operand magnitudes (|a|,|b| ~ 1).
func checkGemm(t *testing.T, tc gemmCase, want []float64, got []float32) {
	t.Helper()
	tol := 1e-5 * (float64(tc.k) + 4) * (math.Abs(float64(tc.alpha)) + math.Abs(float64(tc.beta)) + 1)
	bad := 0
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol) {
			if bad < 3 {
				t.Errorf("%v: c[%d] = %g, want %g (tol %g)", tc, i, got[i], want[i], tol)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%v: %d bad elements", tc, bad)
	}
}

func gemmCases() []gemmCase {
	var cases []gemmCase
	sizes := []int{1, 2, 3, 7, 17, 33, 65, 129}
	i := 0
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for _, m := range sizes {
				for _, n := range sizes {
					// A rotating k keeps the case count (and test time) down
					// while every (m, n) pair meets several depths.
					k := sizes[(i*5+m+n)%len(sizes)]
					i++
					ab := [][2]float32{{1, 0}, {0.5, 1}, {-1.5, 0.25}, {1, 1}}[i%4]
					cases = append(cases, gemmCase{tA, tB, m, n, k, i % 3, ab[0], ab[1]})
				}
			}
			// Several K blocks, several M blocks and a partial B panel.
			cases = append(cases,
				gemmCase{tA, tB, 471, 67, 600, 1, 1, 0},
				gemmCase{tA, tB, 30, 70, 513, 0, 0.5, -1},
				gemmCase{tA, tB, 6, 16, 4, 0, 1, 0},
				gemmCase{tA, tB, 14, 32, 8, 0, 2, 3},
				gemmCase{tA, tB, 3, ncBlock + 70, 5, 1, 1, 0.5}, // several column blocks
			)
		}
	}
	return cases
}

// TestSgemmKernels runs every micro-kernel this CPU supports, serial and
// split over goroutines, against the float64 reference.
func TestSgemmKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, kern := range allKernels() {
		t.Run(strings.ReplaceAll(kern.name, " ", "_"), func(t *testing.T) {
			for _, tc := range gemmCases() {
				a, lda, b, ldb, c, ldc := tc.operands(r)
				want := refSgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
				sgemmNative(kern, tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc, true)
				checkGemm(t, tc, want, c)
			}
		})
	}
}

// TestSgemm checks the exported entry point (whichever backend is built).
func TestSgemm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := append(gemmCases(),
		gemmCase{false, false, 5, 6, 0, 1, 1, 0},      // k = 0: C = beta·C = 0
		gemmCase{false, true, 5, 6, 0, 1, 1, 0.5},     // k = 0: C = beta·C
		gemmCase{true, false, 5, 6, 7, 0, 0, 2},       // alpha = 0: C = beta·C
		gemmCase{false, false, 0, 6, 7, 0, 1, 0},      // empty
		gemmCase{false, false, 6400, 64, 64, 0, 1, 0}, // a ViT shape, split over cores
	)
	for _, tc := range cases {
		a, lda, b, ldb, c, ldc := tc.operands(r)
		want := refSgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
		Sgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
		checkGemm(t, tc, want, c)
	}
}

// TestSgemmSerial checks the single-goroutine entry point against the
// reference, including a product large enough that Sgemm would split it
// and the attention shapes it is called with per image and head.
func TestSgemmSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cases := append(gemmCases(),
		gemmCase{false, false, 5, 6, 0, 1, 1, 0.5},     // k = 0: C = beta·C
		gemmCase{true, false, 5, 6, 7, 0, 0, 2},        // alpha = 0: C = beta·C
		gemmCase{false, false, 0, 6, 7, 0, 1, 0},       // empty
		gemmCase{false, true, 50, 50, 16, 0, 0.25, 0},  // attention scores
		gemmCase{false, false, 50, 64, 50, 0, 1, 0},    // P·V
		gemmCase{true, false, 50, 64, 50, 2, 0.125, 0}, // dK = scale·dSᵀ·Q
		gemmCase{false, true, 640, 192, 64, 0, 1, 0},   // over parallelMinWork
	)
	for _, tc := range cases {
		a, lda, b, ldb, c, ldc := tc.operands(r)
		want := refSgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
		SgemmSerial(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
		checkGemm(t, tc, want, c)
	}
	func() {
		defer func() {
			if s, _ := recover().(string); !strings.Contains(s, "kernels.SgemmSerial: ldc = 4") {
				t.Errorf("bad ldc: panic %q, want one naming SgemmSerial and ldc", s)
			}
		}()
		ok := make([]float32, 100)
		SgemmSerial(false, false, 4, 5, 4, 1, ok, 4, ok, 5, 0, ok, 4)
	}()
}

// TestSgemmAlphaZeroIgnoresAB checks that A and B are not read when alpha
// is 0 (cblas semantics): NaNs there must not reach C.
func TestSgemmAlphaZeroIgnoresAB(t *testing.T) {
	nan := float32(math.NaN())
	a := []float32{nan, nan, nan, nan}
	b := []float32{nan, nan, nan, nan}
	c := []float32{1, 2, 3, 4}
	Sgemm(false, false, 2, 2, 2, 0, a, 2, b, 2, 2, c, 2)
	if want := []float32{2, 4, 6, 8}; fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("c = %v, want %v", c, want)
	}
}

func TestSgemmPanics(t *testing.T) {
	ok := make([]float32, 100)
	for _, tc := range []struct {
		name string
		call func()
		want string
	}{
		{"lda", func() { Sgemm(false, false, 4, 4, 4, 1, ok, 3, ok, 4, 0, ok, 4) }, "lda = 3"},
		{"ldb", func() { Sgemm(false, true, 4, 5, 4, 1, ok, 4, ok, 3, 0, ok, 5) }, "ldb = 3"},
		{"ldc", func() { Sgemm(false, false, 4, 5, 4, 1, ok, 4, ok, 5, 0, ok, 4) }, "ldc = 4"},
		{"len a", func() { Sgemm(true, false, 4, 4, 30, 1, ok, 4, ok[:], 4, 0, ok, 4) }, "len(a) = 100"},
		{"len c", func() { Sgemm(false, false, 9, 9, 1, 1, ok, 1, ok, 9, 0, ok[:80], 9) }, "len(c) = 80"},
		{"neg", func() { Sgemm(false, false, -1, 4, 4, 1, ok, 4, ok, 4, 0, ok, 4) }, "negative dimension"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantPanic(t, tc.want, tc.call) })
	}
}

// TestSgemmConcurrent calls Sgemm from several goroutines at once (the
// packing buffers come from a pool and must not be shared).
func TestSgemmConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for _, tc := range []gemmCase{{false, true, 130, 70, 40, 0, 1, 0}, {true, false, 65, 129, 33, 1, 0.5, 1}} {
				a, lda, b, ldb, c, ldc := tc.operands(r)
				want := refSgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
				Sgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
				checkGemm(t, tc, want, c)
			}
		}()
	}
	wg.Wait()
}

// wantPanic calls call and fails unless it panics with a message containing
// want.
func wantPanic(t *testing.T, want string, call func()) {
	t.Helper()
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, want) {
			t.Fatalf("panic %v, want one containing %q", r, want)
		}
	}()
	call()
}

// TestPackingIsBitIdentical checks that packing A and B and the row block
// mc change no bit of C: only the depth blocks fix the summation order.
// Every kernel runs each product with packing off and mc = mcBlock (the
// reads in place of A and B) and with packing on at several row blocks,
// serial and split (B packed per chunk or shared), and the results must be
// equal bit for bit.
func TestPackingIsBitIdentical(t *testing.T) {
	defer func(a, b, s bool) { packTransA, packNN, sharePackedB = a, b, s }(packTransA, packNN, sharePackedB)
	r := rand.New(rand.NewPCG(11, 12))
	cases := []gemmCase{
		{true, false, 384, 384, 1100, 0, 1, 0},  // a weight gradient: several depth blocks
		{true, false, 130, 200, 70, 3, 0.5, 1},  // partial row panels and column panels
		{false, false, 400, 1540, 300, 1, 1, 0}, // dX at a wide ldb, partial panels
		{false, false, 97, 83, 520, 2, -1.5, 0.25},
		{true, true, 150, 90, 40, 0, 1, 1},
	}
	for _, kern := range allKernels() {
		for _, tc := range cases {
			a, lda, b, ldb, c0, ldc := tc.operands(r)
			run := func(packA, packB, share bool, mc int, parallel bool) []float32 {
				packTransA, packNN, sharePackedB = packA, packB, share
				defer func(old int) { kern.mc = old }(kern.mc)
				kern.mc = mc
				c := append([]float32(nil), c0...)
				sgemmNative(kern, tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc, parallel)
				return c
			}
			want := run(false, false, false, mcBlock, false)
			for _, v := range []struct {
				packA, packB, share bool
				mc                  int
				parallel            bool
			}{{true, true, true, 0, false}, {true, true, true, 0, true}, {true, true, false, 0, true}, {true, false, true, 60, false}, {false, true, true, 30, true}, {true, true, true, 13, false}} {
				got := run(v.packA, v.packB, v.share, v.mc, v.parallel)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
						t.Fatalf("%s %v packA=%v packB=%v shared=%v mc=%d parallel=%v: c[%d] = %g, want %g bit for bit", kern.name, tc, v.packA, v.packB, v.share, v.mc, v.parallel, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestDepthSplitIsBitIdentical checks that splitting a product's depth
// blocks over the cores (sgemmDepthSplit) gives the serial product's C bit
// for bit on 2, 3 and 4 cores, with beta 0 (C not read) and not, alpha ≠ 1,
// partial row and column tiles, a padded ldc (its markers must survive) and
// each kernel. The partial products must be added to C in depth-block order
// for this to hold: added in any other order, or summed per core first,
// the last bits differ.
func TestDepthSplitIsBitIdentical(t *testing.T) {
	defer func(on bool, tiles int) { splitDepth, depthSplitMaxTiles = on, tiles }(splitDepth, depthSplitMaxTiles)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(13, 14))
	cases := []gemmCase{
		{true, false, 64, 256, 6400, 0, 1, 0},   // TINY's fc2 weight gradient
		{true, false, 100, 37, 3000, 3, 0.5, 1}, // partial tiles, accumulating into C
		{false, true, 29, 70, 1500, 1, -2, 0.25},
		{false, false, 13, 9, 3000, 0, 1, 0}, // fewer rows than cores have pieces
	}
	for _, kern := range allKernels() {
		for _, tc := range cases {
			a, lda, b, ldb, c0, ldc := tc.operands(r)
			want := append([]float32(nil), c0...)
			sgemmNative(kern, tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, want, ldc, false)
			for _, procs := range []int{2, 3, 4} {
				runtime.GOMAXPROCS(procs)
				splitDepth, depthSplitMaxTiles = true, 1<<30
				if !depthSplitPays(kern, tc.m, tc.n, tc.k) {
					t.Fatalf("%s %v: the depth split is not taken", kern.name, tc)
				}
				got := append([]float32(nil), c0...)
				sgemmNative(kern, tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, got, ldc, true)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
						t.Fatalf("%s %v on %d cores: c[%d] = %g, want %g bit for bit", kern.name, tc, procs, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestDepthSplitPays pins which products split their depth, with the AVX2
// tiles: TINY's weight gradients on two cores; ViT-S/16's
// narrow ones (fc2's, 384 rows) on sixteen but not on two; never a product
// of one depth block, one core, or partials past depthSplitMaxFloats.
func TestDepthSplitPays(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		name    string
		m, n, k int
		procs   int
		want    bool
	}{
		{"TINY dW fc2, 2 cores", 64, 256, 6400, 2, true},
		{"TINY dW fc1, 2 cores", 256, 64, 6400, 2, true},
		{"ViT-S/16 dW fc2, 2 cores", 384, 1536, 6304, 2, false},
		{"ViT-S/16 dW fc2, 16 cores", 384, 1536, 6304, 16, true},
		{"ViT-S/16 dW qkv, 16 cores", 1152, 384, 6304, 16, true},
		{"ViT-S/16 dW fc1, 16 cores", 1536, 384, 6304, 16, false},
		{"one depth block", 64, 256, 500, 16, false},
		{"one core", 64, 256, 6400, 1, false},
		{"partials too large", 4096, 4096, 6400, 16, false},
	} {
		runtime.GOMAXPROCS(tc.procs)
		if got := depthSplitPays(&gemmKernel{name: "6x16", mr: 6, nr: 16}, tc.m, tc.n, tc.k); got != tc.want {
			t.Errorf("%s: depthSplitPays = %v, want %v", tc.name, got, tc.want)
		}
	}
}
