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

// LayerNorm normalises each row of x over its last axis, as PyTorch's
// nn.LayerNorm(D, eps) does:
//
//	y = (x − μ)·rstd·w + b,   rstd = 1/√(var + eps)
//
// with μ and the biased variance var taken over the row. x is (M, D); w and b
// are (D). eps must be > 0 (ViT uses 1e-6). Row statistics are accumulated in
// float64 for either dtype; μ and rstd are kept for the backward pass:
//
//	dx = rstd·(g − mean(g) − x̂·mean(g·x̂)),  g = dy·w,  x̂ = (x − μ)·rstd
//	dw = Σ_rows dy·x̂,  db = Σ_rows dy.
func LayerNorm(x, w, b *G.Node, eps float64, opts ...OpOption) (*G.Node, error) {
	if x == nil || w == nil || b == nil {
		return nil, fmt.Errorf("LayerNorm: x, w and b must all be given")
	}
	if x.Dims() != 2 || w.Dims() != 1 || b.Dims() != 1 {
		return nil, fmt.Errorf("LayerNorm: want x (M,D), w (D), b (D), got %v, %v, %v", x.Shape(), w.Shape(), b.Shape())
	}
	d := x.Shape()[1]
	if w.Shape()[0] != d || b.Shape()[0] != d {
		return nil, fmt.Errorf("LayerNorm: x %v has %d features but w is %v and b is %v", x.Shape(), d, w.Shape(), b.Shape())
	}
	if !(eps > 0) || math.IsInf(eps, 1) {
		return nil, fmt.Errorf("LayerNorm: eps must be a positive number, got %v", eps)
	}
	words, err := storesBF16("LayerNorm", x.Dtype(), opts)
	if err != nil {
		return nil, err
	}
	op := &layerNormOp{opBase: newOpBase(), eps: eps, d: d, x: x, words: words}
	op.recompute = recomputes(opts)
	return G.ApplyOp(op, x, w, b)
}

type layerNormOp struct {
	opBase
	eps           float64
	d             int
	words         bool // the output is bfloat16 words (StoreBF16)
	out           buffer
	recomputeMark // Recompute

	// x is the input node, for Residual's check. fork is set by the
	// Residual that sums x with this LayerNorm's branch; next is that sum's
	// gradient, set by the Residual's SymDiff (which runs first, the sum
	// being downstream) and added to dx by the dx op.
	x    *G.Node
	fork bool
	next *G.Node

	// Saved by the last forward run for the backward pass, per row.
	mean, rstd []float64
	// The float32 path keeps float32 statistics for the SIMD kernels, and
	// its dx op computes dw and db in the same pass, for the param ops.
	mean32, rstd32, dw32, db32 []float32
}

var _ G.SDOp = (*layerNormOp)(nil)

func (op *layerNormOp) Arity() int { return 3 }
func (op *layerNormOp) Type() hm.Type {
	if op.words {
		return fnTypeWords(3, 2, 1, 1, 2)
	}
	return fnType(2, 1, 1, 2)
}
func (op *layerNormOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeLike("LayerNorm", in, 0)
}

func (op *layerNormOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("LayerNorm", vs, 3)
	if err != nil {
		return nil, err
	}
	x, w, b := in[0], in[1], in[2]
	if x.Dims() != 2 || x.Shape()[1] != op.d || w.Size() != op.d || b.Size() != op.d {
		return nil, fmt.Errorf("LayerNorm: want x (M,%d), w (%d), b (%d), got %v, %v, %v", op.d, op.d, op.d, x.Shape(), w.Shape(), b.Shape())
	}
	m := x.Shape()[0]
	if len(op.mean) != m {
		op.mean, op.rstd = make([]float64, m), make([]float64, m)
	}
	dt := x.Dtype()
	if op.words {
		if dt != tensor.Float32 {
			return nil, fmt.Errorf("LayerNorm: bfloat16 words need a float32 input, got %v", dt)
		}
		dt = tensor.Uint16
	}
	y := op.out.get(dt, m, op.d)
	switch x.Dtype() {
	case tensor.Float32:
		if len(op.mean32) != m {
			op.mean32, op.rstd32 = make([]float32, m), make([]float32, m)
			op.dw32, op.db32 = make([]float32, op.d), make([]float32, op.d)
		}
		if op.words {
			kernels.LayerNormRowsWords(y.Data().([]uint16), op.mean32, op.rstd32, data[float32](x), data[float32](w), data[float32](b), m, op.d, float32(op.eps))
		} else {
			kernels.LayerNormRows(data[float32](y), op.mean32, op.rstd32, data[float32](x), data[float32](w), data[float32](b), m, op.d, float32(op.eps))
		}
		for i := range op.mean32 {
			op.mean[i], op.rstd[i] = float64(op.mean32[i]), float64(op.rstd32[i])
		}
	default:
		layerNormForward(data[float64](y), data[float64](x), data[float64](w), data[float64](b), op.mean, op.rstd, op.d, op.eps)
	}
	return y, nil
}

// layerNormForward: x (M,D) → y (M,D), writing μ and rstd of every row.
func layerNormForward[T Float](y, x, w, b []T, mean, rstd []float64, d int, eps float64) {
	parallelFor(len(mean), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, out := x[i*d:(i+1)*d], y[i*d:(i+1)*d]
			var s float64
			for _, v := range row {
				s += float64(v)
			}
			mu := s / float64(d)
			var ss float64
			for _, v := range row {
				c := float64(v) - mu
				ss += c * c
			}
			r := 1 / math.Sqrt(ss/float64(d)+eps)
			mean[i], rstd[i] = mu, r
			for j, v := range row {
				out[j] = T((float64(v)-mu)*r*float64(w[j]) + float64(b[j]))
			}
		}
	})
}

func (op *layerNormOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "LayerNorm(eps=%v,d=%d%s)", op.eps, op.d, wordsTag(op.words))
	op.writeID(h)
}
func (op *layerNormOp) Hashcode() uint32     { return hashOf(op) }
func (op *layerNormOp) String() string       { return "LayerNorm" }
func (op *layerNormOp) DiffWRT(n int) []bool { return []bool{true, true, true} }

func (op *layerNormOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	w := inputs[1]
	x, err := kept(inputs[0], grad) // x, or the sum that made it computed again (Recompute)
	if err != nil {
		return nil, err
	}
	// The output y is an input of the gradient ops that read μ and rstd only
	// to order them after the forward op (never its values, so it may be
	// words, or, with Recompute, the copy its readers made). At a residual
	// fork the sum's gradient is a fifth input, added to dx in the same pass.
	output, err = kept(output, grad)
	if err != nil {
		return nil, err
	}
	dxIn := G.Nodes{x, w, output, grad}
	if op.next != nil {
		dxIn = append(dxIn, op.next)
	}
	dx, err := G.ApplyOp(&layerNormDxOp{opBase: newOpBase(), fwd: op, res: op.next != nil}, dxIn...)
	if err != nil {
		return nil, err
	}
	// dx is an input of the parameter-gradient ops only to order them after
	// it: on the float32 path it computes dw and db in its own pass.
	dw, err := G.ApplyOp(&layerNormParamGradOp{opBase: newOpBase(), fwd: op}, x, output, dx, grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&layerNormParamGradOp{opBase: newOpBase(), fwd: op, bias: true}, dx, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dw, db}, nil
}

// layerNormDxOp maps (x, w, y, dy) to dx using the forward's μ and rstd;
// with res, (x, w, y, dy, r) to dx + r, r being the gradient of the
// residual sum that x also feeds (see [Residual]).
type layerNormDxOp struct {
	opBase
	fwd *layerNormOp
	res bool
	out buffer
}

func (op *layerNormDxOp) Arity() int {
	if op.res {
		return 5
	}
	return 4
}

func (op *layerNormDxOp) Type() hm.Type {
	ranks := []int{2, 1, 2, 2, 2}
	if op.res {
		ranks = []int{2, 1, 2, 2, 2, 2}
	}
	if op.fwd.words {
		return fnTypeWords(2, ranks...)
	}
	return fnType(ranks...)
}

func (op *layerNormDxOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeLike("LayerNormDx", in, 0)
}

func (op *layerNormDxOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := densesOrdering("LayerNormDx", vs, op.Arity(), 2)
	if err != nil {
		return nil, err
	}
	x, w, dy := in[0], in[1], in[3]
	f := op.fwd
	m := x.Shape()[0]
	if len(f.rstd) != m || !dy.Shape().Eq(x.Shape()) {
		return nil, fmt.Errorf("LayerNormDx: x %v, dy %v and the forward's %d rows do not match", x.Shape(), dy.Shape(), len(f.rstd))
	}
	var res *tensor.Dense
	if op.res {
		if res = in[4]; !res.Shape().Eq(x.Shape()) {
			return nil, fmt.Errorf("LayerNormDx: residual gradient %v, x %v", res.Shape(), x.Shape())
		}
	}
	dx := op.out.get(x.Dtype(), m, f.d)
	switch x.Dtype() {
	case tensor.Float32:
		clear(f.dw32)
		clear(f.db32)
		if res != nil {
			kernels.LayerNormBackwardRowsAdd(data[float32](dx), f.dw32, f.db32, data[float32](dy), data[float32](x), f.mean32, f.rstd32, data[float32](w), data[float32](res), m, f.d)
		} else {
			kernels.LayerNormBackwardRows(data[float32](dx), f.dw32, f.db32, data[float32](dy), data[float32](x), f.mean32, f.rstd32, data[float32](w), m, f.d)
		}
	default:
		var r []float64
		if res != nil {
			r = data[float64](res)
		}
		layerNormDx(data[float64](dx), data[float64](x), data[float64](w), data[float64](dy), r, f.mean, f.rstd, f.d)
	}
	return dx, nil
}

// layerNormDx: dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) per row, g = dy·w,
// plus res when res is not nil.
func layerNormDx[T Float](dx, x, w, dy, res []T, mean, rstd []float64, d int) {
	parallelFor(len(mean), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xr, gr, out := x[i*d:(i+1)*d], dy[i*d:(i+1)*d], dx[i*d:(i+1)*d]
			mu, r := mean[i], rstd[i]
			var sg, sgx float64
			for j, v := range xr {
				g := float64(gr[j]) * float64(w[j])
				sg += g
				sgx += g * (float64(v) - mu) * r
			}
			sg /= float64(d)
			sgx /= float64(d)
			for j, v := range xr {
				g := float64(gr[j]) * float64(w[j])
				out[j] = T(r * (g - sg - (float64(v)-mu)*r*sgx))
			}
			if res != nil {
				for j, v := range res[i*d : (i+1)*d] {
					out[j] += v
				}
			}
		}
	})
}

func (op *layerNormDxOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "LayerNormDx(fwd#%d,res=%v)", op.fwd.id, op.res)
	op.writeID(h)
}
func (op *layerNormDxOp) Hashcode() uint32 { return hashOf(op) }
func (op *layerNormDxOp) String() string   { return "LayerNormDx" }

// layerNormParamGradOp is dw = Σ_rows dy·x̂ from (x, y, dy), or, with bias,
// db = Σ_rows dy from (dy); both (M,D) → (D) with float64 column accumulators.
type layerNormParamGradOp struct {
	opBase
	fwd  *layerNormOp
	bias bool
	out  buffer
	acc  []float64
}

func (op *layerNormParamGradOp) name() string {
	if op.bias {
		return "LayerNormDb"
	}
	return "LayerNormDw"
}

func (op *layerNormParamGradOp) Arity() int {
	if op.bias {
		return 2
	}
	return 4
}

func (op *layerNormParamGradOp) Type() hm.Type {
	if op.bias {
		return fnType(2, 2, 1)
	}
	if op.fwd.words {
		return fnTypeWords(1, 2, 2, 2, 2, 1)
	}
	return fnType(2, 2, 2, 2, 1)
}

func (op *layerNormParamGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.fwd.d}, nil
}

func (op *layerNormParamGradOp) Do(vs ...G.Value) (G.Value, error) {
	order := -1 // (x, y, dx, dy): y only orders the op after the forward
	if !op.bias {
		order = 1
	}
	in, err := densesOrdering(op.name(), vs, op.Arity(), order)
	if err != nil {
		return nil, err
	}
	f := op.fwd
	dy := in[len(in)-1]
	if dy.Dims() != 2 || dy.Shape()[1] != f.d {
		return nil, fmt.Errorf("%s: want dy (M,%d), got %v", op.name(), f.d, dy.Shape())
	}
	m := dy.Shape()[0]
	if !op.bias && (len(f.rstd) != m || !in[0].Shape().Eq(dy.Shape())) {
		return nil, fmt.Errorf("%s: x %v, dy %v and the forward's %d rows do not match", op.name(), in[0].Shape(), dy.Shape(), len(f.rstd))
	}
	if len(op.acc) != f.d {
		op.acc = make([]float64, f.d)
	}
	g := op.out.get(dy.Dtype(), f.d)
	switch dy.Dtype() {
	case tensor.Float32: // computed by the dx op (an input, so it ran first)
		if op.bias {
			copy(data[float32](g), f.db32)
		} else {
			copy(data[float32](g), f.dw32)
		}
	default:
		var x []float64
		if !op.bias {
			x = data[float64](in[0])
		}
		layerNormParamGrad(data[float64](g), x, data[float64](dy), f.mean, f.rstd, op.acc, m, f.d)
	}
	return g, nil
}

// layerNormParamGrad: dst[j] = Σ_i dy[i,j]·x̂[i,j], or Σ_i dy[i,j] when x is nil.
// Workers own disjoint column ranges, so no reduction is needed.
func layerNormParamGrad[T Float](dst, x, dy []T, mean, rstd, acc []float64, m, d int) {
	parallelFor(d, func(lo, hi int) {
		a := acc[lo:hi]
		clear(a)
		for i := 0; i < m; i++ {
			gr := dy[i*d+lo : i*d+hi]
			if x == nil {
				for j, g := range gr {
					a[j] += float64(g)
				}
				continue
			}
			xr := x[i*d+lo : i*d+hi]
			mu, r := mean[i], rstd[i]
			for j, g := range gr {
				a[j] += float64(g) * (float64(xr[j]) - mu) * r
			}
		}
		for j, v := range a {
			dst[lo+j] = T(v)
		}
	})
}

func (op *layerNormParamGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "%s(fwd#%d)", op.name(), op.fwd.id)
	op.writeID(h)
}
func (op *layerNormParamGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *layerNormParamGradOp) String() string   { return op.name() }
