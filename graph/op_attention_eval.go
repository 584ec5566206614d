package graph

import (
	"fmt"
	"hash"
	"runtime"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
)

// AttentionEval is Attention for an inference graph that needs no attention
// maps: the same qkv → output, computed without keeping the probabilities.
// The work is split over the cores by (image, head, block of query rows):
// each unit computes its rows' scores S = scale·Q_rows·Kᵀ into a small
// per-goroutine scratch, takes their softmax there and multiplies by V, so
// the probabilities never leave the cache and one image's three heads
// (ViT-Ti) still fill two or more cores. Row blocks are used only when there
// are too few (image, head) pairs to go round; each output row is the same
// dot products as Attention's, so the two agree to float rounding
// (TestAttentionEvalMatchesAttention). It is meant for graphs without a
// backward pass, and AttentionProbs refuses its node.
// WithPrecision(BF16) makes its two products bfloat16 ones, as Attention's.
func AttentionEval(qkv *G.Node, batch, tokens, heads int, opts ...OpOption) (*G.Node, error) {
	return AttentionEvalFirst(qkv, batch, tokens, heads, tokens, opts...)
}

// AttentionEvalFirst is AttentionEval for the first queries query rows of
// each image only (keys and values are all tokens): a (B·queries, D)
// output, each row what AttentionEval gives for it. With queries 1 it is
// the class token's attention, all that a last block feeding a class-token
// readout needs.
func AttentionEvalFirst(qkv *G.Node, batch, tokens, heads, queries int, opts ...OpOption) (*G.Node, error) {
	if queries < 1 || queries > tokens {
		return nil, fmt.Errorf("AttentionEval: %d query rows of %d tokens", queries, tokens)
	}
	s := qkv.Shape()
	if qkv.Dims() != 2 || s[0] != batch*tokens || s[1]%3 != 0 {
		return nil, fmt.Errorf("AttentionEval: want qkv (%d·%d, 3D), got %v", batch, tokens, s)
	}
	d := s[1] / 3
	if heads <= 0 || d%heads != 0 {
		return nil, fmt.Errorf("AttentionEval: embed dim %d not divisible by %d heads", d, heads)
	}
	bf16, err := bf16Of("AttentionEval", qkv.Dtype(), opts)
	if err != nil {
		return nil, err
	}
	op := &attentionEvalOp{attentionOp: attentionOp{opBase: newOpBase(), batch: batch, tokens: tokens, heads: heads, dim: d, bf16: bf16}, queries: queries}
	return G.ApplyOp(op, qkv)
}

// attentionEvalOp shares attentionOp's shape and scale; only Do differs.
type attentionEvalOp struct {
	attentionOp
	queries int // query rows per image: the first ones
}

func (op *attentionEvalOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.batch * op.queries, op.dim}, nil
}

// attnPacks holds K and V packed per (image, head) for one AttentionEval
// run. They live only during the run, so they come from a pool shared by
// every AttentionEval op (a graph has one per block, and a serving lane
// several graphs) rather than staying with each op.
type attnPacks struct{ k, v []*kernels.PackedB }

var attnPackPool = sync.Pool{New: func() any { return new(attnPacks) }}

func (op *attentionEvalOp) outBuffer() *buffer { return &op.out }
func (op *attentionEvalOp) Arity() int         { return 1 }
func (op *attentionEvalOp) Type() hm.Type      { return fnType(2, 2) }

func (op *attentionEvalOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("AttentionEval", vs, 1)
	if err != nil {
		return nil, err
	}
	qkv := in[0]
	if !qkv.Shape().Eq(tensor.Shape{op.batch * op.tokens, 3 * op.dim}) {
		return nil, fmt.Errorf("AttentionEval: qkv is %v, want (%d, %d)", qkv.Shape(), op.batch*op.tokens, 3*op.dim)
	}
	y := op.out.get(qkv.Dtype(), op.batch*op.queries, op.dim)
	blocks := attnRowBlocks(op.batch*op.heads, op.queries, runtime.GOMAXPROCS(0))
	switch qkv.Dtype() {
	case tensor.Float32:
		op.forward32(data[float32](y), data[float32](qkv), blocks)
	default:
		attnEvalForward(op, data[float64](y), data[float64](qkv), blocks)
	}
	return y, nil
}

// attnMinRows is the fewest query rows a unit of AttentionEval gets: below
// it the repeated packing of K per unit outweighs the better balance.
const attnMinRows = 24

// attnRowBlocks is how many blocks of query rows each (image, head) pair is
// cut into so that pairs·blocks gives each of workers about eight units
// (dynamic hand-out then balances within an eighth), blocks of at least
// attnMinRows rows.
func attnRowBlocks(pairs, tokens, workers int) int {
	if workers <= 1 {
		return 1
	}
	want := (8*workers + pairs - 1) / pairs
	return max(1, min(want, tokens/attnMinRows))
}

// attnBlockRows is the query rows of each of about blocks blocks of
// queries rows: an even cut rounded up to a multiple of tile, the rows the
// product's micro-kernel computes at once, so that no block but the last
// ends in a partial tile (a partial tile costs a whole one). ViT-Ti's 197
// rows in 6 blocks are 5 of 36 and one of 17 (33 tiles), not 6 of 33 (36
// tiles). Every row gets the same dot products, however the rows are cut.
func attnBlockRows(queries, blocks, tile int) int {
	rows := (queries + blocks - 1) / blocks
	if tile > 1 {
		rows = (rows + tile - 1) / tile * tile
	}
	return min(rows, queries)
}

// forward32 is attnEvalForward for float32 with K and V packed first, once
// per (image, head) pair, into the micro-kernel's panels: every row block
// of the pair then reads them contiguously, instead of packing Kᵀ again per
// block and reading V at qkv's row stride. The sums are attnEvalForward's.
func (op *attentionEvalOp) forward32(y, qkv []float32, blocks int) {
	t, nh, d := op.tokens, op.heads, op.dim
	hd, scale := d/nh, float32(op.scale())
	pairs := op.batch * nh
	pk := attnPackPool.Get().(*attnPacks)
	defer attnPackPool.Put(pk)
	for len(pk.k) < pairs {
		pk.k, pk.v = append(pk.k, nil), append(pk.v, nil)
	}
	packK, packV := pk.k[:pairs], pk.v[:pairs]
	pack := kernels.PackBInto
	if op.bf16 {
		pack = kernels.PackBBF16Into // SgemmPackedSerial then gives SgemmBF16Serial's bits
	}
	// K and V are packed as units of their own (2·pairs of them), so that
	// an odd number of pairs (ViT-Ti's three heads) still splits evenly.
	parallelFor(2*pairs, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			i := u / 2
			base := (i/nh)*t*3*d + (i%nh)*hd
			if u%2 == 0 {
				packK[i] = pack(packK[i], true, hd, t, qkv[base+d:], 3*d) // op(B) = Kᵀ
			} else {
				packV[i] = pack(packV[i], false, t, hd, qkv[base+2*d:], 3*d)
			}
		}
	})
	nq := op.queries
	rows := attnBlockRows(nq, blocks, packK[0].RowTile())
	forQueryBlocks(op, rows, func(p []float32, pair, b, h, r0, r int) {
		kernels.SgemmPackedSerial(r, scale, qkv[(b*t+r0)*3*d+h*hd:], 3*d, packK[pair], p, t) // S = scale·Q·Kᵀ
		kernels.SoftmaxRows(p, r, t)
		kernels.SgemmPackedSerial(r, 1, p, t, packV[pair], y[(b*nq+r0)*d+h*hd:], d) // O = P·V
	})
}

// attnEvalForward writes the attention output y from qkv, each (image,
// head) pair's first op.queries query rows cut into blocks equal blocks.
func attnEvalForward[T Float](op *attentionEvalOp, y, qkv []T, blocks int) {
	t, nh, d, nq := op.tokens, op.heads, op.dim, op.queries
	hd, scale := d/nh, T(op.scale())
	forQueryBlocks(op, attnBlockRows(nq, blocks, 1), func(p []T, _, b, h, r0, r int) {
		base := b * t * 3 * d
		q := qkv[base+r0*3*d+h*hd:]
		gemmSerial(false, false, true, r, t, hd, scale, q, 3*d, qkv[base+d+h*hd:], 3*d, 0, p, t) // S = scale·Q·Kᵀ
		softmax(p, r, t)
		gemmSerial(false, false, false, r, hd, t, 1, p, t, qkv[base+2*d+h*hd:], 3*d, 0, y[(b*nq+r0)*d+h*hd:], d) // O = P·V
	})
}

// forQueryBlocks cuts each (image b, head h) pair's first op.queries query
// rows into blocks of rows rows (the last one shorter) and runs body for
// every (pair, block) over the cores, with the block's rows [r0, r0+r) and
// a scratch p of r·tokens floats for its scores.
func forQueryBlocks[T Float](op *attentionEvalOp, rows int, body func(p []T, pair, b, h, r0, r int)) {
	t, nh, nq := op.tokens, op.heads, op.queries
	blocks := (nq + rows - 1) / rows
	parallelFor(op.batch*nh*blocks, func(lo, hi int) {
		sp := getScratch[T](rows * t)
		defer putScratch(sp)
		for u := lo; u < hi; u++ {
			pair, blk := u/blocks, u%blocks
			r0 := blk * rows
			if r := min(rows, nq-r0); r > 0 {
				body((*sp)[:r*t], pair, pair/nh, pair%nh, r0, r)
			}
		}
	})
}

func (op *attentionEvalOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "AttentionEval(B%d,T%d,H%d,D%d,Q%d%s)", op.batch, op.tokens, op.heads, op.dim, op.queries, precisionTag(op.bf16))
	op.writeID(h)
}
func (op *attentionEvalOp) Hashcode() uint32 { return hashOf(op) }
func (op *attentionEvalOp) String() string   { return fmt.Sprintf("AttentionEval(h=%d)", op.heads) }
