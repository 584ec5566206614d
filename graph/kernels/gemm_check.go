package kernels

import "fmt"

// checkSgemm panics with a message naming the offending argument when the
// arguments of Sgemm or SgemmSerial are inconsistent. It
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
	checkMatrix(fn, "a", len(a), ar, ac, lda)
	checkMatrix(fn, "b", len(b), br, bc, ldb)
	checkMatrix(fn, "c", len(c), m, n, ldc)
}

// checkMatrix panics, naming fn and the matrix, unless length elements
// with row stride ld hold rows×cols (its stride is named "ld"+name).
func checkMatrix(fn, name string, length, rows, cols, ld int) {
	if ld < max(1, cols) { // checkLd's test, without building "ld"+name on every call
		checkLd(fn, "ld"+name, ld, cols)
	}
	checkLen(fn, name, length, rows, cols, ld)
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
