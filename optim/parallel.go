package optim

import (
	"sort"

	"github.com/vitgo/vit/internal/parallel"
)

// chunkElems is the size of the fixed pieces that the elementwise passes
// (AdamW, gradient scaling, finite checks, EMA) split the parameters into.
// A parameter is cut at multiples of chunkElems from its own start, so the
// pieces depend on the parameters alone, never on the number of cores; and
// every pass is elementwise, so its result is bit for bit the serial one.
const chunkElems = 1 << 15

// serialElems: below this many values in all a pass runs inline, where the
// goroutine hand-off would cost more than it saves.
const serialElems = 1 << 16

// piece is elements [lo, hi) of parameter p.
type piece struct{ p, lo, hi int }

// pieces cuts every parameter of lengths n into chunkElems pieces, in
// parameter order.
func pieces(n []int) []piece {
	var out []piece
	for p, l := range n {
		for lo := 0; lo < l; lo += chunkElems {
			out = append(out, piece{p, lo, min(lo+chunkElems, l)})
		}
	}
	return out
}

// forEach runs body(i) for i in [0, n) through [parallel.Run]; with total
// (the values the whole job touches) below serialElems, it runs them in
// order inline.
func forEach(n, total int, body func(i int)) {
	if total < serialElems {
		for i := 0; i < n; i++ {
			body(i)
		}
		return
	}
	parallel.Run(n, body)
}

// forPieces runs body over every chunkElems piece of the parameters whose
// lengths are n, in parallel (see [forEach]).
func forPieces(n []int, body func(pc piece)) {
	ps := pieces(n)
	total := 0
	for _, l := range n {
		total += l
	}
	forEach(len(ps), total, func(i int) { body(ps[i]) })
}

// gradLens returns the length of every parameter's gradient (0 when Frozen).
func gradLens(params []Param) []int {
	n := make([]int, len(params))
	for i, p := range params {
		n[i] = len(p.grad())
	}
	return n
}

// valueLens returns len(Value) of every parameter.
func valueLens(params []Param) []int {
	n := make([]int, len(params))
	for i, p := range params {
		n[i] = len(p.Value)
	}
	return n
}

// bySizeDesc returns the parameter indices, largest first, so that a
// per-parameter pass starts its longest jobs first.
func bySizeDesc(n []int) []int {
	idx := make([]int, len(n))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return n[idx[a]] > n[idx[b]] })
	return idx
}
