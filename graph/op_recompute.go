package graph

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Recompute keeps an op's output only for the forward pass: each op of the
// backward pass that reads it reads a copy computed again, by the same op
// on the same operands, once the gradient has reached the first of them.
// Linear, LayerNorm and Residual offer it; GELULinear refuses it. An
// operand that is itself a Recompute output is computed again too, so a
// chain (norm1 → qkv) is kept as its first input only. The copy is made
// once per node and shared by its backward readers; it lives from the
// first of them to the last, so a training step keeps one block's copies
// at a time instead of every block's outputs, for one more forward op each
// in the backward pass. The same op on the same inputs gives the same
// bits: no result changes (layers.TestRecompute).
func Recompute() OpOption {
	return func(o *opOptions) { o.recompute = true }
}

// recomputes reports whether opts ask for Recompute.
func recomputes(opts []OpOption) bool {
	var o opOptions
	for _, f := range opts {
		f(&o)
	}
	return o.recompute
}

// kept is the node a backward-pass op reads for the forward output n: n
// itself, or, when n's op is marked Recompute, its copy computed again
// after the gradient after (made on the first call, then shared).
func kept(n, after *G.Node) (*G.Node, error) {
	var mark *recomputeMark
	var fresh againable
	switch op := n.Op().(type) {
	case *linearOp:
		mark = &op.recomputeMark
		fresh = &linearOp{opBase: newOpBase(), wRank: op.wRank, bias: op.bias, bf16: op.bf16, words: op.words, outWords: op.outWords, act: op.act}
	case *layerNormOp:
		// Its own row statistics: the forward's, which the gradient ops
		// read, stay as they are.
		mark = &op.recomputeMark
		fresh = &layerNormOp{opBase: newOpBase(), eps: op.eps, d: op.d, words: op.words, x: op.x}
	case *residualOp:
		mark = &op.recomputeMark
		fresh = &addOp{newElemOp("Residual", "", 2, op.rank)}
	default:
		return n, nil
	}
	if !mark.recompute {
		return n, nil
	}
	if mark.again == nil {
		args := G.Nodes{after}
		for _, c := range children(n.Graph(), n) {
			k, err := kept(c, after)
			if err != nil {
				return nil, err
			}
			args = append(args, k)
		}
		node, err := G.ApplyOp(&againOp{opBase: newOpBase(), fwd: fresh}, args...)
		if err != nil {
			return nil, fmt.Errorf("Recompute %s: %w", n.Name(), err)
		}
		mark.again = node
	}
	return mark.again, nil
}

// recomputeMark is what an op offering Recompute holds: whether it was
// asked for, and the copy made by the first backward reader (kept).
type recomputeMark struct {
	recompute bool
	again     *G.Node
}

// againable is a forward op that can run again in the backward pass.
type againable interface {
	G.Op
	outBuffer() *buffer
}

// againOp is a forward op run again in the backward pass (Recompute): a
// fresh copy of it (its own id, output buffer and scratch), with the
// gradient that must exist before it runs as an extra first input, which
// it does not read. The dependence puts it after that gradient in the
// tape, so its output lives only in the backward pass.
type againOp struct {
	opBase
	fwd againable
}

func (op *againOp) Arity() int { return op.fwd.Arity() + 1 }

// Type is the forward op's with a leading float32 gradient.
func (op *againOp) Type() hm.Type {
	ts := op.fwd.Type().(*hm.FunctionType).FlatTypes()
	after := G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	return hm.NewFnType(append([]hm.Type{after}, ts...)...)
}

func (op *againOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%s: no inputs", op)
	}
	return op.fwd.InferShape(in[1:]...)
}

func (op *againOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != op.Arity() {
		return nil, fmt.Errorf("%s: want %d inputs, got %d", op, op.Arity(), len(vs))
	}
	return op.fwd.Do(vs[1:]...)
}

func (op *againOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "Recompute:")
	op.fwd.WriteHash(h)
	op.writeID(h)
}

// DiffWRT: nothing; the op is built by a gradient and never differentiated.
func (op *againOp) DiffWRT(n int) []bool { return make([]bool, n) }
func (op *againOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%s is never differentiated", op)
}
func (op *againOp) Hashcode() uint32   { return hashOf(op) }
func (op *againOp) String() string     { return "Recompute(" + op.fwd.String() + ")" }
func (op *againOp) outBuffer() *buffer { return op.fwd.outBuffer() }
