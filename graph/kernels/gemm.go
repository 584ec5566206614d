package kernels

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices with
// the semantics of cblas_sgemm(CblasRowMajor, …): op(A) is m×k (A is stored
// m×k, or k×m when transA), op(B) is k×n (B stored k×n, or n×k when
// transB), C is m×n; lda, ldb and ldc are the row strides. When beta == 0, C
// is only written, so NaNs in it do not propagate; when alpha == 0 or k ==
// 0, A and B are not read.
//
// Large products are split over GOMAXPROCS goroutines. Inconsistent
// arguments (a leading dimension below the row length, a slice too short)
// panic with a message naming the argument, as gonum's BLAS does.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmChecked("Sgemm", transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, true)
}

// SgemmSerial is Sgemm run entirely on the calling goroutine, however large
// the product: for callers that already spread independent products over
// the cores themselves (attention: one image's heads per goroutine), where
// Sgemm's own split would only add synchronisation. Arguments and results
// are as for Sgemm.
func SgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmChecked("SgemmSerial", transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, false)
}

// sgemmChecked is Sgemm (parallel) or SgemmSerial, named name in panics.
func sgemmChecked(name string, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	checkSgemm(name, transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scaleMatrix(m, n, beta, c, ldc)
		return
	}
	sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parallel)
}
