package graph

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
)

// PackedWeight is a Linear weight laid out once for inference products
// (LinearPacked): float32 weights as the micro-kernel's panels
// (kernels.PackB, or kernels.PackBBF16 for bfloat16 products), float64
// ones transposed to [in, out].
type PackedWeight struct {
	k, n int
	dt   tensor.Dtype
	f32  *kernels.PackedB    // bfloat16 products when f32.BF16()
	i8   *kernels.PackedInt8 // int8 products (INT8)
	f64  []float64           // (K, N)
}

// PackWeight lays out w (N, …), stored [out, in] as Linear takes it, its
// trailing dimensions flattened to K. The result does not share memory with
// w: later writes to w are not seen. WithPrecision(BF16) packs it for
// bfloat16 products: the LinearPacked ops reading it then compute what a
// BF16 Linear does. WithPrecision(INT8) quantizes it (float32 only) for
// int8 products (kernels.QuantizeInt8, kernels.Int8Linear).
func PackWeight(w *tensor.Dense, opts ...OpOption) (*PackedWeight, error) {
	s := w.Shape()
	if s.Dims() < 2 || s[0] == 0 || s.TotalSize() == 0 {
		return nil, fmt.Errorf("PackWeight: want (N, …), got %v", s)
	}
	n := s[0]
	k := s.TotalSize() / n
	if PrecisionOf(opts...).IsInt8() {
		src, ok := w.Data().([]float32)
		if !ok {
			return nil, &PrecisionError{Op: "PackWeight", Precision: INT8, Dtype: w.Dtype()}
		}
		return &PackedWeight{k: k, n: n, dt: w.Dtype(), i8: kernels.QuantizeInt8(src, n, k, k)}, nil
	}
	bf16, err := bf16Of("PackWeight", w.Dtype(), opts)
	if err != nil {
		return nil, err
	}
	p := &PackedWeight{k: k, n: n, dt: w.Dtype()}
	switch src := w.Data().(type) {
	case []float32:
		if bf16 {
			p.f32 = kernels.PackBBF16(true, k, n, src, k)
		} else {
			p.f32 = kernels.PackB(true, k, n, src, k)
		}
	case []float64:
		p.f64 = make([]float64, k*n)
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				p.f64[j*n+i] = src[i*k+j]
			}
		}
	default:
		return nil, fmt.Errorf("PackWeight: unsupported dtype %v", w.Dtype())
	}
	return p, nil
}

// Precision is the precision of the products that read p.
func (p *PackedWeight) Precision() Precision {
	if p.i8 != nil {
		return INT8
	}
	if p.f32 != nil && p.f32.BF16() {
		return BF16
	}
	return FP32
}

// LinearPacked returns x·Wᵀ + b, Linear on a weight packed once by
// PackWeight: x is (M, K), b is (N) or nil. It is Linear for an inference
// graph whose weights no longer change. Linear lays its [out, in] weight out
// again on every call, once per goroutine when the rows are split over the
// cores (at batch 1 a product does only a few hundred FLOPs per weight
// element, so that copy is a large share of it); LinearPacked reads panels
// made once. The sums are Linear's, bit for bit
// (TestLinearPackedMatchesLinear), and with a weight packed for BF16 those
// of a BF16 Linear. It has no gradient.
func LinearPacked(x *G.Node, w *PackedWeight, b *G.Node) (*G.Node, error) {
	return linearPacked(x, w, b, nil, nil)
}

// LinearPackedGELU returns GELU(x·Wᵀ + b), LinearPacked and GELU in one op:
// the bias and the activation are applied to each block of the product by
// the goroutine that computed it, while it is in cache, instead of two more
// passes over the (M, N) output. Element by element it computes what
// LinearPacked followed by GELU does.
func LinearPackedGELU(x *G.Node, w *PackedWeight, b *G.Node, approx GELUApprox) (*G.Node, error) {
	if approx != GELUExact && approx != GELUTanh {
		return nil, fmt.Errorf("LinearPackedGELU: unknown approximation %v", approx)
	}
	return linearPacked(x, w, b, nil, &approx)
}

// LinearPackedAdd returns r + (x·Wᵀ + b): a residual branch's last Linear
// and the residual sum in one op, fused as LinearPackedGELU is. r is (M, N).
// Element by element it computes what LinearPacked followed by Add (or
// Residual) does.
func LinearPackedAdd(x *G.Node, w *PackedWeight, b, r *G.Node) (*G.Node, error) {
	if r == nil {
		return nil, fmt.Errorf("LinearPackedAdd: no residual given")
	}
	return linearPacked(x, w, b, r, nil)
}

func linearPacked(x *G.Node, w *PackedWeight, b, r *G.Node, act *GELUApprox) (*G.Node, error) {
	if x.Dims() != 2 || w == nil {
		return nil, fmt.Errorf("LinearPacked: want x (M,K) and a packed weight, got %v", x.Shape())
	}
	if x.Shape()[1] != w.k || x.Dtype() != w.dt {
		return nil, fmt.Errorf("LinearPacked: x %v of %v does not fit a %v weight of %d inputs", x.Shape(), x.Dtype(), w.dt, w.k)
	}
	op := &linearPackedOp{opBase: newOpBase(), w: w, act: act}
	in := []*G.Node{x}
	if b != nil {
		if b.Dims() != 1 || b.Shape()[0] != w.n {
			return nil, fmt.Errorf("LinearPacked: bias %v does not match %d outputs", b.Shape(), w.n)
		}
		op.bias = true
		in = append(in, b)
	}
	if r != nil {
		if !r.Shape().Eq(tensor.Shape{x.Shape()[0], w.n}) {
			return nil, fmt.Errorf("LinearPackedAdd: residual %v, want (%d, %d)", r.Shape(), x.Shape()[0], w.n)
		}
		op.residual = true
		in = append(in, r)
	}
	return G.ApplyOp(op, in...)
}

type linearPackedOp struct {
	opBase
	w        *PackedWeight
	bias     bool        // input 1 is the bias
	residual bool        // the last input is added to the result
	act      *GELUApprox // GELU applied to the result, if not nil
	out      buffer
}

func (op *linearPackedOp) outBuffer() *buffer { return &op.out }

func (op *linearPackedOp) Arity() int {
	n := 1
	if op.bias {
		n++
	}
	if op.residual {
		n++
	}
	return n
}

func (op *linearPackedOp) Type() hm.Type {
	ranks := []int{2}
	if op.bias {
		ranks = append(ranks, 1)
	}
	if op.residual {
		ranks = append(ranks, 2)
	}
	return fnType(append(ranks, 2)...)
}

func (op *linearPackedOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, err := shapeOf("LinearPacked", in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{x[0], op.w.n}, nil
}

func (op *linearPackedOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("LinearPacked", vs, op.Arity())
	if err != nil {
		return nil, err
	}
	x := in[0]
	m, k, n := x.Shape()[0], x.Shape()[1], op.w.n
	if k != op.w.k || x.Dtype() != op.w.dt {
		return nil, fmt.Errorf("LinearPacked: x %v of %v does not fit a %v weight of %d inputs", x.Shape(), x.Dtype(), op.w.dt, op.w.k)
	}
	var bias, res *tensor.Dense
	if op.bias {
		bias = in[1]
	}
	if op.residual {
		res = in[len(in)-1]
		if !res.Shape().Eq(tensor.Shape{m, n}) {
			return nil, fmt.Errorf("LinearPackedAdd: residual %v, want (%d, %d)", res.Shape(), m, n)
		}
	}
	y := op.out.get(x.Dtype(), m, n)
	if x.Dtype() == tensor.Float32 {
		op.forward32(data[float32](y), data[float32](x), bias, res, m, n, k)
		return y, nil
	}
	y64 := data[float64](y)
	var beta float64
	if bias != nil {
		for i := 0; i < m; i++ {
			copy(y64[i*n:(i+1)*n], data[float64](bias))
		}
		beta = 1
	}
	gemm(false, false, m, n, k, 1, data[float64](x), k, op.w.f64, n, beta, y64, n)
	if res != nil {
		add(y64, data[float64](res), y64)
	}
	if op.act != nil {
		f := geluExact[float64]
		if *op.act == GELUTanh {
			f = geluTanh[float64]
		}
		f(y64, y64)
	}
	return y, nil
}

// forward32 is the float32 product with the bias, the residual and the
// activation applied per finished block: y = x·W, then per element
// y += bias, y = r + y, y = GELU(y), each as its own op would compute it.
func (op *linearPackedOp) forward32(y, x []float32, bias, res *tensor.Dense, m, n, k int) {
	var b, r []float32
	if bias != nil {
		b = data[float32](bias)
	}
	if res != nil {
		r = data[float32](res)
	}
	// epilogue finishes a block of y: y += bias (when b is given), y = r + y,
	// then the activation, each as its own op computes it.
	epilogue := func(b []float32) func(i0, i1, j0, j1 int) {
		exact := op.act != nil && *op.act == GELUExact
		tanh := op.act != nil && *op.act == GELUTanh
		return func(i0, i1, j0, j1 int) {
			var bs, rs []float32
			if b != nil {
				bs = b[j0:j1]
			}
			for i := i0; i < i1; i++ {
				row := y[i*n+j0 : i*n+j1]
				if r != nil {
					rs = r[i*n+j0 : i*n+j1]
				}
				kernels.EpilogueRow(row, bs, rs, exact)
				if tanh {
					geluTanhForward32(row, row)
				}
			}
		}
	}
	if op.w.i8 != nil {
		// Int8LinearThen adds the bias itself, as EpilogueRow would (y + b).
		var then func(i0, i1, j0, j1 int)
		if r != nil || op.act != nil {
			then = epilogue(nil)
		}
		kernels.Int8LinearThen(y, n, x, k, m, op.w.i8, b, then)
		return
	}
	if b == nil && r == nil && op.act == nil {
		kernels.SgemmPacked(m, x, k, op.w.f32, y, n)
		return
	}
	kernels.SgemmPackedThen(m, x, k, op.w.f32, y, n, epilogue(b))
}

func (op *linearPackedOp) WriteHash(h hash.Hash) {
	act := "none"
	if op.act != nil {
		act = op.act.String()
	}
	fmt.Fprintf(h, "LinearPacked(%dx%d,bias=%t,residual=%t,gelu=%s%s)", op.w.k, op.w.n, op.bias, op.residual, act, packedTag(op.w.Precision()))
	op.writeID(h)
}
func (op *linearPackedOp) Hashcode() uint32 { return hashOf(op) }
func (op *linearPackedOp) String() string {
	switch {
	case op.act != nil:
		return "LinearPackedGELU"
	case op.residual:
		return "LinearPackedAdd"
	}
	return "LinearPacked"
}
