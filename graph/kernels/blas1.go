package kernels

// Axpy sets y += alpha·x. The lengths must match.
func Axpy(alpha float32, x, y []float32) {
	checkLens("Axpy", len(x), "y", len(y))
	forElems(len(x), func(lo, hi int) { axpyVec(alpha, x[lo:hi], y[lo:hi]) })
}

// Scale sets x *= alpha.
func Scale(alpha float32, x []float32) {
	forElems(len(x), func(lo, hi int) { scaleVec(alpha, x[lo:hi]) })
}

// Dot returns Σ x[i]·y[i], accumulated in float32 over 8 interleaved
// partial sums. The lengths must match.
func Dot(x, y []float32) float32 {
	checkLens("Dot", len(x), "y", len(y))
	return dotVec(x, y)
}

// AddBias adds bias to every row of the rows×cols matrix x:
// x[r·cols+c] += bias[c]. len(x) must be rows·cols and len(bias) cols.
func AddBias(x, bias []float32, rows, cols int) {
	checkRowsCols("AddBias", rows, cols)
	checkLens("AddBias", rows*cols, "x", len(x))
	checkLens("AddBias", cols, "bias", len(bias))
	forRows(rows, cols, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			addVec(x[r*cols:(r+1)*cols], bias)
		}
	})
}

// ColSum adds the column sums of the rows×cols matrix x to dst:
// dst[c] += Σ_r x[r·cols+c] (the bias gradient of a linear layer). The
// result does not depend on the number of cores. len(x) must be rows·cols
// and len(dst) cols.
func ColSum(dst, x []float32, rows, cols int) {
	checkRowsCols("ColSum", rows, cols)
	checkLens("ColSum", rows*cols, "x", len(x))
	checkLens("ColSum", cols, "dst", len(dst))
	reduceRows(rows, cols, [][]float32{dst}, func(lo, hi int, acc [][]float32) {
		for r := lo; r < hi; r++ {
			addVec(acc[0], x[r*cols:(r+1)*cols])
		}
	})
}

// reduceRows accumulates body's per-row contributions into dsts (each of
// length cols). Rows go in fixed chunks; with more than one chunk each
// gets zeroed partial buffers, filled in parallel and added to dsts in
// chunk order, so the sums do not depend on scheduling or core count.
func reduceRows(rows, cols int, dsts [][]float32, body func(lo, hi int, acc [][]float32)) {
	step := reduceChunkRows(cols)
	chunks := (rows + step - 1) / step
	if chunks <= 1 {
		body(0, rows, dsts)
		return
	}
	partial := make([]float32, chunks*len(dsts)*cols)
	part := func(c, d int) []float32 {
		o := (c*len(dsts) + d) * cols
		return partial[o : o+cols]
	}
	parallelFor(chunks, 1, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			acc := make([][]float32, len(dsts))
			for d := range acc {
				acc[d] = part(c, d)
			}
			body(c*step, min((c+1)*step, rows), acc)
		}
	})
	for c := 0; c < chunks; c++ {
		for d, dst := range dsts {
			addVec(dst, part(c, d))
		}
	}
}
