package graph

import (
	"fmt"
	"hash"
	"math"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
)

// Attention is the core of multi-head self-attention, working directly on the
// fused qkv projection: qkv is (B·T, 3D) with each row holding q, k and v of
// one token (timm's layout: qkv.weight rows q;k;v, heads contiguous inside
// each). For every sample b and head h it computes
//
//	S = Q·Kᵀ / √(D/H)   (T, T)
//	P = softmax(S)      rows
//	O = P·V             (T, D/H), written to the head's columns of the output
//
// and returns the (B·T, D) concatenation of heads, ready for attn.proj. An
// inference graph keeps the probabilities P for attention maps; a graph with
// a backward pass keeps none and recomputes them there, bit for bit, which
// takes one more (T, T, D/H) product per image and head and saves
// B·H·T² values per block (TestAttentionRecomputeIsExact).
// Heads are read in place by the sgemm calls (leading dimension 3D); nothing
// is reshaped or transposed.
//
// WithPrecision(BF16) makes Q·Kᵀ, P·V and the four products of the
// gradient bfloat16 products (kernels.SgemmBF16Serial); the scores, the
// softmax and its gradient stay float32. StoreBF16 keeps the output as
// bfloat16 words, for a bfloat16 attn.proj that reads it; a bfloat16
// Attention also takes qkv as words (a qkv Linear's StoreBF16), which
// its products read as they are (kernels.SgemmBF16SerialOf).
func Attention(qkv *G.Node, batch, tokens, heads int, opts ...OpOption) (*G.Node, error) {
	s := qkv.Shape()
	if qkv.Dims() != 2 || s[0] != batch*tokens || s[1]%3 != 0 {
		return nil, fmt.Errorf("Attention: want qkv (%d·%d, 3D), got %v", batch, tokens, s)
	}
	d := s[1] / 3
	if heads <= 0 || d%heads != 0 {
		return nil, fmt.Errorf("Attention: embed dim %d not divisible by %d heads", d, heads)
	}
	dt, qkvWords := qkv.Dtype(), qkv.Dtype() == tensor.Uint16
	if qkvWords {
		dt = tensor.Float32
	}
	bf16, err := bf16Of("Attention", dt, opts)
	if err != nil {
		return nil, err
	}
	if qkvWords && !bf16 {
		return nil, fmt.Errorf("Attention: qkv is bfloat16 words (StoreBF16), which only an Attention of precision %s reads", BF16)
	}
	words, err := storesBF16("Attention", dt, opts)
	if err != nil {
		return nil, err
	}
	op := &attentionOp{opBase: newOpBase(), batch: batch, tokens: tokens, heads: heads, dim: d, bf16: bf16, words: words, qkvWords: qkvWords}
	return G.ApplyOp(op, qkv)
}

type attentionOp struct {
	opBase
	batch, tokens, heads, dim int
	bf16                      bool // bfloat16 products (WithPrecision)
	words                     bool // the output is bfloat16 words (StoreBF16)
	qkvWords                  bool // qkv is bfloat16 words (StoreBF16)
	out                       buffer
	// recompute is set when a gradient is built (SymDiff): the forward pass
	// then keeps no probabilities and the backward pass recomputes them.
	// Otherwise (inference) the forward keeps them for AttentionProbs.
	recompute bool
	probs32   []float32 // (B, H, T, T) saved softmax, unless recompute
	probs64   []float64
}

var _ G.SDOp = (*attentionOp)(nil)

func (op *attentionOp) Arity() int    { return 1 }
func (op *attentionOp) Type() hm.Type { return wordsAt([]int{2, 2}, op.wordsAt(0, 1)...) }

// wordsAt lists which of the indices of qkv and of the output (in the
// op's or its gradient op's type) are words.
func (op *attentionOp) wordsAt(qkv, out int) []int {
	var w []int
	if op.qkvWords {
		w = append(w, qkv)
	}
	if op.words {
		w = append(w, out)
	}
	return w
}
func (op *attentionOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.batch * op.tokens, op.dim}, nil
}

func (op *attentionOp) scale() float64 { return 1 / math.Sqrt(float64(op.dim/op.heads)) }

// Probs returns the saved attention probabilities (B, H, T, T) of the last
// forward run as float64, for attention maps.
func (op *attentionOp) Probs() []float64 {
	if op.probs64 != nil {
		return op.probs64
	}
	out := make([]float64, len(op.probs32))
	for i, v := range op.probs32 {
		out[i] = float64(v)
	}
	return out
}

func (op *attentionOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 1 {
		return nil, fmt.Errorf("Attention: want 1 input, got %d", len(vs))
	}
	qkv, qw, err := op.qkvOf("Attention", vs[0])
	if err != nil {
		return nil, err
	}
	if !qkv.Shape().Eq(tensor.Shape{op.batch * op.tokens, 3 * op.dim}) {
		return nil, fmt.Errorf("Attention: qkv is %v, want (%d, %d)", qkv.Shape(), op.batch*op.tokens, 3*op.dim)
	}
	dt := qkv.Dtype()
	if qw != nil {
		dt = tensor.Float32
	}
	if op.words && dt != tensor.Float32 {
		return nil, fmt.Errorf("Attention: bfloat16 words need a float32 qkv, got %v", dt)
	}
	if op.words {
		dt = tensor.Uint16
	}
	y := op.out.get(dt, op.batch*op.tokens, op.dim)
	n := op.batch * op.heads * op.tokens * op.tokens
	if op.recompute {
		n = 0
		op.probs32, op.probs64 = nil, nil
	}
	switch {
	case qw != nil || qkv.Dtype() == tensor.Float32:
		if len(op.probs32) != n {
			op.probs32 = make([]float32, n)
		}
		var q32 []float32
		if qw == nil {
			q32 = data[float32](qkv)
		}
		if op.words {
			attnForward(op, nil, y.Data().([]uint16), q32, qw, op.probs32)
		} else {
			attnForward(op, data[float32](y), nil, q32, qw, op.probs32)
		}
	default:
		if len(op.probs64) != n {
			op.probs64 = make([]float64, n)
		}
		attnForward(op, data[float64](y), nil, data[float64](qkv), nil, op.probs64)
	}
	return y, nil
}

// qkvOf asserts the qkv value: a float tensor, or bfloat16 words (returned
// as qw) when the op reads words.
func (op *attentionOp) qkvOf(name string, v G.Value) (*tensor.Dense, []uint16, error) {
	if op.qkvWords {
		return wordsOf(name, v)
	}
	d, err := dense(name, v)
	return d, nil, err
}

// head is one image and head's Q, K and V, rows of hd with row stride
// ld: views of qkv's values, or of its words (qw, kw, vw; float32 only).
type head[T Float] struct {
	q, k, v    []T
	qw, kw, vw []uint16
	ld         int
}

// headOperands returns image b, head h's Q, K and V: views of qkv, or of
// its words qw when qkv is kept as words (the products read them as they
// are, kernels.SgemmBF16SerialOf).
func headOperands[T Float](op *attentionOp, qkv []T, qw []uint16, b, h int) head[T] {
	t, d, hd := op.tokens, op.dim, op.dim/op.heads
	base := b*t*3*d + h*hd
	if qw == nil {
		return head[T]{q: qkv[base:], k: qkv[base+d:], v: qkv[base+2*d:], ld: 3 * d}
	}
	return head[T]{qw: qw[base:], kw: qw[base+d:], vw: qw[base+2*d:], ld: 3 * d}
}

// gemmHead is gemmSerial with either operand given as bfloat16 words (aw,
// bw; float32 and bf16 only), as a head's Q, K and V may be.
func gemmHead[T Float](bf16, transA, transB bool, m, n, k int, alpha T, a []T, aw []uint16, lda int, b []T, bw []uint16, ldb int, beta T, c []T, ldc int) {
	if aw == nil && bw == nil {
		gemmSerial(bf16, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	opA := kernels.BF16Operand{F: any(a).([]float32), W: aw, Ld: lda}
	opB := kernels.BF16Operand{F: any(b).([]float32), W: bw, Ld: ldb}
	kernels.SgemmBF16SerialOf(transA, transB, m, n, k, float32(alpha), opA, opB, float32(beta), any(c).([]float32), ldc)
}

// scratch holds per-goroutine (T, T) matrices for the attention kernels.
var scratch32, scratch64 sync.Pool

// getScratch returns a pooled slice of at least n elements.
func getScratch[T Float](n int) *[]T {
	pool := &scratch64
	if _, ok := any(T(0)).(float32); ok {
		pool = &scratch32
	}
	s, _ := pool.Get().(*[]T)
	if s == nil {
		s = new([]T)
	}
	if len(*s) < n {
		*s = make([]T, n)
	}
	return s
}

func putScratch[T Float](s *[]T) {
	if _, ok := any(T(0)).(float32); ok {
		scratch32.Put(s)
		return
	}
	scratch64.Put(s)
}

// attnForward writes the attention output y from qkv. The (image, head)
// pairs are split over the cores, handed out dynamically; each pair runs
// scores, softmax of its T rows and P·V with single-threaded kernels, so
// the result does not depend on the split. probs, if not empty, receives the
// probabilities (B, H, T, T); if empty they go to per-goroutine scratch and
// are dropped. With y nil the output goes to the words yw instead (float32
// only): each head's O through scratch, then rounded (kernels.WordsBF16).
// With qkv nil, Q, K and V are read from the words qw (headOperands).
func attnForward[T Float](op *attentionOp, y []T, yw []uint16, qkv []T, qw []uint16, probs []T) {
	t, nh, d, hd := op.tokens, op.heads, op.dim, op.dim/op.heads
	parallelFor(op.batch*nh, func(lo, hi int) {
		sp := getScratch[T](t*t + t*hd)
		defer putScratch(sp)
		o := (*sp)[t*t : t*t+t*hd]
		for i := lo; i < hi; i++ {
			var p []T
			if len(probs) == 0 {
				p = (*sp)[:t*t]
			} else {
				p = probs[i*t*t:][:t*t]
			}
			b, h := i/nh, i%nh
			hp := headOperands(op, qkv, qw, b, h)
			attnProbs(op, hp, p)
			if y != nil { // O = P·V into the head's columns of y
				gemmHead(op.bf16, false, false, t, hd, t, 1, p, nil, t, hp.v, hp.vw, hp.ld, 0, y[b*t*d+h*hd:], d)
				continue
			}
			gemmHead(op.bf16, false, false, t, hd, t, 1, p, nil, t, hp.v, hp.vw, hp.ld, 0, o, hd)
			o32 := any(o).([]float32)
			for r := range t {
				kernels.WordsBF16(yw[(b*t+r)*d+h*hd:][:hd], o32[r*hd:(r+1)*hd])
			}
		}
	})
}

// attnProbs computes the probabilities of one image and head into p
// (T, T) from its Q and K (row stride ld): S = scale·Q·Kᵀ, then softmax by
// rows. The backward pass calls it again to recompute them: same inputs,
// same kernels, so the same bits.
func attnProbs[T Float](op *attentionOp, hp head[T], p []T) {
	t, hd := op.tokens, op.dim/op.heads
	gemmHead(op.bf16, false, true, t, t, hd, T(op.scale()), hp.q, hp.qw, hp.ld, hp.k, hp.kw, hp.ld, 0, p, t)
	softmax(p, t, t)
}

// gemmSerial is the single-threaded product for one (image, head) pair:
// our SIMD kernel for float32 (its bfloat16 form when bf16), gonum's for
// float64.
func gemmSerial[T Float](bf16, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if a32, ok := any(a).([]float32); ok {
		if bf16 {
			kernels.SgemmBF16Serial(transA, transB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
			return
		}
		kernels.SgemmSerial(transA, transB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
		return
	}
	gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// softmax is softmaxRows, vectorised for float32.
func softmax[T Float](x []T, rows, cols int) {
	if x32, ok := any(x).([]float32); ok {
		kernels.SoftmaxRows(x32, rows, cols)
		return
	}
	softmaxRows(x, rows, cols)
}

// softmaxBackward overwrites dp by the softmax input gradient
// p ⊙ (dp − rowsum(dp ⊙ p)), given the softmax output p.
func softmaxBackward[T Float](dp, p []T, rows, cols int) {
	if d32, ok := any(dp).([]float32); ok {
		kernels.SoftmaxBackwardRows(d32, any(p).([]float32), d32, rows, cols)
		return
	}
	for r := 0; r < rows; r++ {
		pr, dr := p[r*cols:(r+1)*cols], dp[r*cols:(r+1)*cols]
		var dot T
		for j := range pr {
			dot += pr[j] * dr[j]
		}
		for j := range pr {
			dr[j] = pr[j] * (dr[j] - dot)
		}
	}
}

// softmaxRows replaces each row of the (rows, cols) matrix x by its softmax.
func softmaxRows[T Float](x []T, rows, cols int) {
	for r := 0; r < rows; r++ {
		row := x[r*cols : (r+1)*cols]
		mx := row[0]
		for _, v := range row[1:] {
			if v > mx {
				mx = v
			}
		}
		var sum float64
		for i, v := range row {
			e := math.Exp(float64(v - mx))
			row[i] = T(e)
			sum += e
		}
		inv := T(1 / sum)
		for i := range row {
			row[i] *= inv
		}
	}
}

func (op *attentionOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "Attention(B%d,T%d,H%d,D%d%s%s%s)", op.batch, op.tokens, op.heads, op.dim, precisionTag(op.bf16), wordsTag(op.qkvWords), wordsTag(op.words))
	op.writeID(h)
}
func (op *attentionOp) Hashcode() uint32     { return hashOf(op) }
func (op *attentionOp) String() string       { return fmt.Sprintf("Attention(h=%d)", op.heads) }
func (op *attentionOp) DiffWRT(n int) []bool { return []bool{true} }

func (op *attentionOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	// The forward output is an input only to order the gradient after the
	// forward pass. A graph with a backward pass keeps no probabilities: the
	// gradient op recomputes them, bit for bit, from qkv.
	op.recompute = true
	qkv, err := kept(inputs[0], grad) // qkv, or its Linear's output computed again (Recompute)
	if err != nil {
		return nil, err
	}
	d, err := G.ApplyOp(&attentionGradOp{opBase: newOpBase(), fwd: op}, qkv, output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

// attentionGradOp maps (qkv, y, dy) to dqkv, recomputing each (image, head)
// pair's probabilities P (or reading the forward's, when it kept them):
//
//	dV = Pᵀ·dO, dP = dO·Vᵀ, dS = P ⊙ (dP − rowsum(dP ⊙ P)),
//	dQ = scale·dS·K, dK = scale·dSᵀ·Q.
type attentionGradOp struct {
	opBase
	fwd *attentionOp
	out buffer
}

func (op *attentionGradOp) Arity() int    { return 3 }
func (op *attentionGradOp) Type() hm.Type { return wordsAt([]int{2, 2, 2, 2}, op.fwd.wordsAt(0, 1)...) }
func (op *attentionGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	f := op.fwd
	return tensor.Shape{f.batch * f.tokens, 3 * f.dim}, nil
}

func (op *attentionGradOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 3 {
		return nil, fmt.Errorf("AttentionGrad: want 3 inputs, got %d", len(vs))
	}
	f := op.fwd
	qkv, qw, err := f.qkvOf("AttentionGrad", vs[0]) // (qkv, y, dy): y only orders it
	if err != nil {
		return nil, err
	}
	dy, err := dense("AttentionGrad", vs[2])
	if err != nil {
		return nil, err
	}
	if dt := dy.Dtype(); (qw != nil && dt != tensor.Float32) || (qw == nil && dt != qkv.Dtype()) {
		return nil, fmt.Errorf("AttentionGrad: qkv is %v, dy %v", qkv.Dtype(), dt)
	}
	if !qkv.Shape().Eq(tensor.Shape{f.batch * f.tokens, 3 * f.dim}) || !dy.Shape().Eq(tensor.Shape{f.batch * f.tokens, f.dim}) {
		return nil, fmt.Errorf("AttentionGrad: qkv %v and dy %v do not match the forward's (%d, %d)", qkv.Shape(), dy.Shape(), f.batch*f.tokens, f.dim)
	}
	dq := op.out.get(dy.Dtype(), f.batch*f.tokens, 3*f.dim)
	switch {
	case qw != nil:
		attnBackward(f, data[float32](dq), nil, qw, data[float32](dy), f.probs32)
	case qkv.Dtype() == tensor.Float32:
		attnBackward(f, data[float32](dq), data[float32](qkv), nil, data[float32](dy), f.probs32)
	default:
		attnBackward(f, data[float64](dq), data[float64](qkv), nil, data[float64](dy), f.probs64)
	}
	return dq, nil
}

// attnBackward writes dqkv, split over (image, head) pairs as attnForward
// is. probs holds the forward's probabilities, or is empty: then each pair
// recomputes its own with attnProbs into per-goroutine scratch, the same
// bits the forward pass had. dP and dS live in scratch too.
// With qkv nil, Q, K and V are read from the words qw (headOperands).
func attnBackward[T Float](op *attentionOp, dqkv, qkv []T, qw []uint16, dy, probs []T) {
	t, d, nh := op.tokens, op.dim, op.heads
	hd, scale := d/nh, T(op.scale())
	parallelFor(op.batch*nh, func(lo, hi int) {
		sp := getScratch[T](2 * t * t)
		defer putScratch(sp)
		dp := (*sp)[t*t : 2*t*t]
		for i := lo; i < hi; i++ {
			b, h := i/nh, i%nh
			hp := headOperands(op, qkv, qw, b, h)
			var p []T
			if len(probs) == 0 {
				p = (*sp)[:t*t]
				attnProbs(op, hp, p)
			} else {
				p = probs[i*t*t:][:t*t]
			}
			base := b * t * 3 * d
			dQ, dK, dV := dqkv[base+h*hd:], dqkv[base+d+h*hd:], dqkv[base+2*d+h*hd:]
			do := dy[b*t*d+h*hd:]
			gemmSerial(op.bf16, true, false, t, hd, t, 1, p, t, do, d, 0, dV, 3*d)                       // dV = Pᵀ·dO
			gemmHead(op.bf16, false, true, t, t, hd, 1, do, nil, d, hp.v, hp.vw, hp.ld, 0, dp, t)        // dP = dO·Vᵀ
			softmaxBackward(dp, p, t, t)                                                                 // dS = P ⊙ (dP − rowsum(dP ⊙ P))
			gemmHead(op.bf16, false, false, t, hd, t, scale, dp, nil, t, hp.k, hp.kw, hp.ld, 0, dQ, 3*d) // dQ = scale·dS·K
			gemmHead(op.bf16, true, false, t, hd, t, scale, dp, nil, t, hp.q, hp.qw, hp.ld, 0, dK, 3*d)  // dK = scale·dSᵀ·Q
		}
	})
}

func (op *attentionGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "AttentionGrad(%d)", op.fwd.id)
	op.writeID(h)
}
func (op *attentionGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *attentionGradOp) String() string   { return "AttentionGrad" }

// AttentionProbs returns the softmax probabilities (B, H, T, T) that the
// Attention node n computed in its graph's last forward run, as float64,
// with their dimensions. It is how attention maps are read.
func AttentionProbs(n *G.Node) (probs []float64, b, h, t int, err error) {
	op, ok := n.Op().(*attentionOp)
	if !ok {
		return nil, 0, 0, 0, fmt.Errorf("AttentionProbs: %v is not an Attention node", n.Name())
	}
	if op.recompute {
		return nil, 0, 0, 0, fmt.Errorf("AttentionProbs: %v is in a graph with a backward pass, which keeps no probabilities (they are recomputed there); read maps from an inference graph", n.Name())
	}
	p := op.Probs()
	if len(p) != op.batch*op.heads*op.tokens*op.tokens {
		return nil, 0, 0, 0, fmt.Errorf("AttentionProbs: the graph has not run yet")
	}
	return p, op.batch, op.heads, op.tokens, nil
}
