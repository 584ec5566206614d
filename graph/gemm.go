package graph

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/vitgo/vit/graph/kernels"
)

var gonumBLAS gonum.Implementation

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// gemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices, with
// cblas_sgemm/dgemm semantics. op(A) is m×k, op(B) is k×n.
func gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	switch c := any(c).(type) {
	case []float32:
		sgemm(tA, tB, m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
	case []float64:
		if k == 0 {
			scaleOrZero(c, m, n, ldc, float64(beta))
			return
		}
		gonumBLAS.Dgemm(trans(tA), trans(tB), m, n, k, float64(alpha), any(a).([]float64), lda, any(b).([]float64), ldb, float64(beta), c, ldc)
	}
}

// gemmPrec is gemm with bfloat16 products when bf16 is set (float32
// operands only: the op constructors refuse BF16 for float64).
func gemmPrec[T Float](bf16, tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if bf16 && m > 0 && n > 0 {
		kernels.SgemmBF16(tA, tB, m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
		return
	}
	gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemm is the float32 matrix product every hot op goes through: our
// packed AVX2/FMA kernels (or OpenBLAS with -tags openblas).
func sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if k == 0 {
		scaleOrZero(c, m, n, ldc, beta)
		return
	}
	kernels.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func scaleOrZero[T Float](c []T, m, n, ldc int, beta T) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			if beta == 0 {
				row[j] = 0
			} else {
				row[j] *= beta
			}
		}
	}
}
