package graph

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RecomputeInput makes a GELULinear forget its input u between the passes:
// its backward pass computes u again, from the Linear that made it (its
// input, weight and bias, which the graph keeps anyway), when the gradient
// reaches it. u is a (B·T, hidden) float32 matrix per block (an MLP's
// mlp.fc1 output), the largest activation a bfloat16 training step keeps;
// without it the step keeps one block's u at a time instead of all of
// them, for one more fc1 product per block in the backward pass. The same
// op on the same inputs gives the same bits, so no result changes
// (layers.TestRecomputeMLP). u must be the output of a Linear.
func RecomputeInput() OpOption {
	return func(o *opOptions) { o.recompute = true }
}

// recomputes reports whether opts ask for RecomputeInput.
func recomputes(opts []OpOption) bool {
	var o opOptions
	for _, f := range opts {
		f(&o)
	}
	return o.recompute
}

// recomputeOp is a forward Linear run again in the backward pass
// (RecomputeInput): a copy of the Linear (its own id and output buffer),
// with the gradient that must exist before it runs as an extra first
// input, which it does not read. The dependence puts it after that
// gradient in the tape, so its output lives only in the backward pass.
type recomputeOp struct {
	linearOp
}

// recomputeOf returns the node that computes u again once after is known:
// u's Linear applied to u's own operands.
func recomputeOf(u, after *G.Node) (*G.Node, error) {
	lin, ok := u.Op().(*linearOp)
	if !ok {
		return nil, fmt.Errorf("RecomputeInput: the input %s is the output of %v, not of a Linear", u.Name(), u.Op())
	}
	op := &recomputeOp{linearOp: linearOp{opBase: newOpBase(), wRank: lin.wRank, bias: lin.bias, bf16: lin.bf16, words: lin.words, outWords: lin.outWords, act: lin.act}}
	args := append(G.Nodes{after}, children(u.Graph(), u)...)
	return G.ApplyOp(op, args...)
}

func (op *recomputeOp) Arity() int { return op.linearOp.Arity() + 1 }

func (op *recomputeOp) Type() hm.Type {
	ts := op.linearOp.Type().(*hm.FunctionType).FlatTypes()
	after := G.TensorType{Dims: 2, Of: hm.TypeVariable('a')} // a float32 gradient, as the Linear's float32 operands
	return hm.NewFnType(append([]hm.Type{after}, ts...)...)
}

func (op *recomputeOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("Recompute(Linear): no inputs")
	}
	return op.linearOp.InferShape(in[1:]...)
}

func (op *recomputeOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != op.Arity() {
		return nil, fmt.Errorf("Recompute(Linear): want %d inputs, got %d", op.Arity(), len(vs))
	}
	return op.linearOp.Do(vs[1:]...)
}

func (op *recomputeOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "Recompute:")
	op.linearOp.WriteHash(h)
}

// DiffWRT: nothing; the op is built by a gradient and never differentiated.
func (op *recomputeOp) DiffWRT(n int) []bool { return make([]bool, n) }

func (op *recomputeOp) Hashcode() uint32 { return hashOf(op) }
func (op *recomputeOp) String() string   { return "Recompute(Linear)" }
