//go:build openblas

package kernels

import (
	"fmt"
	"math"
	"sync"

	"github.com/vitgo/vit/graph/kernels/internal/openblas"
)

// With the openblas build tag, Sgemm calls cblas_sgemm from libopenblas
// (Debian: apt-get install libopenblas-dev).
//
// Threading: OpenBLAS's pthread pool busy-waits for OPENBLAS_THREAD_TIMEOUT
// (default 2^28 cycles, about 0.1 s) after every call, so between products
// one core spins while our elementwise kernels want it, and the variable is
// read when the library loads, before any Go code runs. So OpenBLAS is set
// to one thread, once, and large products are split over GOMAXPROCS
// goroutines by row or column blocks, as the native backend does
// (README.md compares this with OpenBLAS's own threads).

// SplitInvariant is false with OpenBLAS: it picks its own kernels and
// blocking from each call's shape, so a row of C can differ in its last
// bits with the split over the cores or the rows batched beside it.
const SplitInvariant = false

var openblasInit sync.Once

func initOpenBLAS() { openblasInit.Do(func() { openblas.SetNumThreads(1) }) }

// sgemm runs a checked, non-trivial product (m, n, k > 0, alpha != 0);
// parallel allows splitting it over the cores.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	initOpenBLAS()
	for _, d := range []int{m, n, k, lda, ldb, ldc} {
		if d > math.MaxInt32 {
			panic(fmt.Sprintf("kernels.Sgemm: dimension %d overflows OpenBLAS's 32-bit blasint", d))
		}
	}
	if !parallel || m*n*k < parallelMinWork {
		openblas.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	const tile = 16 // block granularity of the split
	if m >= n {
		parallelFor(m, splitGrain((m+tile-1)/tile, 4, 1)*tile, tile, func(lo, hi int) {
			aoff := lo * lda
			if transA {
				aoff = lo
			}
			openblas.Sgemm(transA, transB, hi-lo, n, k, alpha, a[aoff:], lda, b, ldb, beta, c[lo*ldc:], ldc)
		})
		return
	}
	parallelFor(n, splitGrain((n+tile-1)/tile, 2, 1)*tile, tile, func(lo, hi int) {
		boff := lo
		if transB {
			boff = lo * ldb
		}
		openblas.Sgemm(transA, transB, m, hi-lo, k, alpha, a, lda, b[boff:], ldb, beta, c[lo:], ldc)
	})
}

// Backend names the SGEMM implementation in use: "openblas" with OpenBLAS's
// configuration and the core type it chose kernels for.
func Backend() string {
	initOpenBLAS()
	return fmt.Sprintf("openblas (%s; core %s; %d OpenBLAS thread, split over goroutines by Go)",
		openblas.Config(), openblas.CoreName(), openblas.NumThreads())
}
