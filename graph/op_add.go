package graph

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Add returns a + b for two tensors of the same shape: the residual
// connection. Its gradient passes the upstream gradient to both inputs.
func Add(a, b *G.Node) (*G.Node, error) {
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("Add: shapes %v and %v differ", a.Shape(), b.Shape())
	}
	return G.ApplyOp(&addOp{opBase: newOpBase(), rank: a.Dims()}, a, b)
}

type addOp struct {
	opBase
	rank int
	out  buffer
}

var _ G.SDOp = (*addOp)(nil)

func (op *addOp) Arity() int    { return 2 }
func (op *addOp) Type() hm.Type { return fnType(op.rank, op.rank, op.rank) }
func (op *addOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeLike("Add", in, 0)
}

func (op *addOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("Add", vs, 2)
	if err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("Add: shapes %v and %v differ", a.Shape(), b.Shape())
	}
	y := op.out.get(a.Dtype(), a.Shape()...)
	switch a.Dtype() {
	case tensor.Float32:
		add(data[float32](y), data[float32](a), data[float32](b))
	default:
		add(data[float64](y), data[float64](a), data[float64](b))
	}
	return y, nil
}

func add[T Float](dst, a, b []T) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	for i, v := range a {
		dst[i] = v + b[i]
	}
}

func (op *addOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "Add(%d)", op.rank); op.writeID(h) }
func (op *addOp) Hashcode() uint32      { return hashOf(op) }
func (op *addOp) String() string        { return "Add" }
func (op *addOp) DiffWRT(n int) []bool  { return []bool{true, true} }
func (op *addOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad, grad}, nil
}
