package kernels

// Exp sets dst[i] = e^src[i]. The relative error is below 2e-7 for results
// in the normal range; results below 2^-126 lose relative precision and
// underflow to 0 under e^-103.9; above ln(MaxFloat32) it is +Inf; NaN
// propagates. dst and src may be the same slice; their lengths must match.
func Exp(dst, src []float32) {
	checkLens("Exp", len(src), "dst", len(dst))
	forElems(len(src), func(lo, hi int) { expVec(dst[lo:hi], src[lo:hi]) })
}

// SoftmaxRows replaces each of the rows rows of cols elements in x by its
// softmax, e^(x−max)/Σe^(x−max). len(x) must be rows·cols.
func SoftmaxRows(x []float32, rows, cols int) {
	checkRowsCols("SoftmaxRows", rows, cols)
	checkLens("SoftmaxRows", rows*cols, "x", len(x))
	if cols == 0 {
		return
	}
	if serialRows(rows, cols) { // no closure: attention calls this per head, thousands of times a step
		softmaxRowsVec(x, rows, cols)
		return
	}
	forRows(rows, cols, func(lo, hi int) { softmaxRowsVec(x[lo*cols:hi*cols], hi-lo, cols) })
}

// softmaxRowsGeneric is SoftmaxRows on the row primitives.
func softmaxRowsGeneric(x []float32, rows, cols int) {
	for r := 0; r < rows; r++ {
		row := x[r*cols : (r+1)*cols]
		s := expSubSumVec(row, maxVec(row))
		scaleVec(1/s, row)
	}
}

// SoftmaxBackwardRows writes the input gradient of SoftmaxRows given its
// output y and output gradient dy: dx = y·(dy − Σ dy·y), per row. dx may
// alias dy. All three slices have length rows·cols.
func SoftmaxBackwardRows(dx, y, dy []float32, rows, cols int) {
	checkRowsCols("SoftmaxBackwardRows", rows, cols)
	checkLens("SoftmaxBackwardRows", rows*cols, "dx,y,dy", len(dx), len(y), len(dy))
	if serialRows(rows, cols) { // no closure, as in SoftmaxRows
		softmaxBackwardRange(dx, y, dy, cols, 0, rows)
		return
	}
	forRows(rows, cols, func(lo, hi int) { softmaxBackwardRange(dx, y, dy, cols, lo, hi) })
}

// softmaxBackwardRange is SoftmaxBackwardRows on rows [lo, hi).
func softmaxBackwardRange(dx, y, dy []float32, cols, lo, hi int) {
	for r := lo; r < hi; r++ {
		o := r * cols
		yr, dyr := y[o:o+cols], dy[o:o+cols]
		softmaxBackwardVec(dx[o:o+cols], yr, dyr, dotVec(yr, dyr))
	}
}
