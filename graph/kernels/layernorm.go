package kernels

import (
	"fmt"
	"math"
)

// LayerNormRows normalises each row of the rows×cols matrix x as PyTorch's
// LayerNorm does (biased variance):
//
//	mean_r = Σ_c x/cols,  rstd_r = 1/√(Σ_c (x−mean_r)²/cols + eps)
//	y[r, c] = (x[r, c] − mean_r)·rstd_r·w[c] + b[c]
//
// and saves mean and rstd (length rows) for LayerNormBackwardRows. w and b
// have length cols; nil means ones and zeros. y may alias x.
func LayerNormRows(y, mean, rstd, x, w, b []float32, rows, cols int, eps float32) {
	const fn = "LayerNormRows"
	checkRowsCols(fn, rows, cols)
	checkLens(fn, rows*cols, "y,x", len(y), len(x))
	layerNormRows(fn, y, nil, mean, rstd, x, w, b, rows, cols, eps)
}

// LayerNormRowsWords is LayerNormRows with y kept as bfloat16 words:
// y[r, c] = ToBF16 of LayerNormRows' value, for a normalised activation
// that only bfloat16 products read (SgemmPackedThenWords, SgemmBF16Words).
// mean and rstd are LayerNormRows'.
func LayerNormRowsWords(y []uint16, mean, rstd, x, w, b []float32, rows, cols int, eps float32) {
	const fn = "LayerNormRowsWords"
	checkRowsCols(fn, rows, cols)
	checkLens(fn, rows*cols, "y,x", len(y), len(x))
	layerNormRows(fn, nil, y, mean, rstd, x, w, b, rows, cols, eps)
}

// layerNormRows is LayerNormRows into y, or, when y is nil, into the
// words yw through a row of float32.
func layerNormRows(fn string, y []float32, yw []uint16, mean, rstd, x, w, b []float32, rows, cols int, eps float32) {
	checkLens(fn, rows, "mean,rstd", len(mean), len(rstd))
	w, b = affineOrDefault(fn, w, b, cols)
	if cols == 0 {
		return
	}
	if !(eps >= 0) {
		panic(fmt.Sprintf("kernels.%s: eps = %g, want ≥ 0", fn, eps))
	}
	inv := 1 / float32(cols)
	forRows(rows, cols, func(lo, hi int) {
		var row []float32
		if y == nil {
			row = make([]float32, cols)
		}
		for r := lo; r < hi; r++ {
			xr := x[r*cols : (r+1)*cols]
			m := sumVec(xr) * inv
			v := sumSqDevVec(xr, m) * inv
			rs := float32(1 / math.Sqrt(float64(v+eps)))
			mean[r], rstd[r] = m, rs
			if y != nil {
				lnForwardVec(y[r*cols:(r+1)*cols], xr, w, b, m, rs)
				continue
			}
			lnForwardVec(row, xr, w, b, m, rs)
			WordsBF16(yw[r*cols:(r+1)*cols], row)
		}
	})
}

// LayerNormBackwardRows computes the gradients of LayerNormRows from the
// output gradient dy and the saved mean and rstd:
//
//	x̂ = (x−mean)·rstd,  g = dy·w
//	dx = rstd·(g − mean_c(g) − x̂·mean_c(g·x̂))      (overwritten)
//	dw += Σ_r dy·x̂,  db += Σ_r dy                     (accumulated)
//
// dw and db may be nil (not wanted), w nil means ones. dx may alias dy.
// The dw and db sums do not depend on the number of cores.
func LayerNormBackwardRows(dx, dw, db, dy, x, mean, rstd, w []float32, rows, cols int) {
	layerNormBackward("LayerNormBackwardRows", dx, dw, db, dy, x, mean, rstd, w, nil, rows, cols)
}

// LayerNormBackwardRowsAdd is [LayerNormBackwardRows] that also adds res to
// dx, row by row in the same pass: dx = LayerNorm's dx + res, one float32
// addition per element, so the result is bit for bit that of a separate
// elementwise add. It is the gradient at a residual fork, where x feeds
// both the LayerNorm and the residual sum whose gradient is res. res has
// length rows·cols and must not alias dx or dy.
func LayerNormBackwardRowsAdd(dx, dw, db, dy, x, mean, rstd, w, res []float32, rows, cols int) {
	checkLens("LayerNormBackwardRowsAdd", rows*cols, "res", len(res))
	layerNormBackward("LayerNormBackwardRowsAdd", dx, dw, db, dy, x, mean, rstd, w, res, rows, cols)
}

// layerNormBackward is LayerNormBackwardRows, adding res to dx unless res is nil.
func layerNormBackward(fn string, dx, dw, db, dy, x, mean, rstd, w, res []float32, rows, cols int) {
	checkRowsCols(fn, rows, cols)
	checkLens(fn, rows*cols, "dx,dy,x", len(dx), len(dy), len(x))
	checkLens(fn, rows, "mean,rstd", len(mean), len(rstd))
	w, _ = affineOrDefault(fn, w, nil, cols)
	if dw != nil {
		checkLens(fn, cols, "dw", len(dw))
	} else {
		dw = make([]float32, cols)
	}
	if db != nil {
		checkLens(fn, cols, "db", len(db))
	} else {
		db = make([]float32, cols)
	}
	if cols == 0 {
		return
	}
	inv := 1 / float32(cols)
	reduceRows(rows, cols, [][]float32{dw, db}, func(lo, hi int, acc [][]float32) {
		for r := lo; r < hi; r++ {
			o := r * cols
			xr, dyr := x[o:o+cols], dy[o:o+cols]
			sg, sgx := lnBackwardSumsVec(dyr, xr, w, acc[0], acc[1], mean[r], rstd[r])
			lnBackwardDxVec(dx[o:o+cols], dyr, xr, w, mean[r], rstd[r], sg*inv, sgx*inv)
			if res != nil {
				addVec(dx[o:o+cols], res[o:o+cols])
			}
		}
	})
}

// affineOrDefault checks w and b (length cols) and replaces nil ones by
// ones and zeros.
func affineOrDefault(fn string, w, b []float32, cols int) ([]float32, []float32) {
	if w == nil {
		w = make([]float32, cols)
		for i := range w {
			w[i] = 1
		}
	} else {
		checkLens(fn, cols, "w", len(w))
	}
	if b == nil {
		b = make([]float32, cols)
	} else {
		checkLens(fn, cols, "b", len(b))
	}
	return w, b
}
