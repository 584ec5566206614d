package kernels

import (
	"runtime"
	"sync"
)

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
//
// The sums are reduceRows': rows in fixed chunks, each chunk's partial sums
// added to dst in chunk order. Each column's sum is independent of the
// others', so the cores share out (chunk, column block) pieces: TINY's bias
// gradients (6,400 rows of 64 columns, seven chunks) would otherwise use
// seven cores at most.
func ColSum(dst, x []float32, rows, cols int) {
	checkRowsCols("ColSum", rows, cols)
	checkLens("ColSum", rows*cols, "x", len(x))
	checkLens("ColSum", cols, "dst", len(dst))
	step := reduceChunkRows(cols)
	chunks := (rows + step - 1) / step
	if chunks <= 1 {
		for r := 0; r < rows; r++ {
			addVec(dst, x[r*cols:(r+1)*cols])
		}
		return
	}
	width := colBlockWidth(cols, chunks)
	blocks := (cols + width - 1) / width
	withPartials(chunks, [][]float32{dst}, cols, func(part func(c, d int) []float32) {
		parallelFor(chunks*blocks, 1, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				c, j0 := i/blocks, i%blocks*width
				j1 := min(j0+width, cols)
				acc := part(c, 0)[j0:j1]
				clear(acc)
				for r := c * step; r < min((c+1)*step, rows); r++ {
					addVec(acc, x[r*cols+j0:r*cols+j1])
				}
			}
		})
	})
}

// colBlockWidth is the columns of ColSum's pieces: all of them when the
// chunks alone give every core four, else blocks of whole 64-byte lines
// (16 floats), narrower until they do.
func colBlockWidth(cols, chunks int) int {
	want := 4 * runtime.GOMAXPROCS(0)
	if chunks >= want {
		return cols
	}
	per := (want + chunks - 1) / chunks // blocks per chunk
	return min(cols, max(16, (cols+per-1)/per+15)/16*16)
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
	withPartials(chunks, dsts, cols, func(part func(c, d int) []float32) {
		parallelFor(chunks, 1, 1, func(lo, hi int) {
			for c := lo; c < hi; c++ {
				acc := make([][]float32, len(dsts))
				for d := range acc {
					acc[d] = part(c, d)
					clear(acc[d])
				}
				body(c*step, min((c+1)*step, rows), acc)
			}
		})
	})
}

// withPartials lends fill a partial buffer of cols floats for every chunk
// and destination, part(c, d) (their contents are whatever they held: fill
// must set them), then adds the partials to dsts in chunk order, each
// element's sum in that order whatever the split: the cores share out
// blocks of columns.
func withPartials(chunks int, dsts [][]float32, cols int, fill func(part func(c, d int) []float32)) {
	buf := partialBuffers.Get().(*[]float32)
	defer partialBuffers.Put(buf)
	if n := chunks * len(dsts) * cols; cap(*buf) < n {
		*buf = make([]float32, n)
	}
	partial := (*buf)[:chunks*len(dsts)*cols]
	part := func(c, d int) []float32 {
		o := (c*len(dsts) + d) * cols
		return partial[o : o+cols]
	}
	fill(part)
	add := func(j0, j1 int) {
		for c := 0; c < chunks; c++ {
			for d, dst := range dsts {
				addVec(dst[j0:j1], part(c, d)[j0:j1])
			}
		}
	}
	if chunks*len(dsts)*cols < parallelMinElems {
		add(0, cols)
		return
	}
	parallelFor(cols, splitGrain(cols, 4, 64), 16, add)
}

// partialBuffers holds reduceRows' and ColSum's partial sums between calls.
var partialBuffers = sync.Pool{New: func() any { return new([]float32) }}
