//go:build openblas

package openblas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

// Sgemm calls cblas_sgemm(CblasRowMajor, …). The caller checks the
// arguments: dimensions positive and within int32, slices long enough.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := uint32(C.CblasNoTrans), uint32(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(&a[0]), C.blasint(lda), (*C.float)(&b[0]), C.blasint(ldb),
		C.float(beta), (*C.float)(&c[0]), C.blasint(ldc))
}

// SetNumThreads sets the size of OpenBLAS's thread pool.
func SetNumThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// NumThreads returns the size of OpenBLAS's thread pool.
func NumThreads() int { return int(C.openblas_get_num_threads()) }

// Config returns OpenBLAS's build configuration string.
func Config() string { return C.GoString(C.openblas_get_config()) }

// CoreName returns the CPU core type OpenBLAS chose kernels for.
func CoreName() string { return C.GoString(C.openblas_get_corename()) }
