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

// TestReportGemm prints best-of-N GFLOP/s for the ViT shapes, per kernel,
// on one core and split over all. Set KERNELS_REPORT=1 to run it.
func TestReportGemm(t *testing.T) {
	if os.Getenv("KERNELS_REPORT") == "" {
		t.Skip("set KERNELS_REPORT=1 to print throughput")
	}
	r := rand.New(rand.NewPCG(1, 1))
	fmt.Printf("backend %s\n", Backend())
	for _, s := range vitGemmShapes {
		a := randSlice(r, s.m*s.k)
		bb := randSlice(r, s.k*s.n)
		c := make([]float32, s.m*s.n)
		lda, ldb := s.k, s.n
		if s.tA {
			lda = s.m
		}
		if s.tB {
			ldb = s.k
		}
		flop := 2 * float64(s.m*s.n*s.k)
		line := fmt.Sprintf("%-18s", s.name)
		for _, kern := range allKernels()[1:] {
			for _, par := range []bool{false, true} {
				d := bestOf(10, func() {
					sgemmNative(kern, s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n, par)
				})
				line += fmt.Sprintf(" %s/%v %6.1f", kern.name, par, flop/d.Seconds()/1e9)
			}
		}
		d := bestOf(10, func() { Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n) })
		line += fmt.Sprintf(" | Sgemm %6.1f", flop/d.Seconds()/1e9)
		fmt.Println(line)
	}
}

// TestReportElementwise prints best-of-N ns/elem for the elementwise
// kernels, AVX2 and Go, on all cores and on one.
func TestReportElementwise(t *testing.T) {
	if os.Getenv("KERNELS_REPORT") == "" {
		t.Skip("set KERNELS_REPORT=1 to print throughput")
	}
	saved := hasAVX2
	defer func() { hasAVX2 = saved }()
	for _, e := range elementwiseBenches() {
		line := fmt.Sprintf("%-32s", e.name)
		for _, avx := range []bool{true, false} {
			if avx && !saved {
				continue
			}
			hasAVX2 = avx
			for _, procs := range []int{0, 1} {
				old := runtime.GOMAXPROCS(procs)
				d := bestOf(10, e.run)
				runtime.GOMAXPROCS(old)
				line += fmt.Sprintf("  avx2=%v procs=%d %6.3f", avx, runtime.GOMAXPROCS(0)*0+max(procs, old*boolInt(procs == 0)), float64(d.Nanoseconds())/float64(e.elems))
			}
		}
		fmt.Println(line)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
