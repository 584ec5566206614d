package kernels

import (
	"math/bits"
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
	defer scratch.put(buf)
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

// sizedPool lends buffers by size class: a request of n elements takes a
// buffer of classSize(n) (n rounded up to an eighth of its power of two), so
// a small request never takes, and keeps alive, a large buffer, a large one
// never grows a small one into garbage, and rounding wastes at most 1/8.
// (One sync.Pool made every pooled buffer the size of the largest request,
// the bf16 weight gradient's 19 MB panels, once per borrower: 94 MiB of the
// ViT-S/16 bf16 step's peak RSS.) Each class is a free list under a mutex:
// unlike a sync.Pool, a buffer put back on one core is found by a get on
// any other (a sync.Pool's per-P slot misses it and allocates another), and
// a collection does not empty it, since the same products run every step.
type sizedPool[T any] struct {
	mu   sync.Mutex
	free map[int][]*[]T // by classSize
}

// sizedPoolKeep is the most buffers of one class a sizedPool keeps: one per
// core and a few the calling goroutine holds at once.
func sizedPoolKeep() int { return 2*runtime.GOMAXPROCS(0) + 4 }

// classSize is the size of the buffers that serve a request of n
// elements: n rounded up to a multiple of 2^(e−4), an eighth of 2^(e−1),
// where 2^(e−1) < n ≤ 2^e (n itself up to 8).
func classSize(n int) int {
	if n <= 8 {
		return max(n, 1)
	}
	q := 1 << (bits.Len(uint(n-1)) - 4)
	return (n + q - 1) / q * q
}

// get returns a buffer of at least n elements (len n), whatever it held.
func (p *sizedPool[T]) get(n int) *[]T {
	c := classSize(n)
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		buf := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.mu.Unlock()
		*buf = (*buf)[:n]
		return buf
	}
	p.mu.Unlock()
	b := make([]T, n, c)
	return &b
}

// put gives back a buffer of get (dropped when its class already keeps
// sizedPoolKeep).
func (p *sizedPool[T]) put(buf *[]T) {
	c := cap(*buf)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == nil {
		p.free = map[int][]*[]T{}
	}
	if len(p.free[c]) < sizedPoolKeep() {
		p.free[c] = append(p.free[c], buf)
	}
}

// scratch holds the float buffers lent for one call and kept between
// calls: reduceRows' partial sums, sgemmDepthSplit's partial products, the
// bf16 emulation's panels.
var scratch sizedPool[float32]

// borrowFloats lends n floats from scratch, whatever they held; the
// caller gives buf back with scratch.put once done with floats.
func borrowFloats(n int) (buf *[]float32, floats []float32) {
	buf = scratch.get(n)
	return buf, *buf
}

// words holds the word buffers of the bf16 products (packed operands).
var words sizedPool[uint32]

// borrowWords returns a pooled buffer of at least n words (len n); give it
// back with putWords.
func borrowWords(n int) *[]uint32 { return words.get(n) }

// putWords gives back a buffer of borrowWords.
func putWords(buf *[]uint32) { words.put(buf) }
