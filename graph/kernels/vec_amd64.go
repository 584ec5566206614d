//go:build amd64 && !purego

package kernels

// Dispatch of the vector primitives: AVX2+FMA assembly (vec_amd64.s) when
// the CPU has it, the Go versions otherwise. Slices are non-empty when the
// assembly is called, and the lengths were checked by the exported API.

//go:noescape
func expAVX2(dst, src *float32, n int)

//go:noescape
func geluAVX2(dst, src *float32, n int)

//go:noescape
func geluBackwardAVX2(dx, x, dy *float32, n int)

//go:noescape
func expAVX512(dst, src *float32, n int)

//go:noescape
func geluAVX512(dst, src *float32, n int)

//go:noescape
func geluBackwardAVX512(dx, x, dy *float32, n int)

//go:noescape
func softmaxRowsAVX512(x *float32, rows, cols int)

// The reductions follow lanes.go's definition; n > 0.

//go:noescape
func sumAVX2(x *float32, n int) float32

//go:noescape
func dotAVX2(x, y *float32, n int) float32

//go:noescape
func sumSqDevAVX2(x *float32, n int, mean float32) float32

//go:noescape
func maxAVX2(x *float32, n int) float32

//go:noescape
func expSubSumAVX2(x *float32, n int, m float32) float32

//go:noescape
func axpyAVX2(alpha float32, x, y *float32, n int)

//go:noescape
func scaleAVX2(alpha float32, x *float32, n int)

//go:noescape
func addAVX2(dst, src *float32, n int)

//go:noescape
func biasGELUAVX2(y, b *float32, n int)

//go:noescape
func biasResidualAVX2(y, b, r *float32, n int)

// biasGELUVec sets y = GELU(y + b) in one pass where the CPU has AVX2 (and
// not AVX-512, whose GELU runs on its own kernel) and reports whether it
// did: addVec's sum and geluVec's arithmetic, the same bits.
func biasGELUVec(y, b []float32) bool {
	if !hasAVX2 || hasAVX512 || len(y) == 0 {
		return false
	}
	_ = b[len(y)-1]
	biasGELUAVX2(&y[0], &b[0], len(y))
	return true
}

// biasResidualVec sets y = r + (y + b) in one pass where the CPU has AVX2
// and reports whether it did: addVec's sum, then axpyVec(1, r, y)'s.
func biasResidualVec(y, b, r []float32) bool {
	if !hasAVX2 || len(y) == 0 {
		return false
	}
	_, _ = b[len(y)-1], r[len(y)-1]
	biasResidualAVX2(&y[0], &b[0], &r[0], len(y))
	return true
}

//go:noescape
func softmaxBackwardAVX2(dx, y, dy *float32, n int, s float32)

//go:noescape
func lnForwardAVX2(y, x, w, b *float32, n int, mean, rstd float32)

//go:noescape
func lnBackwardSumsAVX2(dy, x, w, dw, db *float32, n int, mean, rstd float32) (sg, sgx float32)

//go:noescape
func lnBackwardDxAVX2(dx, dy, x, w *float32, n int, mean, rstd, c1, c2 float32)

func expVec(dst, src []float32) {
	if !hasAVX2 || len(src) == 0 {
		expGo(dst, src)
		return
	}
	_ = dst[len(src)-1]
	if hasAVX512 {
		expAVX512(&dst[0], &src[0], len(src))
		return
	}
	expAVX2(&dst[0], &src[0], len(src))
}

func geluVec(dst, src []float32) {
	if !hasAVX2 || len(src) == 0 {
		geluGo(dst, src)
		return
	}
	_ = dst[len(src)-1]
	if hasAVX512 {
		geluAVX512(&dst[0], &src[0], len(src))
		return
	}
	geluAVX2(&dst[0], &src[0], len(src))
}

func geluBackwardVec(dx, x, dy []float32) {
	if !hasAVX2 || len(x) == 0 {
		geluBackwardGo(dx, x, dy)
		return
	}
	_, _ = dx[len(x)-1], dy[len(x)-1]
	if hasAVX512 {
		geluBackwardAVX512(&dx[0], &x[0], &dy[0], len(x))
		return
	}
	geluBackwardAVX2(&dx[0], &x[0], &dy[0], len(x))
}

func sumVec(x []float32) float32 {
	if !hasAVX2 || len(x) == 0 {
		return sumGo(x)
	}
	return sumAVX2(&x[0], len(x))
}

func dotVec(x, y []float32) float32 {
	if !hasAVX2 || len(x) == 0 {
		return dotGo(x, y)
	}
	_ = y[len(x)-1]
	return dotAVX2(&x[0], &y[0], len(x))
}

func sumSqDevVec(x []float32, mean float32) float32 {
	if !hasAVX2 || len(x) == 0 {
		return sumSqDevGo(x, mean)
	}
	return sumSqDevAVX2(&x[0], len(x), mean)
}

func maxVec(x []float32) float32 {
	if !hasAVX2 || len(x) == 0 {
		return maxGo(x)
	}
	return maxAVX2(&x[0], len(x))
}

func expSubSumVec(x []float32, m float32) float32 {
	if !hasAVX2 || len(x) == 0 {
		return expSubSumGo(x, m)
	}
	return expSubSumAVX2(&x[0], len(x), m)
}

func axpyVec(alpha float32, x, y []float32) {
	if !hasAVX2 || len(x) == 0 {
		axpyGo(alpha, x, y)
		return
	}
	_ = y[len(x)-1]
	axpyAVX2(alpha, &x[0], &y[0], len(x))
}

func scaleVec(alpha float32, x []float32) {
	if !hasAVX2 || len(x) == 0 {
		scaleGo(alpha, x)
		return
	}
	scaleAVX2(alpha, &x[0], len(x))
}

func addVec(dst, src []float32) {
	if !hasAVX2 || len(src) == 0 {
		addGo(dst, src)
		return
	}
	_ = dst[len(src)-1]
	addAVX2(&dst[0], &src[0], len(src))
}

func softmaxBackwardVec(dx, y, dy []float32, s float32) {
	if !hasAVX2 || len(y) == 0 {
		softmaxBackwardGo(dx, y, dy, s)
		return
	}
	_, _ = dx[len(y)-1], dy[len(y)-1]
	softmaxBackwardAVX2(&dx[0], &y[0], &dy[0], len(y), s)
}

func lnForwardVec(y, x, w, b []float32, mean, rstd float32) {
	if !hasAVX2 || len(x) == 0 {
		lnForwardGo(y, x, w, b, mean, rstd)
		return
	}
	_, _, _ = y[len(x)-1], w[len(x)-1], b[len(x)-1]
	lnForwardAVX2(&y[0], &x[0], &w[0], &b[0], len(x), mean, rstd)
}

func lnBackwardSumsVec(dy, x, w, dw, db []float32, mean, rstd float32) (float32, float32) {
	if !hasAVX2 || len(x) == 0 {
		return lnBackwardSumsGo(dy, x, w, dw, db, mean, rstd)
	}
	n := len(x)
	_, _, _, _ = dy[n-1], w[n-1], dw[n-1], db[n-1]
	return lnBackwardSumsAVX2(&dy[0], &x[0], &w[0], &dw[0], &db[0], n, mean, rstd)
}

func lnBackwardDxVec(dx, dy, x, w []float32, mean, rstd, c1, c2 float32) {
	if !hasAVX2 || len(x) == 0 {
		lnBackwardDxGo(dx, dy, x, w, mean, rstd, c1, c2)
		return
	}
	n := len(x)
	_, _, _ = dx[n-1], dy[n-1], w[n-1]
	lnBackwardDxAVX2(&dx[0], &dy[0], &x[0], &w[0], n, mean, rstd, c1, c2)
}

// softmaxRowsVec applies the softmax to rows rows of cols > 0 elements.
func softmaxRowsVec(x []float32, rows, cols int) {
	if rows == 0 {
		return
	}
	if hasAVX512 {
		_ = x[rows*cols-1]
		softmaxRowsAVX512(&x[0], rows, cols)
		return
	}
	softmaxRowsGeneric(x, rows, cols)
}
