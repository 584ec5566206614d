package kernels

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"
)

// bestOf returns the fastest of reps runs of f, the timing least disturbed
// by other work on a shared machine.
func bestOf(reps int, f func()) time.Duration {
	best := time.Duration(1 << 62)
	for i := 0; i < reps; i++ {
		t0 := time.Now()
		f()
		best = min(best, time.Since(t0))
	}
	return best
}

// TestReportGemm prints best-of-N GFLOP/s of Sgemm (this build's backend)
// for the ViT shapes on one core and on all, and of the native AVX2 kernel
// on one core. Set KERNELS_REPORT=1 to run it.
func TestReportGemm(t *testing.T) {
	if os.Getenv("KERNELS_REPORT") == "" {
		t.Skip("set KERNELS_REPORT=1 to print throughput")
	}
	r := rand.New(rand.NewPCG(1, 1))
	fmt.Printf("backend %s\n", Backend())
	procs := runtime.GOMAXPROCS(0)
	for _, s := range vitGemmShapes {
		a, bb, c, lda, ldb := s.operands(r)
		flop := 2 * float64(s.m*s.n*s.k)
		line := fmt.Sprintf("%-18s %-3s %4d×%-4d×%-4d", s.name, map[bool]string{false: "N", true: "T"}[s.tA]+map[bool]string{false: "N", true: "T"}[s.tB], s.m, s.n, s.k)
		for _, p := range []int{1, procs} {
			old := runtime.GOMAXPROCS(p)
			d := bestOf(10, func() { Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n) })
			runtime.GOMAXPROCS(old)
			line += fmt.Sprintf("  %d core(s) %6.1f", p, flop/d.Seconds()/1e9)
		}
		if hasAVX2 {
			d := bestOf(10, func() {
				sgemmNative(kernelAVX2Or(nil), s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n, false)
			})
			line += fmt.Sprintf("  avx2 kernel 1 core %6.1f", flop/d.Seconds()/1e9)
		}
		fmt.Println(line)
	}
}

// kernelAVX2Or returns the AVX2 micro-kernel when this build has one.
func kernelAVX2Or(def *gemmKernel) *gemmKernel {
	for _, k := range allKernels() {
		if k.nr == 16 {
			return k
		}
	}
	return def
}

// TestReportElementwise prints best-of-N ns/elem for the elementwise
// kernels at ViT sizes, per implementation, on all cores and on one, and
// on 8192 elements (in L1: the pure compute cost) for the transcendental ones.
func TestReportElementwise(t *testing.T) {
	if os.Getenv("KERNELS_REPORT") == "" {
		t.Skip("set KERNELS_REPORT=1 to print throughput")
	}
	saved2, saved512 := hasAVX2, hasAVX512
	defer func() { hasAVX2, hasAVX512 = saved2, saved512 }()
	impls := []struct {
		name         string
		avx2, avx512 bool
	}{{"avx512", saved2, saved512}, {"avx2", saved2, false}, {"go", false, false}}
	r := rand.New(rand.NewPCG(2, 2))
	small := []struct {
		name string
		f    func(x, y, dy []float32)
	}{
		{"Exp_8K_in_L1", func(x, y, _ []float32) { Exp(y, x) }},
		{"GELU_8K_in_L1", func(x, y, _ []float32) { GELU(y, x) }},
		{"GELUBackward_8K_in_L1", func(x, y, dy []float32) { GELUBackward(y, x, dy) }},
	}
	x, y, dy := randSlice(r, 8192), make([]float32, 8192), randSlice(r, 8192)
	for _, im := range impls {
		hasAVX2, hasAVX512 = im.avx2, im.avx512
		for _, s := range small {
			d := bestOf(200, func() { s.f(x, y, dy) })
			fmt.Printf("%-32s %-6s 1 core %7.3f ns/elem\n", s.name, im.name, float64(d.Nanoseconds())/8192)
		}
		for _, e := range elementwiseBenches() {
			line := fmt.Sprintf("%-32s %-6s", e.name, im.name)
			for _, procs := range []int{runtime.GOMAXPROCS(0), 1} {
				old := runtime.GOMAXPROCS(procs)
				d := bestOf(5, e.run)
				runtime.GOMAXPROCS(old)
				line += fmt.Sprintf(" %d core(s) %7.3f ns/elem", procs, float64(d.Nanoseconds())/float64(e.elems))
			}
			fmt.Println(line)
		}
	}
}
