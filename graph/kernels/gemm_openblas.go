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
// one core spins while our elementwise kernels want it. The variable is read
// when the library loads, before any Go code runs, so it cannot be set from
// here. Instead OpenBLAS is kept to one thread (set once, below) and large
// products are split over the cores by Go, exactly as the native backend
// does; a run may still export OPENBLAS_THREAD_TIMEOUT=4 for OpenBLAS's own
// threads if openblasGoThreads is turned off.

// openblasGoThreads: split products over goroutines (OpenBLAS at 1
// thread) rather than let OpenBLAS use its own pool of GOMAXPROCS threads.
var openblasGoThreads = true

var openblasInit sync.Once

func initOpenBLAS() {
	openblasInit.Do(func() {
		if openblasGoThreads {
			openblas.SetNumThreads(1)
		} else {
			openblas.SetNumThreads(max(1, runtimeProcs()))
		}
	})
}

// sgemm runs a checked, non-trivial product (m, n, k > 0, alpha != 0).
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	initOpenBLAS()
	for _, d := range []int{m, n, k, lda, ldb, ldc} {
		if d > math.MaxInt32 {
			panic(fmt.Sprintf("kernels.Sgemm: dimension %d overflows OpenBLAS's 32-bit blasint", d))
		}
	}
	if !openblasGoThreads || !parallel || m*n*k < parallelMinWork {
		cblasSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	// Split rows (or columns when there are few rows), as the native backend does.
	const tile = 16
	if m >= n {
		parallelFor(m, splitGrain((m+tile-1)/tile, 4, 1)*tile, tile, func(lo, hi int) {
			aoff := lo * lda
			if transA {
				aoff = lo
			}
			cblasSgemm(transA, transB, hi-lo, n, k, alpha, a[aoff:], lda, b, ldb, beta, c[lo*ldc:], ldc)
		})
		return
	}
	parallelFor(n, splitGrain((n+tile-1)/tile, 2, 1)*tile, tile, func(lo, hi int) {
		boff := lo
		if transB {
			boff = lo * ldb
		}
		cblasSgemm(transA, transB, m, hi-lo, k, alpha, a, lda, b[boff:], ldb, beta, c[lo:], ldc)
	})
}

func cblasSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	openblas.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Backend names the SGEMM implementation in use: "openblas" with the core
// OpenBLAS picked for this CPU and its thread count.
func Backend() string {
	initOpenBLAS()
	mode := "split by Go"
	if !openblasGoThreads {
		mode = "OpenBLAS threads"
	}
	return fmt.Sprintf("openblas (%s; core %s; %d OpenBLAS thread(s), %s)", openblas.Config(), openblas.CoreName(), openblas.NumThreads(), mode)
}
