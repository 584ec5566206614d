package kernels

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitgo/vit/internal/parallel"
)

// vitGemmShapes are the products of one ViT training step at batch 128,
// 50 tokens (M = 6400 rows), for the TINY (d 64) and SMALL (d 192) models.
// Linear weights are stored (out, in) as in PyTorch: forward is X·Wᵀ, the
// input gradient dY·W and the weight gradient dYᵀ·X.
var vitGemmShapes = []gemmShape{
	{"fwd_d64_qkv", false, true, 6400, 192, 64},
	{"fwd_d64_fc1", false, true, 6400, 256, 64},
	{"fwd_d64_fc2", false, true, 6400, 64, 256},
	{"bwd_d64_dX_qkv", false, false, 6400, 64, 192},
	{"bwd_d64_dW_qkv", true, false, 192, 64, 6400},
	{"bwd_d64_dW_fc1", true, false, 256, 64, 6400},
	{"bwd_d64_dW_fc2", true, false, 64, 256, 6400},
	{"bwd_d64_dW_proj", true, false, 64, 64, 6400},
	{"fwd_d192_qkv", false, true, 6400, 576, 192},
	{"fwd_d192_proj", false, true, 6400, 192, 192},
	{"fwd_d192_fc1", false, true, 6400, 768, 192},
	{"fwd_d192_fc2", false, true, 6400, 192, 768},
	{"bwd_d192_dX_fc1", false, false, 6400, 192, 768},
	{"bwd_d192_dW_fc1", true, false, 768, 192, 6400},
	{"bwd_d192_dW_proj", true, false, 192, 192, 6400},
	{"nn_6400x192x64", false, false, 6400, 192, 64},
	{"nn_6400x256x64", false, false, 6400, 256, 64},
	{"nn_6400x64x256", false, false, 6400, 64, 256},
	{"tn_64x192x6400", true, false, 64, 192, 6400},
}

// s16GemmShapes are the products of one ViT-S/16@224 training step at
// batch 32 (197 tokens: M = 6304 rows, d 384, MLP 1536), and of one
// attention (image, head) pair (T 197, head dim 64).
var s16GemmShapes = []gemmShape{
	{"s16_fwd_qkv", false, true, 6304, 1152, 384},
	{"s16_fwd_fc1", false, true, 6304, 1536, 384},
	{"s16_fwd_fc2", false, true, 6304, 384, 1536},
	{"s16_dX_qkv", false, false, 6304, 384, 1152},
	{"s16_dX_fc2", false, false, 6304, 1536, 384},
	{"s16_dW_qkv", true, false, 1152, 384, 6304},
	{"s16_dW_proj", true, false, 384, 384, 6304},
	{"s16_dW_fc1", true, false, 1536, 384, 6304},
	{"s16_dW_fc2", true, false, 384, 1536, 6304},
	{"s16_attn_qk", false, true, 197, 197, 64},
	{"s16_attn_pv", false, false, 197, 64, 197},
	{"s16_attn_dv", true, false, 197, 64, 197},
}

// gemmShape is one product op(A)·op(B) of m×k by k×n.
type gemmShape struct {
	name    string
	tA, tB  bool
	m, n, k int
}

// operands returns random A and B and a zero C for the product, with the
// tight leading dimensions of A and B (C's is n).
func (s gemmShape) operands(r *rand.Rand) (a, b, c []float32, lda, ldb int) {
	a, b, c = randSlice(r, s.m*s.k), randSlice(r, s.k*s.n), make([]float32, s.m*s.n)
	lda, ldb = s.k, s.n
	if s.tA {
		lda = s.m
	}
	if s.tB {
		ldb = s.k
	}
	return a, b, c, lda, ldb
}

func BenchmarkSgemm(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, s := range append(vitGemmShapes[:len(vitGemmShapes):len(vitGemmShapes)], s16GemmShapes...) {
		b.Run(s.name, func(b *testing.B) {
			a, bb, c, lda, ldb := s.operands(r)
			b.ResetTimer()
			w0 := parallel.Waited()
			for b.Loop() {
				Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
			}
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			// the caller's wait for the helpers' last chunks, a share of the time
			b.ReportMetric(100*float64(parallel.Waited()-w0)/float64(b.Elapsed()), "%waited")
		})
	}
}

// BenchmarkTwoCopies measures how much two cores slow each other down
// through what they share (L3, memory, a host's other tenants) on
// ViT-S/16's kernels at batch 32 (the fc1 forward product, the qkv weight
// gradient, GELU over the fc1 output and a residual add) and TINY's at
// batch 128 (the fc1 forward product and its GELU), and a loop of
// arithmetic in registers that touches no memory. Each iteration
// times, 20 times taking turns, one copy of the serial kernel on one core
// and two copies at once, each on operands of its own, on two cores, and
// reports the median of the 20 ratios ("two/one"): 1 when the cores do not
// disturb each other; 2 over it is the most a split of the kernel over two
// cores can gain on the machine. `go test -run '^$' -bench TwoCopies
// -benchtime 1x ./graph/kernels` (it needs GOMAXPROCS ≥ 2).
func BenchmarkTwoCopies(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs two cores")
	}
	r := rand.New(rand.NewPCG(3, 3))
	product := func(s gemmShape) func() func() {
		return func() func() {
			a, bb, c, lda, ldb := s.operands(r)
			return func() { SgemmSerial(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n) }
		}
	}
	// elementwise runs f over n elements: y = f(x).
	elementwise := func(n int, f func(y, x []float32)) func() func() {
		return func() func() {
			x, y := randSlice(r, n), randSlice(r, n)
			return func() { f(y, x) }
		}
	}
	s16fc1, tinyfc1 := gemmShapeNamed("s16_fwd_fc1"), gemmShapeNamed("fwd_d64_fc1")
	for _, k := range []struct {
		name  string
		setup func() func()
	}{
		{"sgemm_s16_fwd_fc1", product(s16fc1)},
		{"sgemm_s16_dW_qkv", product(gemmShapeNamed("s16_dW_qkv"))},
		{"gelu_s16_fc1", elementwise(s16fc1.m*s16fc1.n, geluVec)},
		{"add_s16_residual", elementwise(s16fc1.m*s16fc1.k, addVec)},
		{"sgemm_tiny_fwd_fc1", product(tinyfc1)},
		{"arith_registers", func() func() { return func() { registerArith(20_000_000) } }},
		{"gelu_tiny_fc1", elementwise(tinyfc1.m*tinyfc1.n, geluVec)},
	} {
		b.Run(k.name, func(b *testing.B) {
			one, two := k.setup(), k.setup()
			one() // fault the outputs' pages in
			two()
			for b.Loop() {
				ratios := make([]float64, 20)
				for i := range ratios {
					t := time.Now()
					one()
					alone := time.Since(t)
					// the second copy's goroutine spins on a flag, so that
					// both start together and waking a core is not timed
					var ready, start atomic.Bool
					var wg sync.WaitGroup
					wg.Add(1)
					go func() {
						defer wg.Done()
						ready.Store(true)
						for !start.Load() {
						}
						two()
					}()
					for !ready.Load() {
					}
					t = time.Now()
					start.Store(true)
					one()
					wg.Wait()
					ratios[i] = float64(time.Since(t)) / float64(alone)
				}
				slices.Sort(ratios)
				b.ReportMetric((ratios[9]+ratios[10])/2, "two/one")
			}
		})
	}
}

// gemmShapeNamed returns the shape of vitGemmShapes or s16GemmShapes with
// that name.
func gemmShapeNamed(name string) gemmShape {
	for _, s := range append(vitGemmShapes[:len(vitGemmShapes):len(vitGemmShapes)], s16GemmShapes...) {
		if s.name == name {
			return s
		}
	}
	panic("no GEMM shape " + name)
}

// registerArith is n rounds of four dependent multiply-adds in registers:
// work that touches no memory, for BenchmarkTwoCopies.
//
//go:noinline
func registerArith(n int) float64 {
	a, b, c, d := 1.0, 1.1, 1.2, 1.3
	for range n {
		a = a*0.999999 + 1e-6
		b = b*0.999999 + 1e-6
		c = c*0.999999 + 1e-6
		d = d*0.999999 + 1e-6
	}
	return a + b + c + d
}

// elementwiseBenches are the elementwise kernels at the sizes of one SMALL
// ViT layer at batch 128: GELU over the MLP hidden (6400×768), softmax
// over attention rows (128·3·50 rows of 50), LayerNorm over 6400×192.
func elementwiseBenches() []struct {
	name  string
	elems int
	run   func()
} {
	r := rand.New(rand.NewPCG(2, 2))
	const hidden, tokens, d = 6400 * 768, 6400, 192
	x, y, dy := randSlice(r, hidden), make([]float32, hidden), randSlice(r, hidden)
	att := randSlice(r, 384*50*50)
	scores := randSlice(r, 6*197*197) // ViT-S/16's attention scores of one image and layer
	lnX, lnY, lnDy := randSlice(r, tokens*d), make([]float32, tokens*d), randSlice(r, tokens*d)
	w, b, dw, db := randSlice(r, d), randSlice(r, d), make([]float32, d), make([]float32, d)
	mean, rstd := make([]float32, tokens), make([]float32, tokens)
	bias768 := randSlice(r, 768)
	row, rowY := randSlice(r, 6*768), make([]float32, 6*768) // one fc1 tile's rows, in L1 as in its epilogue
	return []struct {
		name  string
		elems int
		run   func()
	}{
		{"Exp_4.9M", hidden, func() { Exp(y, x) }},
		{"GELU_4.9M", hidden, func() { GELU(y, x) }},
		{"GELU_6x768", len(row), func() { GELU(rowY, row) }},
		{"EpilogueRow_bias_GELU_6x768", len(row), func() { // fc1's epilogue on one tile's rows
			copy(rowY, row) // fresh sums each time (the same copy in both forms below)
			for i := range 6 {
				EpilogueRow(rowY[i*768:(i+1)*768], bias768, nil, true)
			}
		}},
		{"EpilogueRow_bias_residual_6x768", len(row), func() { // fc2's and attn.proj's
			copy(rowY, row)
			for i := range 6 {
				EpilogueRow(rowY[i*768:(i+1)*768], bias768, row[i*768:(i+1)*768], false)
			}
		}},
		{"GELUBackward_4.9M", hidden, func() { GELUBackward(y, x, dy) }},
		{"SoftmaxRows_19200x50", len(att), func() { SoftmaxRows(att, 384*50, 50) }},
		{"SoftmaxRows_1182x197", len(scores), func() { SoftmaxRows(scores, 6*197, 197) }},
		{"SoftmaxBackwardRows_19200x50", len(att), func() { SoftmaxBackwardRows(att, att, att, 384*50, 50) }},
		{"LayerNormRows_6400x192", tokens * d, func() { LayerNormRows(lnY, mean, rstd, lnX, w, b, tokens, d, 1e-6) }},
		{"LayerNormBackwardRows_6400x192", tokens * d, func() { LayerNormBackwardRows(lnY, dw, db, lnDy, lnX, mean, rstd, w, tokens, d) }},
		{"AddBias_6400x768", hidden, func() { AddBias(y, bias768, 6400, 768) }},
		{"ColSum_6400x768", hidden, func() { ColSum(bias768, x, 6400, 768) }},
		{"Axpy_4.9M", hidden, func() { Axpy(0.5, x, y) }},
	}
}

func BenchmarkElementwise(b *testing.B) {
	for _, e := range elementwiseBenches() {
		b.Run(e.name, func(b *testing.B) {
			for b.Loop() {
				e.run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(e.elems), "ns/elem")
		})
	}
}

// BenchmarkPack times the panel packs of ViT-S/16@224's products at batch
// 32, with the AVX2 assembly ("asm") and with the Go loops ("go"): a
// weight gradient's transposed-A blocks (1536 rows × 485 of dYᵀ in blocks of 120, lda 1536),
// a dX product's B block (W 384×1152 read at ldb 1152), and the forward
// products' Bᵀ panels (qkv weight 1152×384, 16 rows per panel).
func BenchmarkPack(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	dy, w := randSlice(r, 6304*1536), randSlice(r, 1152*384)
	dst := make([]float32, 1152*485)
	cases := []struct {
		name   string
		floats int
		run    func()
	}{
		{"dW_A_1536x485_ld1536", 1536 * 485, func() {
			for ic := 0; ic < 1536; ic += 120 {
				packAColPanels(dst, dy, 1536, ic, min(120, 1536-ic), 970, 485, 6)
			}
		}},
		{"dX_B_384x1152", 384 * 1152, func() { packBPanels(dst, w, 1152, 0, 1152, 0, 384, 16) }},
		{"fwd_Bt_1152x384", 1152 * 384, func() {
			for j := 0; j < 1152; j += 16 {
				packBTrans(dst[j*384:], w, 384, j, 16, 0, 384, 16)
			}
		}},
	}
	for _, c := range cases {
		for _, asm := range []bool{true, false} {
			name := c.name + "/go"
			if asm {
				name = c.name + "/asm"
			}
			b.Run(name, func(b *testing.B) {
				defer func(old bool) { packAVX2 = old }(packAVX2)
				packAVX2 = packAVX2 && asm
				for b.Loop() {
					c.run()
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(c.floats), "ns/float")
			})
		}
	}
}

// BenchmarkMicroKernelL1 runs the SGEMM micro-kernel on one MR×NR tile
// whose operands stay in L1 (kc 256), on every goroutine of b.RunParallel,
// each with its own buffers, and reports the FLOPs of all of them per
// second: the arithmetic peak of the kernel without memory traffic. With
// -cpu 1,2 it shows how the cores scale when memory is out of the way.
func BenchmarkMicroKernelL1(b *testing.B) {
	kern := bestKernel() // the native build's kernel, also under -tags openblas
	const kc = 256
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(5, 5))
		a, bb, c := randSlice(r, kern.mr*kc), randSlice(r, kc*kern.nr), make([]float32, kern.mr*kern.nr)
		mask := uint64(1)<<uint(kern.nr) - 1
		for pb.Next() {
			kern.rowA(kc, &a[0], kc, &bb[0], kern.nr, &c[0], kern.nr, 1, 0, kern.mr, mask)
		}
	})
	b.ReportMetric(2*float64(kern.mr*kern.nr*kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// b16GemmShapes are ViT-B/16's products at batch 16 (3152 tokens).
var b16GemmShapes = []gemmShape{
	{"b16_fwd_qkv", false, true, 3152, 2304, 768},
	{"b16_fwd_fc2", false, true, 3152, 768, 3072},
	{"b16_dX_fc2", false, false, 3152, 3072, 768},
	{"b16_dW_fc1", true, false, 3072, 768, 3152},
}
