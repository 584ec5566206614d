package graph

import (
	"fmt"
	"hash"
	"math"

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
// and returns the (B·T, D) concatenation of heads, ready for attn.proj. The
// probabilities P are kept for the backward pass (and for attention maps).
// Heads are read in place by the sgemm calls (leading dimension 3D); nothing
// is reshaped or transposed.
func Attention(qkv *G.Node, batch, tokens, heads int) (*G.Node, error) {
	s := qkv.Shape()
	if qkv.Dims() != 2 || s[0] != batch*tokens || s[1]%3 != 0 {
		return nil, fmt.Errorf("Attention: want qkv (%d·%d, 3D), got %v", batch, tokens, s)
	}
	d := s[1] / 3
	if heads <= 0 || d%heads != 0 {
		return nil, fmt.Errorf("Attention: embed dim %d not divisible by %d heads", d, heads)
	}
	op := &attentionOp{opBase: newOpBase(), batch: batch, tokens: tokens, heads: heads, dim: d}
	return G.ApplyOp(op, qkv)
}

type attentionOp struct {
	opBase
	batch, tokens, heads, dim int
	out                       buffer
	probs32                   []float32 // (B, H, T, T) saved softmax
	probs64                   []float64
}

var _ G.SDOp = (*attentionOp)(nil)

func (op *attentionOp) Arity() int    { return 1 }
func (op *attentionOp) Type() hm.Type { return fnType(2, 2) }
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
	in, err := denses("Attention", vs, 1)
	if err != nil {
		return nil, err
	}
	qkv := in[0]
	if !qkv.Shape().Eq(tensor.Shape{op.batch * op.tokens, 3 * op.dim}) {
		return nil, fmt.Errorf("Attention: qkv is %v, want (%d, %d)", qkv.Shape(), op.batch*op.tokens, 3*op.dim)
	}
	y := op.out.get(qkv.Dtype(), op.batch*op.tokens, op.dim)
	n := op.batch * op.heads * op.tokens * op.tokens
	switch qkv.Dtype() {
	case tensor.Float32:
		if len(op.probs32) != n {
			op.probs32 = make([]float32, n)
		}
		attnForward(op, data[float32](y), data[float32](qkv), op.probs32)
	default:
		if len(op.probs64) != n {
			op.probs64 = make([]float64, n)
		}
		attnForward(op, data[float64](y), data[float64](qkv), op.probs64)
	}
	return y, nil
}

func attnForward[T Float](op *attentionOp, y, qkv, probs []T) {
	if y32, ok := any(y).([]float32); ok {
		attnForward32(op, y32, any(qkv).([]float32), any(probs).([]float32))
		return
	}
	t, d, hd := op.tokens, op.dim, op.dim/op.heads
	scale := T(op.scale())
	parallelFor(op.batch, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			base := b * t * 3 * d
			for h := 0; h < op.heads; h++ {
				q := qkv[base+h*hd:]
				k := qkv[base+d+h*hd:]
				v := qkv[base+2*d+h*hd:]
				p := probs[(b*op.heads+h)*t*t:][:t*t]
				gemm(false, true, t, t, hd, scale, q, 3*d, k, 3*d, 0, p, t)
				softmax(p, t, t)
				gemm(false, false, t, hd, t, 1, p, t, v, 3*d, 0, y[b*t*d+h*hd:], d)
			}
		}
	})
}

// attnForward32 is attnForward for float32: the images are split over the
// cores in contiguous chunks, and each goroutine runs, image by image and
// head by head, scores, softmax of the head's T rows and P·V with the
// single-threaded kernels. Attention products are tiny (50×50×hd), so
// keeping one image's q, k, v and probabilities in cache across its heads
// beats batching each product over the images with one strided call per
// head (BenchmarkAttention32).
func attnForward32(op *attentionOp, y, qkv, probs []float32) {
	t, d, nh := op.tokens, op.dim, op.heads
	hd, scale := d/nh, float32(op.scale())
	parallelFor(op.batch, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			base := b * t * 3 * d
			for h := 0; h < nh; h++ {
				p := probs[(b*nh+h)*t*t:][:t*t]
				// S = scale·Q·Kᵀ, P = softmax(S) by rows
				kernels.SgemmSerial(false, true, t, t, hd, scale, qkv[base+h*hd:], 3*d, qkv[base+d+h*hd:], 3*d, 0, p, t)
				kernels.SoftmaxRows(p, t, t)
				// O = P·V into the head's columns of y
				kernels.SgemmSerial(false, false, t, hd, t, 1, p, t, qkv[base+2*d+h*hd:], 3*d, 0, y[b*t*d+h*hd:], d)
			}
		}
	})
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
	fmt.Fprintf(h, "Attention(B%d,T%d,H%d,D%d)", op.batch, op.tokens, op.heads, op.dim)
	op.writeID(h)
}
func (op *attentionOp) Hashcode() uint32     { return hashOf(op) }
func (op *attentionOp) String() string       { return fmt.Sprintf("Attention(h=%d)", op.heads) }
func (op *attentionOp) DiffWRT(n int) []bool { return []bool{true} }

func (op *attentionOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	// The forward output is an input only to order the gradient after the
	// forward pass, whose saved probabilities it reads.
	d, err := G.ApplyOp(&attentionGradOp{opBase: newOpBase(), fwd: op}, inputs[0], output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

// attentionGradOp maps (qkv, y, dy) to dqkv using the forward's saved
// probabilities:
//
//	dV = Pᵀ·dO, dP = dO·Vᵀ, dS = P ⊙ (dP − rowsum(dP ⊙ P)),
//	dQ = scale·dS·K, dK = scale·dSᵀ·Q.
type attentionGradOp struct {
	opBase
	fwd   *attentionOp
	out   buffer
	tmp32 []float32
	tmp64 []float64
}

func (op *attentionGradOp) Arity() int    { return 3 }
func (op *attentionGradOp) Type() hm.Type { return fnType(2, 2, 2, 2) }
func (op *attentionGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	f := op.fwd
	return tensor.Shape{f.batch * f.tokens, 3 * f.dim}, nil
}

func (op *attentionGradOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("AttentionGrad", vs, 3)
	if err != nil {
		return nil, err
	}
	f := op.fwd
	qkv, dy := in[0], in[2]
	dq := op.out.get(qkv.Dtype(), f.batch*f.tokens, 3*f.dim)
	n := f.batch * f.heads * f.tokens * f.tokens
	switch qkv.Dtype() {
	case tensor.Float32:
		if len(op.tmp32) != n {
			op.tmp32 = make([]float32, n)
		}
		attnBackward(f, data[float32](dq), data[float32](qkv), data[float32](dy), f.probs32, op.tmp32)
	default:
		if len(op.tmp64) != n {
			op.tmp64 = make([]float64, n)
		}
		attnBackward(f, data[float64](dq), data[float64](qkv), data[float64](dy), f.probs64, op.tmp64)
	}
	return dq, nil
}

func attnBackward[T Float](op *attentionOp, dqkv, qkv, dy, probs, tmp []T) {
	if d32, ok := any(dqkv).([]float32); ok {
		attnBackward32(op, d32, any(qkv).([]float32), any(dy).([]float32), any(probs).([]float32), any(tmp).([]float32))
		return
	}
	t, d, hd := op.tokens, op.dim, op.dim/op.heads
	scale := T(op.scale())
	parallelFor(op.batch, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			base := b * t * 3 * d
			dp := tmp[b*t*t:][:t*t]
			for h := 0; h < op.heads; h++ {
				q, k, v := qkv[base+h*hd:], qkv[base+d+h*hd:], qkv[base+2*d+h*hd:]
				dQ, dK, dV := dqkv[base+h*hd:], dqkv[base+d+h*hd:], dqkv[base+2*d+h*hd:]
				p := probs[(b*op.heads+h)*t*t:][:t*t]
				do := dy[b*t*d+h*hd:]
				gemm(true, false, t, hd, t, 1, p, t, do, d, 0, dV, 3*d)
				gemm(false, true, t, t, hd, 1, do, d, v, 3*d, 0, dp, t)
				softmaxBackward(dp, p, t, t) // dS = P ⊙ (dP − rowsum(dP ⊙ P)), in place
				gemm(false, false, t, hd, t, scale, dp, t, k, 3*d, 0, dQ, 3*d)
				gemm(true, false, t, hd, t, scale, dp, t, q, 3*d, 0, dK, 3*d)
			}
		}
	})
}

// attnBackward32 is attnBackward for float32, split over the images as
// attnForward32 is; tmp holds dP, then dS, laid out (B, H, T, T) like the
// probabilities, so each goroutine writes only its own images' blocks.
func attnBackward32(op *attentionOp, dqkv, qkv, dy, probs, tmp []float32) {
	t, d, nh := op.tokens, op.dim, op.heads
	hd, scale := d/nh, float32(op.scale())
	parallelFor(op.batch, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			base := b * t * 3 * d
			for h := 0; h < nh; h++ {
				q, k, v := qkv[base+h*hd:], qkv[base+d+h*hd:], qkv[base+2*d+h*hd:]
				dQ, dK, dV := dqkv[base+h*hd:], dqkv[base+d+h*hd:], dqkv[base+2*d+h*hd:]
				p := probs[(b*nh+h)*t*t:][:t*t]
				dp := tmp[(b*nh+h)*t*t:][:t*t]
				do := dy[b*t*d+h*hd:]
				kernels.SgemmSerial(true, false, t, hd, t, 1, p, t, do, d, 0, dV, 3*d)        // dV = Pᵀ·dO
				kernels.SgemmSerial(false, true, t, t, hd, 1, do, d, v, 3*d, 0, dp, t)        // dP = dO·Vᵀ
				kernels.SoftmaxBackwardRows(dp, p, dp, t, t)                                  // dS = P ⊙ (dP − rowsum(dP ⊙ P))
				kernels.SgemmSerial(false, false, t, hd, t, scale, dp, t, k, 3*d, 0, dQ, 3*d) // dQ = scale·dS·K
				kernels.SgemmSerial(true, false, t, hd, t, scale, dp, t, q, 3*d, 0, dK, 3*d)  // dK = scale·dSᵀ·Q
			}
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
	p := op.Probs()
	if len(p) != op.batch*op.heads*op.tokens*op.tokens {
		return nil, 0, 0, 0, fmt.Errorf("AttentionProbs: the graph has not run yet")
	}
	return p, op.batch, op.heads, op.tokens, nil
}
