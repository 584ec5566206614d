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
	"github.com/vitgo/vit/internal/bufpool"
)

// Linear returns x·Wᵀ + b, PyTorch's nn.Linear on a matrix of rows.
//
// x is (M, K); w is (N, …) stored [out, in] as PyTorch does, its trailing
// dimensions flattened to K (so a conv weight [D, C, P, P] serves as a
// (D, C·P·P) matrix); b is (N) or nil. The backward pass uses sgemm transpose
// flags, never a materialised transpose, and the bias gradient is a column sum.
//
// WithPrecision(BF16) makes the forward product and both backward ones (dX
// and dW) bfloat16 products (kernels.SgemmBF16); the bias and its gradient
// stay float32. A bfloat16 Linear also takes an x kept as bfloat16 words
// (dtype Uint16, StoreBF16), which its forward and dW products read
// directly (kernels.SgemmPackedThenWords, kernels.SgemmBF16Words); dX is
// float32 as for any x. StoreBF16 (bf16 only) keeps the output itself as
// words, rounded block by block as the product finishes it, for an
// attention that reads it (qkv). With Recompute the backward pass computes
// the output again instead of keeping it.
func Linear(x, w, b *G.Node, opts ...OpOption) (*G.Node, error) {
	if x.Dims() != 2 || w.Dims() < 2 {
		return nil, fmt.Errorf("Linear: want x (M,K) and w (N,…), got %v and %v", x.Shape(), w.Shape())
	}
	k := x.Shape()[1]
	if kw := w.Shape()[1:].TotalSize(); kw != k {
		return nil, fmt.Errorf("Linear: x has %d columns but w %v has %d inputs", k, w.Shape(), kw)
	}
	dt, words := x.Dtype(), x.Dtype() == tensor.Uint16
	if words {
		dt = w.Dtype()
	}
	bf16, err := bf16Of("Linear", dt, opts)
	if err != nil {
		return nil, err
	}
	if words && !bf16 {
		return nil, fmt.Errorf("Linear: x is bfloat16 words (StoreBF16), which only a Linear of precision %s reads", BF16)
	}
	outWords, err := storesBF16("Linear", dt, opts)
	if err != nil {
		return nil, err
	}
	if outWords && !bf16 {
		return nil, fmt.Errorf("Linear: StoreBF16 needs precision %s", BF16)
	}
	op := &linearOp{opBase: newOpBase(), wRank: w.Dims(), bias: b != nil, bf16: bf16, words: words, outWords: outWords}
	op.recompute = recomputes(opts)
	if b == nil {
		return G.ApplyOp(op, x, w)
	}
	if b.Dims() != 1 || b.Shape()[0] != w.Shape()[0] {
		return nil, fmt.Errorf("Linear: bias %v does not match w %v", b.Shape(), w.Shape())
	}
	return G.ApplyOp(op, x, w, b)
}

// GELULinear returns GELU(u)·Wᵀ + b: GELU, then a bf16 Linear, in one op
// that never stores GELU(u). The forward rounds it to bfloat16 words in a
// pooled buffer for the product; the weight gradient recomputes them from
// u; dGELU(u) = dy·W is float32, and u's gradient is GELU's. An MLP's fc2
// so keeps no copy of its input between the passes, for one more GELU in
// the backward pass. Only WithPrecision(BF16) (words are what bf16
// products read); the bits are those of GELU and Linear. When u's Linear
// has Recompute, it keeps no u either: its backward pass reads u computed
// again. GELULinear itself refuses Recompute.
func GELULinear(u, w, b *G.Node, approx GELUApprox, opts ...OpOption) (*G.Node, error) {
	if approx != GELUExact && approx != GELUTanh {
		return nil, fmt.Errorf("GELULinear: unknown approximation %v", approx)
	}
	if u.Dims() != 2 || w.Dims() < 2 {
		return nil, fmt.Errorf("GELULinear: want u (M,K) and w (N,…), got %v and %v", u.Shape(), w.Shape())
	}
	k := u.Shape()[1]
	if kw := w.Shape()[1:].TotalSize(); kw != k {
		return nil, fmt.Errorf("GELULinear: u has %d columns but w %v has %d inputs", k, w.Shape(), kw)
	}
	bf16, err := bf16Of("GELULinear", u.Dtype(), opts)
	if err != nil {
		return nil, err
	}
	if !bf16 {
		return nil, fmt.Errorf("GELULinear: needs precision %s", BF16)
	}
	if recomputes(opts) {
		return nil, fmt.Errorf("GELULinear: Recompute is for the Linear that makes u, not for GELULinear")
	}
	op := &linearOp{opBase: newOpBase(), wRank: w.Dims(), bias: b != nil, bf16: true, act: &approx}
	if b == nil {
		return G.ApplyOp(op, u, w)
	}
	if b.Dims() != 1 || b.Shape()[0] != w.Shape()[0] {
		return nil, fmt.Errorf("GELULinear: bias %v does not match w %v", b.Shape(), w.Shape())
	}
	return G.ApplyOp(op, u, w, b)
}

type linearOp struct {
	opBase
	wRank int
	bias  bool
	bf16  bool // bfloat16 products (WithPrecision)
	words bool // x is bfloat16 words (StoreBF16)
	// outWords: the output is bfloat16 words (StoreBF16).
	outWords bool
	// act, when not nil: x is u and the product reads GELU(u)'s words,
	// made in a pooled buffer (GELULinear).
	act           *GELUApprox
	recomputeMark // Recompute
	out           buffer
}

var _ G.SDOp = (*linearOp)(nil)

func (op *linearOp) Arity() int {
	if op.bias {
		return 3
	}
	return 2
}

func (op *linearOp) Type() hm.Type {
	ranks := []int{2, op.wRank, 2}
	if op.bias {
		ranks = []int{2, op.wRank, 1, 2}
	}
	var words []int
	if op.words {
		words = append(words, 0)
	}
	if op.outWords {
		words = append(words, len(ranks)-1)
	}
	return wordsAt(ranks, words...)
}

func (op *linearOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, err := shapeOf("Linear", in, 0)
	if err != nil {
		return nil, err
	}
	w, err := shapeOf("Linear", in, 1)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{x[0], w[0]}, nil
}

func (op *linearOp) Do(vs ...G.Value) (G.Value, error) {
	if op.words || op.outWords || op.act != nil {
		return op.doWords(vs)
	}
	in, err := denses("Linear", vs, op.Arity())
	if err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	m, k, n := x.Shape()[0], x.Shape()[1], w.Shape()[0]
	if w.Shape().TotalSize() != n*k {
		return nil, fmt.Errorf("Linear: x %v and w %v do not fit", x.Shape(), w.Shape())
	}
	y := op.out.get(x.Dtype(), m, n)
	switch x.Dtype() {
	case tensor.Float32:
		linearForward(op.bf16, data[float32](y), data[float32](x), data[float32](w), biasData[float32](in, op.bias), m, n, k)
	default:
		linearForward(false, data[float64](y), data[float64](x), data[float64](w), biasData[float64](in, op.bias), m, n, k)
	}
	return y, nil
}

// doWords is Do for an x or an output of bfloat16 words: the weights
// packed for bfloat16 products, then SgemmPackedThenWords (x words) or
// SgemmPackedThen with the bias added per block, as linearBiasForward32
// does, and, for an output of words, each block rounded from a float32
// buffer (linearRows) as soon as it is done.
func (op *linearOp) doWords(vs []G.Value) (G.Value, error) {
	if len(vs) != op.Arity() {
		return nil, fmt.Errorf("Linear: want %d inputs, got %d", op.Arity(), len(vs))
	}
	var x *tensor.Dense
	var xw []uint16
	var err error
	if op.words {
		x, xw, err = wordsOf("Linear", vs[0])
	} else {
		x, err = dense("Linear", vs[0])
	}
	if err != nil {
		return nil, err
	}
	rest, err := denses("Linear", vs[1:], len(vs)-1)
	if err != nil {
		return nil, err
	}
	w := rest[0]
	if w.Dtype() != tensor.Float32 || (!op.words && x.Dtype() != tensor.Float32) {
		return nil, fmt.Errorf("Linear: bfloat16 words need float32 operands, got x %v and w %v", x.Dtype(), w.Dtype())
	}
	m, k, n := x.Shape()[0], x.Shape()[1], w.Shape()[0]
	if w.Shape().TotalSize() != n*k {
		return nil, fmt.Errorf("Linear: x %v and w %v do not fit", x.Shape(), w.Shape())
	}
	chunk := m // rows per product call
	if op.outWords || op.act != nil {
		chunk = linearChunkRows(m)
	}
	var gw []uint16 // with op.act, x is u and the product reads GELU(u)'s words, a chunk at a time
	if op.act != nil {
		buf := geluChunks.Get(chunk * k)
		defer geluChunks.Put(buf)
		gw = *buf
	}
	var y *tensor.Dense
	var yd []float32
	var yw []uint16
	if op.outWords {
		y = op.out.get(tensor.Uint16, m, n)
		yw = y.Data().([]uint16)
		chunk = linearChunkRows(m)
		buf := linearRows.Get(chunk * n)
		defer linearRows.Put(buf)
		yd = (*buf)[:chunk*n]
	} else {
		y = op.out.get(tensor.Float32, m, n)
		yd = data[float32](y)
	}
	var b []float32
	if op.bias {
		b = data[float32](rest[1])
	}
	base, cur := 0, yd // the first row of the chunk being computed, and its float32 rows
	epi := func(i0, i1, j0, j1 int) {
		for i := i0; i < i1; i++ {
			row := cur[i*n+j0 : i*n+j1]
			if b != nil {
				kernels.EpilogueRow(row, b[j0:j1], nil, false)
			}
			if yw != nil {
				kernels.WordsBF16(yw[(base+i)*n+j0:(base+i)*n+j1], row)
			}
		}
	}
	var p *kernels.PackedB
	if k > 0 {
		p = kernels.PackBBF16Into(packedWeights.Get().(*kernels.PackedB), true, k, n, data[float32](w), k)
		defer packedWeights.Put(p)
	}
	for base = 0; base < m; base += chunk {
		rows := min(chunk, m-base)
		if !op.outWords {
			cur = yd[base*n:]
		}
		switch {
		case k == 0:
			clear(cur[:rows*n])
			epi(0, rows, 0, n)
		case op.act != nil:
			geluToWords(*op.act, gw[:rows*k], data[float32](x)[base*k:(base+rows)*k])
			kernels.SgemmPackedThenWords(rows, gw, k, p, cur, n, epi)
		case xw != nil:
			kernels.SgemmPackedThenWords(rows, xw[base*k:], k, p, cur, n, epi)
		default:
			kernels.SgemmPackedThen(rows, data[float32](x)[base*k:], k, p, cur, n, epi)
		}
	}
	return y, nil
}

// linearChunkRows is the rows one product call computes for a Linear whose
// output is kept as words (into float32 rows, then rounded) or whose input
// is GELU(u)'s words (GELULinear, rounded from u first): 8 blocks of 32
// rows per core, so each buffer is a few MB, not the whole output or input
// (29 MB for ViT-S/16's qkv at batch 32, 19 MB for its fc2's input). The
// products' bits do not depend on the rows a call covers.
func linearChunkRows(m int) int {
	return min(m, 32*8*runtime.GOMAXPROCS(0))
}

// wordsRows holds the words of GELULinear's GELU(u) while a product reads
// them (its weight gradient's op(B)): one buffer for the ops that run one
// after another.
var wordsRows bufpool.Pool[uint16]

// geluWordsOf returns a buffer of wordsRows holding the words of GELU(u)
// (GELU's float32 values rounded by kernels.WordsBF16), for GELULinear.
func geluWordsOf(approx GELUApprox, u []float32) *[]uint16 {
	buf := wordsRows.Get(len(u))
	geluToWords(approx, *buf, u)
	return buf
}

// geluChunks holds the words of one chunk of GELULinear's forward input
// (linearChunkRows).
var geluChunks bufpool.Pool[uint16]

// actTag is what WriteHash adds for GELULinear's ops ("" otherwise).
func actTag(act *GELUApprox) string {
	if act == nil {
		return ""
	}
	return ",gelu=" + act.String()
}

// linearRows holds the float32 rows of a chunk of a Linear whose output
// is kept as words, while the product fills them.
var linearRows bufpool.Pool[float32]

func biasData[T Float](in []*tensor.Dense, has bool) []T {
	if !has {
		return nil
	}
	return data[T](in[2])
}

// linearForward: (M,K)·(N,K)ᵀ + b → (M,N), with bfloat16 products when
// bf16 (float32 only).
func linearForward[T Float](bf16 bool, y, x, w, b []T, m, n, k int) {
	if y32, ok := any(y).([]float32); ok {
		if b == nil || k == 0 {
			gemmPrec(bf16, false, true, m, n, k, 1, x, k, w, k, 0, y, n)
			if b != nil {
				kernels.AddBias(y32, any(b).([]float32), m, n)
			}
			return
		}
		linearBiasForward32(bf16, y32, any(x).([]float32), any(w).([]float32), any(b).([]float32), m, n, k)
		return
	}
	var beta T
	if b != nil {
		for i := 0; i < m; i++ {
			copy(y[i*n:(i+1)*n], b)
		}
		beta = 1
	}
	gemm(false, true, m, n, k, 1, x, k, w, k, beta, y, n)
}

// packedWeights holds the weight panels of the Linear forward being run:
// the ops run one after another, so one or two buffers serve them all
// instead of a copy of every layer's weights.
var packedWeights = sync.Pool{New: func() any { return (*kernels.PackedB)(nil) }}

// linearBiasForward32 is X·Wᵀ + b with the bias added to each block of y
// as the product finishes it, while the block is in cache
// (kernels.SgemmPackedThen), instead of in a second pass over y. The sums
// are Sgemm's (SgemmBF16's when bf16) and the bias addition AddBias's
// (EpilogueRow), so y is bit for bit that of the product followed by
// AddBias.
func linearBiasForward32(bf16 bool, y, x, w, b []float32, m, n, k int) {
	pack := kernels.PackBInto
	if bf16 {
		pack = kernels.PackBBF16Into
	}
	p := pack(packedWeights.Get().(*kernels.PackedB), true, k, n, w, k)
	defer packedWeights.Put(p)
	kernels.SgemmPackedThen(m, x, k, p, y, n, func(i0, i1, j0, j1 int) {
		for i := i0; i < i1; i++ {
			kernels.EpilogueRow(y[i*n+j0:i*n+j1], b[j0:j1], nil, false)
		}
	})
}

func (op *linearOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "Linear(w%d,bias=%t%s%s%s%s,recompute=%t)", op.wRank, op.bias, precisionTag(op.bf16), wordsTag(op.words), wordsTag(op.outWords), actTag(op.act), op.recompute)
	op.writeID(h)
}
func (op *linearOp) Hashcode() uint32 { return hashOf(op) }
func (op *linearOp) String() string   { return "Linear" }

func (op *linearOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op *linearOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	w := inputs[1]
	var dx *G.Node
	x, err := kept(inputs[0], grad) // x (or u) as the backward pass reads it: kept, or computed again
	if err != nil {
		return nil, err
	}
	if op.act != nil { // u's gradient: GELU's gradient of dy·W, in the product's epilogue
		dx, err = G.ApplyOp(&matMulOp{opBase: newOpBase(), name: "LinearDxGELU", bf16: true, geluGrad: op.act, ranks: [3]int{2, op.wRank, 2}}, grad, w, x)
	} else {
		dx, err = G.ApplyOp(&matMulOp{opBase: newOpBase(), name: "LinearDx", bf16: op.bf16, ranks: [3]int{2, op.wRank, 2}}, grad, w)
	}
	if err != nil {
		return nil, err
	}
	dw, err := G.ApplyOp(&matMulOp{opBase: newOpBase(), name: "LinearDw", tA: true, bf16: op.bf16, bWords: op.words, act: op.act, ranks: [3]int{2, 2, op.wRank}, outShape: w.Shape().Clone()}, grad, x)
	if err != nil {
		return nil, err
	}
	if !op.bias {
		return G.Nodes{dx, dw}, nil
	}
	db, err := G.ApplyOp(&colSumOp{opBase: newOpBase()}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dw, db}, nil
}

// matMulOp is C = op(A)·B for the linear backward passes: LinearDx is
// dy(M,N)·W(N,K) and LinearDw is dyᵀ(N,M)·x(M,K), shaped like the weight.
type matMulOp struct {
	opBase
	name   string
	tA     bool
	bf16   bool        // bfloat16 products, as the forward Linear's
	bWords bool        // B is bfloat16 words (the forward's x, StoreBF16)
	act    *GELUApprox // B is u, read as GELU(u)'s words (GELULinear)
	// geluGrad, when not nil: a third input u, and C = GELU′(u)⊙(A·B),
	// the gradient of GELULinear's u, applied to each block of C in the
	// product's epilogue (kernels.SgemmBF16Then).
	geluGrad *GELUApprox
	ranks    [3]int // ranks of A, B and the result
	outShape tensor.Shape
	out      buffer
}

func (op *matMulOp) Arity() int {
	if op.geluGrad != nil {
		return 3
	}
	return 2
}

func (op *matMulOp) Type() hm.Type {
	switch {
	case op.bWords:
		return fnTypeWords(1, op.ranks[:]...)
	case op.geluGrad != nil:
		return fnType(op.ranks[0], op.ranks[1], op.ranks[2], op.ranks[2])
	}
	return fnType(op.ranks[:]...)
}

func (op *matMulOp) dims(a, b tensor.Shape) (m, n, k int) {
	a0, a1 := a[0], a.TotalSize()/a[0]
	b1 := b.TotalSize() / b[0]
	if op.tA {
		return a1, b1, a0
	}
	return a0, b1, a1
}

func (op *matMulOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if op.outShape != nil {
		return op.outShape.Clone(), nil
	}
	a, err := shapeOf(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	b, err := shapeOf(op.name, in, 1)
	if err != nil {
		return nil, err
	}
	m, n, _ := op.dims(a, b)
	return tensor.Shape{m, n}, nil
}

func (op *matMulOp) Do(vs ...G.Value) (G.Value, error) {
	if op.bWords || op.act != nil {
		return op.doWords(vs)
	}
	if op.geluGrad != nil {
		return op.doGELUGrad(vs)
	}
	in, err := denses(op.name, vs, 2)
	if err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	m, n, k, c, err := op.output(a, b, a.Dtype())
	if err != nil {
		return nil, err
	}
	lda := a.Shape().TotalSize() / a.Shape()[0]
	switch a.Dtype() {
	case tensor.Float32:
		gemmPrec(op.bf16, op.tA, false, m, n, k, 1, data[float32](a), lda, data[float32](b), n, 0, data[float32](c), n)
	default:
		gemm(op.tA, false, m, n, k, 1, data[float64](a), lda, data[float64](b), n, 0, data[float64](c), n)
	}
	return c, nil
}

// output checks that op(A) and B fit, and returns the product's m, n, k
// and its output tensor (of dtype dt, shaped as the op says).
func (op *matMulOp) output(a, b *tensor.Dense, dt tensor.Dtype) (m, n, k int, c *tensor.Dense, err error) {
	m, n, k = op.dims(a.Shape(), b.Shape())
	if kb := b.Shape()[0]; kb != k {
		return 0, 0, 0, nil, fmt.Errorf("%s: %v and %v do not fit", op.name, a.Shape(), b.Shape())
	}
	shape := []int{m, n}
	if op.outShape != nil {
		shape = op.outShape
	}
	return m, n, k, op.out.get(dt, shape...), nil
}

// doGELUGrad is Do for LinearDxGELU: (dy, W, u) → GELU′(u)⊙(dy·W), each
// block of rows turned into u's gradient (as geluGradOp computes it) as
// soon as the bf16 product has finished it.
func (op *matMulOp) doGELUGrad(vs []G.Value) (G.Value, error) {
	in, err := denses(op.name, vs, 3)
	if err != nil {
		return nil, err
	}
	a, b, u := in[0], in[1], in[2]
	if a.Dtype() != tensor.Float32 {
		return nil, fmt.Errorf("%s: needs float32 operands, got %v", op.name, a.Dtype())
	}
	m, n, k, c, err := op.output(a, b, tensor.Float32)
	if err != nil {
		return nil, err
	}
	if !u.Shape().Eq(tensor.Shape{m, n}) {
		return nil, fmt.Errorf("%s: u is %v, want (%d, %d)", op.name, u.Shape(), m, n)
	}
	cd, ud := data[float32](c), data[float32](u)
	grad := geluBackward32
	if *op.geluGrad == GELUTanh {
		grad = geluTanhBackward32
	}
	kernels.SgemmBF16Then(false, false, m, n, k, data[float32](a), k, data[float32](b), n, cd, n, func(i0, i1, j0, j1 int) {
		for i := i0; i < i1; i++ { // a row at a time: never the kernels' own split over the cores
			row := cd[i*n+j0 : i*n+j1]
			grad(row, ud[i*n+j0:i*n+j1], row)
		}
	})
	return c, nil
}

// doWords is Do for a B of bfloat16 words (kernels.SgemmBF16Words).
func (op *matMulOp) doWords(vs []G.Value) (G.Value, error) {
	if len(vs) != 2 {
		return nil, fmt.Errorf("%s: want 2 inputs, got %d", op.name, len(vs))
	}
	a, err := dense(op.name, vs[0])
	if err != nil {
		return nil, err
	}
	if a.Dtype() != tensor.Float32 {
		return nil, fmt.Errorf("%s: bfloat16 words need a float32 A, got %v", op.name, a.Dtype())
	}
	var b *tensor.Dense
	var bw []uint16
	if op.act != nil {
		if b, err = dense(op.name, vs[1]); err == nil && b.Dtype() != tensor.Float32 {
			err = fmt.Errorf("%s: GELU(u)'s words need a float32 u, got %v", op.name, b.Dtype())
		}
		if err != nil {
			return nil, err
		}
		buf := geluWordsOf(*op.act, data[float32](b))
		defer wordsRows.Put(buf)
		bw = *buf
	} else if b, bw, err = wordsOf(op.name, vs[1]); err != nil {
		return nil, err
	}
	m, n, k, c, err := op.output(a, b, tensor.Float32)
	if err != nil {
		return nil, err
	}
	lda := a.Shape().TotalSize() / a.Shape()[0]
	kernels.SgemmBF16Words(op.tA, m, n, k, 1, data[float32](a), lda, bw, n, 0, data[float32](c), n)
	return c, nil
}

func (op *matMulOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "%s(tA=%t,%v,%v%s%s%s%s)", op.name, op.tA, op.ranks, op.outShape, precisionTag(op.bf16), wordsTag(op.bWords), actTag(op.act), actTag(op.geluGrad))
	op.writeID(h)
}
func (op *matMulOp) Hashcode() uint32 { return hashOf(op) }
func (op *matMulOp) String() string   { return op.name }

// colSumOp sums a matrix's rows: (M,N) → (N). It is the bias gradient.
type colSumOp struct {
	opBase
	out buffer
}

func (op *colSumOp) Arity() int    { return 1 }
func (op *colSumOp) Type() hm.Type { return fnType(2, 1) }
func (op *colSumOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf("ColSum", in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[1]}, nil
}

func (op *colSumOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("ColSum", vs, 1)
	if err != nil {
		return nil, err
	}
	m, n := in[0].Shape()[0], in[0].Shape()[1]
	y := op.out.get(in[0].Dtype(), n)
	switch in[0].Dtype() {
	case tensor.Float32:
		y32 := data[float32](y)
		clear(y32)
		kernels.ColSum(y32, data[float32](in[0]), m, n)
	default:
		colSum(data[float64](y), data[float64](in[0]), m, n)
	}
	return y, nil
}

// colSum: dst[j] = Σ_i x[i,j].
func colSum[T Float](dst, x []T, m, n int) {
	clear(dst)
	for i := 0; i < m; i++ {
		row := x[i*n : (i+1)*n]
		for j, v := range row {
			dst[j] += v
		}
	}
}

func (op *colSumOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "ColSum"); op.writeID(h) }
func (op *colSumOp) Hashcode() uint32      { return hashOf(op) }
func (op *colSumOp) String() string        { return "ColSum" }
