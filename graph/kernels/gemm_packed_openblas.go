//go:build openblas

package kernels

// packB keeps op(B) as a plain row-major k×n copy: OpenBLAS packs by itself.
func packB(transB bool, k, n int, b []float32, ldb int) *PackedB {
	p := &PackedB{k: k, n: n, rows: make([]float32, k*n)}
	for i := 0; i < k; i++ {
		for j := 0; j < n; j++ {
			if transB {
				p.rows[i*n+j] = b[j*ldb+i]
			} else {
				p.rows[i*n+j] = b[i*ldb+j]
			}
		}
	}
	return p
}

func sgemmPacked(m int, a []float32, lda int, b *PackedB, c []float32, ldc int) {
	sgemm(false, false, m, b.n, b.k, 1, a, lda, b.rows, b.n, 0, c, ldc, true)
}
