package kernels

import "github.com/vitgo/vit/internal/bufpool"

// Axpy sets y += alpha·x. The lengths must match.
func Axpy(alpha float32, x, y []float32) {
	checkLens("Axpy", len(x), "y", len(y))
	forElems(len(x), func(lo, hi int) { axpyVec(alpha, x[lo:hi], y[lo:hi]) })
}

// Scale sets x *= alpha.
func Scale(alpha float32, x []float32) {
	forElems(len(x), func(lo, hi int) { scaleVec(alpha, x[lo:hi]) })
}

// Dot returns Σ x[i]·y[i], each product fused into one of 16 interleaved
// float32 partial sums, which are then added in a fixed tree (see the
// package's Bits section). The lengths must match.
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
// The rows go in reduceRows' fixed chunks, whose count bounds how many
// cores share the sum (TINY's 6,400 rows of 64 columns: seven chunks).
// The columns of a chunk are not split: each piece would then read a
// strip of every row, touching every cache line of x once per piece
// instead of once in all.
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
	buf, partial := borrowFloats(chunks * len(dsts) * cols)
	defer scratch.Put(buf)
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

// scratch holds the float buffers lent for one call and kept between
// calls: reduceRows' partial sums, sgemmDepthSplit's partial products, the
// bf16 emulation's panels.
var scratch bufpool.Pool[float32]

// borrowFloats lends n floats from scratch, whatever they held; the
// caller gives buf back with scratch.Put once done with floats.
func borrowFloats(n int) (buf *[]float32, floats []float32) {
	buf = scratch.Get(n)
	return buf, *buf
}

// words holds the word buffers of the bf16 products (packed operands).
var words bufpool.Pool[uint32]

// borrowWords returns a pooled buffer of at least n words (len n); give it
// back with putWords.
func borrowWords(n int) *[]uint32 { return words.Get(n) }

// putWords gives back a buffer of borrowWords.
func putWords(buf *[]uint32) { words.Put(buf) }
