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
// (kernels.PackB), float64 ones transposed to [in, out].
type PackedWeight struct {
	k, n int
	dt   tensor.Dtype
	f32  *kernels.PackedB
	f64  []float64 // (K, N)
}

// PackWeight lays out w (N, …), stored [out, in] as Linear takes it, its
// trailing dimensions flattened to K. The result does not share memory with
// w: later writes to w are not seen.
func PackWeight(w *tensor.Dense) (*PackedWeight, error) {
	s := w.Shape()
	if s.Dims() < 2 || s[0] == 0 || s.TotalSize() == 0 {
		return nil, fmt.Errorf("PackWeight: want (N, …), got %v", s)
	}
	n := s[0]
	k := s.TotalSize() / n
	p := &PackedWeight{k: k, n: n, dt: w.Dtype()}
	switch src := w.Data().(type) {
	case []float32:
		p.f32 = kernels.PackB(true, k, n, src, k)
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

// LinearPacked returns x·Wᵀ + b, Linear on a weight packed once by
// PackWeight: x is (M, K), b is (N) or nil. It is Linear for an inference
// graph whose weights no longer change. Linear lays its [out, in] weight out
// again on every call, once per goroutine when the rows are split over the
// cores (which for ViT-Ti/16 at batch 1 took about as long as the products);
// LinearPacked reads panels made once. The sums are Linear's, bit for bit
// (TestLinearPackedMatchesLinear). It has no gradient.
func LinearPacked(x *G.Node, w *PackedWeight, b *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || w == nil {
		return nil, fmt.Errorf("LinearPacked: want x (M,K) and a packed weight, got %v", x.Shape())
	}
	if x.Shape()[1] != w.k || x.Dtype() != w.dt {
		return nil, fmt.Errorf("LinearPacked: x %v of %v does not fit a %v weight of %d inputs", x.Shape(), x.Dtype(), w.dt, w.k)
	}
	op := &linearPackedOp{opBase: newOpBase(), w: w}
	if b == nil {
		return G.ApplyOp(op, x)
	}
	if b.Dims() != 1 || b.Shape()[0] != w.n {
		return nil, fmt.Errorf("LinearPacked: bias %v does not match %d outputs", b.Shape(), w.n)
	}
	op.bias = true
	return G.ApplyOp(op, x, b)
}

type linearPackedOp struct {
	opBase
	w    *PackedWeight
	bias bool
	out  buffer
}

func (op *linearPackedOp) outBuffer() *buffer { return &op.out }

func (op *linearPackedOp) Arity() int {
	if op.bias {
		return 2
	}
	return 1
}

func (op *linearPackedOp) Type() hm.Type {
	if op.bias {
		return fnType(2, 1, 2)
	}
	return fnType(2, 2)
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
	y := op.out.get(x.Dtype(), m, n)
	if x.Dtype() == tensor.Float32 {
		y32 := data[float32](y)
		kernels.SgemmPacked(m, data[float32](x), k, op.w.f32, y32, n)
		if op.bias {
			kernels.AddBias(y32, data[float32](in[1]), m, n)
		}
		return y, nil
	}
	y64 := data[float64](y)
	var beta float64
	if op.bias {
		for i := 0; i < m; i++ {
			copy(y64[i*n:(i+1)*n], data[float64](in[1]))
		}
		beta = 1
	}
	gemm(false, false, m, n, k, 1, data[float64](x), k, op.w.f64, n, beta, y64, n)
	return y, nil
}

func (op *linearPackedOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "LinearPacked(%dx%d,bias=%t)", op.w.k, op.w.n, op.bias)
	op.writeID(h)
}
func (op *linearPackedOp) Hashcode() uint32 { return hashOf(op) }
func (op *linearPackedOp) String() string   { return "LinearPacked" }
