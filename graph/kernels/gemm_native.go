//go:build !openblas

package kernels

// nativeKernel is the micro-kernel Sgemm uses, chosen once for this CPU;
// narrowNative, if not nil, replaces it for products at most narrowWidth
// columns wide.
var (
	nativeKernel = bestKernel()
	narrowNative = narrowKernel()
)

const narrowWidth = 16

// SplitInvariant reports whether every element of an Sgemm product comes
// out the same bit for bit however the product is split over the cores or
// batched with other rows: true for the native kernels, whose summation
// order only the depth blocks fix (TestPackingIsBitIdentical). Tests that
// pin bits across core counts or batch sizes check it.
const SplitInvariant = true

// sgemm runs a checked, non-trivial product (m, n, k > 0, alpha != 0) on
// the native kernels; parallel allows splitting it over the cores.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	sgemmNative(kernelFor(n), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parallel)
}

// kernelFor returns the micro-kernel for a product n columns wide.
func kernelFor(n int) *gemmKernel {
	if n <= narrowWidth && narrowNative != nil {
		return narrowNative
	}
	return nativeKernel
}

// Backend names the SGEMM implementation in use, e.g. "native avx512 14x32"
// (Go assembly micro-kernel and register tile) or "native go 4x4".
func Backend() string { return "native " + nativeKernel.name }
