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

func sgemmPacked(m int, a []float32, lda int, b *PackedB, c []float32, ldc int, epi func(i0, i1, j0, j1 int)) {
	sgemm(false, false, m, b.n, b.k, 1, a, lda, b.rows, b.n, 0, c, ldc, true)
	if epi != nil {
		parallelFor(m, splitGrain(m, 4, 1), 1, func(lo, hi int) { epi(lo, hi, 0, b.n) })
	}
}

func sgemmPackedSerial(m int, alpha float32, a []float32, lda int, b *PackedB, c []float32, ldc int) {
	sgemm(false, false, m, b.n, b.k, alpha, a, lda, b.rows, b.n, 0, c, ldc, false)
}
