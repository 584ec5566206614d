//go:build openblas

package kernels

// packB keeps op(B) as a plain row-major k×n copy: OpenBLAS packs by itself.
func packB(p *PackedB, transB bool, k, n int, b []float32, ldb int) {
	p.k, p.n = k, n
	if cap(p.rows) < k*n {
		p.rows = make([]float32, k*n)
	}
	p.rows = p.rows[:k*n]
	for i := 0; i < k; i++ {
		for j := 0; j < n; j++ {
			if transB {
				p.rows[i*n+j] = b[j*ldb+i]
			} else {
				p.rows[i*n+j] = b[i*ldb+j]
			}
		}
	}
}

func sgemmPacked(m int, a []float32, lda int, b *PackedB, c []float32, ldc int) {
	sgemm(false, false, m, b.n, b.k, 1, a, lda, b.rows, b.n, 0, c, ldc, true)
}

func sgemmPackedSerial(m int, alpha float32, a []float32, lda int, b *PackedB, c []float32, ldc int) {
	sgemm(false, false, m, b.n, b.k, alpha, a, lda, b.rows, b.n, 0, c, ldc, false)
}
