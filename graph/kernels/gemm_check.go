package kernels

import "fmt"

// checkSgemm panics with a message naming the offending argument when the
// arguments of Sgemm (or of one SgemmStrided matrix) are inconsistent. It
// checks what cblas_sgemm checks plus the slice lengths: A is stored m×k
// (k×m when transA), B k×n (n×k when transB), C m×n, all row-major.
func checkSgemm(fn string, transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernels.%s: negative dimension m=%d n=%d k=%d", fn, m, n, k))
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkLd(fn, "lda", lda, ac)
	checkLd(fn, "ldb", ldb, bc)
	checkLd(fn, "ldc", ldc, n)
	checkLen(fn, "a", len(a), ar, ac, lda)
	checkLen(fn, "b", len(b), br, bc, ldb)
	checkLen(fn, "c", len(c), m, n, ldc)
}

func checkLd(fn, name string, ld, cols int) {
	if ld < max(1, cols) {
		panic(fmt.Sprintf("kernels.%s: %s = %d, want ≥ max(1, %d)", fn, name, ld, cols))
	}
}

// needLen is the number of elements a rows×cols row-major matrix with
// leading dimension ld spans.
func needLen(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

func checkLen(fn, name string, got, rows, cols, ld int) {
	if need := needLen(rows, cols, ld); got < need {
		panic(fmt.Sprintf("kernels.%s: len(%s) = %d, want ≥ %d for a %d×%d matrix with leading dimension %d", fn, name, got, need, rows, cols, ld))
	}
}

// checkStrided checks the batch layout of SgemmStrided: every matrix in
// range, and the C matrices not overlapping (they are written concurrently).
func checkStrided(transA, transB bool, m, n, k int, a []float32, lda, strideA int, b []float32, ldb, strideB int, c []float32, ldc, strideC int, batch int) {
	const fn = "SgemmStrided"
	if batch < 0 {
		panic(fmt.Sprintf("kernels.%s: batch = %d, want ≥ 0", fn, batch))
	}
	if strideA < 0 || strideB < 0 || strideC < 0 {
		panic(fmt.Sprintf("kernels.%s: negative stride strideA=%d strideB=%d strideC=%d", fn, strideA, strideB, strideC))
	}
	if batch == 0 {
		checkSgemm(fn, transA, transB, m, n, k, nil, lda, nil, ldb, nil, ldc)
		return
	}
	if batch > 1 && m > 0 && n > 0 && strideC < needLen(m, n, ldc) {
		panic(fmt.Sprintf("kernels.%s: strideC = %d makes the %d×%d C matrices (ldc %d) overlap, want ≥ %d", fn, strideC, m, n, ldc, needLen(m, n, ldc)))
	}
	last := batch - 1
	checkSgemm(fn, transA, transB, m, n, k, tail(a, last*strideA), lda, tail(b, last*strideB), ldb, tail(c, last*strideC), ldc)
}

// tail returns s[off:], or an empty slice when off is past the end (so the
// length check reports the shortfall).
func tail(s []float32, off int) []float32 {
	if off > len(s) {
		return s[len(s):]
	}
	return s[off:]
}
