package kernels

// Elementwise and row-wise work is split over the cores once it is this
// large; below it the goroutine hand-off costs more than it saves.
const (
	parallelMinElems = 1 << 16
	chunkElems       = 1 << 14 // smallest piece handed to a goroutine
)

// forElems runs body over [0, n), split over the cores when n is large.
// Chunks start at multiples of 64 elements (whole cache lines).
func forElems(n int, body func(lo, hi int)) {
	if n < parallelMinElems {
		body(0, n)
		return
	}
	parallelFor(n, splitGrain(n, 4, chunkElems), 64, body)
}

// forRows runs body over rows [0, rows) of cols elements each, split over
// the cores when rows·cols is large.
func forRows(rows, cols int, body func(lo, hi int)) {
	if serialRows(rows, cols) {
		body(0, rows)
		return
	}
	minRows := max(1, chunkElems/max(cols, 1))
	parallelFor(rows, splitGrain(rows, 4, minRows), 1, body)
}

// serialRows reports whether forRows runs a (rows, cols) job inline.
func serialRows(rows, cols int) bool { return rows*cols < parallelMinElems || rows < 2 }

// reduceChunkRows is the row count of the fixed chunks that reductions over
// rows (ColSum, LayerNorm's dw and db) use: partial sums per chunk are added
// in chunk order, so results do not depend on the core count.
func reduceChunkRows(cols int) int { return max(1, 4*chunkElems/max(cols, 1)) }
