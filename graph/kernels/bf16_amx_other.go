//go:build !amd64 || purego

package kernels

// hasAMX is false: no assembly is built here.
func hasAMX() bool { return false }

// pickTiles is nil: the bfloat16 products run on the emulation here.
func pickTiles(env string) *pairTiles { return nil }

// sgemmBF16AMX is never called here (pickTiles gives nil).
func sgemmBF16AMX(pt *pairTiles, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	panic("kernels: no AMX in this build")
}

// amxPackB is never called here (pickTiles gives nil).
func amxPackB(pt *pairTiles, dst []uint32, transB bool, k, n int, b []float32, ldb int) []uint32 {
	panic("kernels: no AMX in this build")
}

// amxRunPacked is never called here (pickTiles gives nil).
func amxRunPacked(pt *pairTiles, m, n, k int, alpha float32, a []float32, lda int, bw []uint32, c []float32, ldc int, par bool, epi func(i0, i1, j0, j1 int)) {
	panic("kernels: no AMX in this build")
}

// amxRunPackedWords is never called here (pickTiles gives nil).
func amxRunPackedWords(pt *pairTiles, m, n, k int, a []uint16, lda int, bw []uint32, c []float32, ldc int, par bool, epi func(i0, i1, j0, j1 int)) {
	panic("kernels: no AMX in this build")
}

// wordsBF16 is never called here (pickTiles gives nil).
func wordsBF16(dst []uint16, src []float32) { panic("kernels: no AMX in this build") }

// sgemmBF16AMXThen is never called here (pickTiles gives nil).
func sgemmBF16AMXThen(pt *pairTiles, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool, epi func(i0, i1, j0, j1 int)) {
	panic("kernels: no AMX in this build")
}

// allPairedTiles is empty here.
func allPairedTiles() []*pairTiles { return nil }

// hasDP is false: no assembly is built here.
func hasDP() bool { return false }

// sgemmBF16AMXOf is never called here (pickTiles gives nil).
func sgemmBF16AMXOf(pt *pairTiles, transA, transB bool, m, n, k int, alpha float32, a, b BF16Operand, beta float32, c []float32, ldc int, parallel bool) {
	panic("kernels: no AMX in this build")
}
