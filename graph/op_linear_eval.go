package graph

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
)

// LinearKN returns x·W + b for a weight stored [in, out]: x is (M, K), wt is
// (K, N) and b is (N) or nil. It is Linear for an inference graph that holds
// its weights already transposed (TransposeWeight): the product reads them
// in place, whereas Linear's [out, in] weights are repacked on every call,
// once per goroutine when the rows are split over the cores (which for the
// narrow projections of a ViT at batch 1 cost more than the product). It
// has no gradient.
func LinearKN(x, wt, b *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || wt.Dims() != 2 {
		return nil, fmt.Errorf("LinearKN: want x (M,K) and wt (K,N), got %v and %v", x.Shape(), wt.Shape())
	}
	if k := x.Shape()[1]; wt.Shape()[0] != k {
		return nil, fmt.Errorf("LinearKN: x has %d columns but wt %v has %d rows", k, wt.Shape(), wt.Shape()[0])
	}
	op := &linearKNOp{opBase: newOpBase(), bias: b != nil}
	if b == nil {
		return G.ApplyOp(op, x, wt)
	}
	if b.Dims() != 1 || b.Shape()[0] != wt.Shape()[1] {
		return nil, fmt.Errorf("LinearKN: bias %v does not match wt %v", b.Shape(), wt.Shape())
	}
	return G.ApplyOp(op, x, wt, b)
}

// TransposeWeight returns w (N, …) stored [out, in], its trailing dimensions
// flattened to K, as a new (K, N) tensor for LinearKN.
func TransposeWeight(w *tensor.Dense) (*tensor.Dense, error) {
	s := w.Shape()
	if s.Dims() < 2 {
		return nil, fmt.Errorf("TransposeWeight: want (N, …), got %v", s)
	}
	n := s[0]
	k := s.TotalSize() / n
	switch src := w.Data().(type) {
	case []float32:
		return tensor.New(tensor.WithShape(k, n), tensor.WithBacking(transposed(src, n, k))), nil
	case []float64:
		return tensor.New(tensor.WithShape(k, n), tensor.WithBacking(transposed(src, n, k))), nil
	}
	return nil, fmt.Errorf("TransposeWeight: unsupported dtype %v", w.Dtype())
}

// transposed returns the (cols, rows) transpose of the row-major src.
func transposed[T Float](src []T, rows, cols int) []T {
	dst := make([]T, rows*cols)
	const tile = 32
	for i0 := 0; i0 < rows; i0 += tile {
		for j0 := 0; j0 < cols; j0 += tile {
			for i := i0; i < min(i0+tile, rows); i++ {
				for j := j0; j < min(j0+tile, cols); j++ {
					dst[j*rows+i] = src[i*cols+j]
				}
			}
		}
	}
	return dst
}

type linearKNOp struct {
	opBase
	bias bool
	out  buffer
}

func (op *linearKNOp) outBuffer() *buffer { return &op.out }

func (op *linearKNOp) Arity() int {
	if op.bias {
		return 3
	}
	return 2
}

func (op *linearKNOp) Type() hm.Type {
	if op.bias {
		return fnType(2, 2, 1, 2)
	}
	return fnType(2, 2, 2)
}

func (op *linearKNOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, err := shapeOf("LinearKN", in, 0)
	if err != nil {
		return nil, err
	}
	w, err := shapeOf("LinearKN", in, 1)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{x[0], w[1]}, nil
}

func (op *linearKNOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("LinearKN", vs, op.Arity())
	if err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	m, k, n := x.Shape()[0], x.Shape()[1], w.Shape()[1]
	if !w.Shape().Eq(tensor.Shape{k, n}) {
		return nil, fmt.Errorf("LinearKN: x %v and wt %v do not fit", x.Shape(), w.Shape())
	}
	y := op.out.get(x.Dtype(), m, n)
	switch x.Dtype() {
	case tensor.Float32:
		linearKNForward(data[float32](y), data[float32](x), data[float32](w), biasData[float32](in, op.bias), m, n, k)
	default:
		linearKNForward(data[float64](y), data[float64](x), data[float64](w), biasData[float64](in, op.bias), m, n, k)
	}
	return y, nil
}

// linearKNForward: (M,K)·(K,N) + b → (M,N), the bias added after the
// product as linearForward does, so both give the same sums.
func linearKNForward[T Float](y, x, w, b []T, m, n, k int) {
	if y32, ok := any(y).([]float32); ok {
		gemm(false, false, m, n, k, 1, x, k, w, n, 0, y, n)
		if b != nil {
			kernels.AddBias(y32, any(b).([]float32), m, n)
		}
		return
	}
	var beta T
	if b != nil {
		for i := 0; i < m; i++ {
			copy(y[i*n:(i+1)*n], b)
		}
		beta = 1
	}
	gemm(false, false, m, n, k, 1, x, k, w, n, beta, y, n)
}

func (op *linearKNOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "LinearKN(bias=%t)", op.bias)
	op.writeID(h)
}
func (op *linearKNOp) Hashcode() uint32 { return hashOf(op) }
func (op *linearKNOp) String() string   { return "LinearKN" }
