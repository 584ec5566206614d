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
// Linear and LayerNorm offer it; GELULinear refuses it. An operand that is itself a Recompute output is
// computed again too, so a chain (norm1 → qkv) is kept as its first input
// only. The copy is made once per node and shared by its backward readers;
// it lives from the first of them to the last, so a training step keeps
// one block's copies at a time instead of every block's outputs, for one
// more forward op each in the backward pass. The same op on the same
// inputs gives the same bits: no result changes
// (layers.TestRecompute).
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
	switch op := n.Op().(type) {
	case *linearOp:
		if !op.recompute {
			return n, nil
		}
		if op.again == nil {
			a := &linearAgainOp{linearOp: linearOp{opBase: newOpBase(), wRank: op.wRank, bias: op.bias, bf16: op.bf16, words: op.words, outWords: op.outWords, act: op.act}}
			node, err := applyAgain(a, n, after)
			if err != nil {
				return nil, err
			}
			op.again = node
		}
		return op.again, nil
	case *layerNormOp:
		if !op.recompute {
			return n, nil
		}
		if op.again == nil {
			a := &layerNormAgainOp{layerNormOp: layerNormOp{opBase: newOpBase(), eps: op.eps, d: op.d, words: op.words, x: op.x}}
			node, err := applyAgain(a, n, after)
			if err != nil {
				return nil, err
			}
			op.again = node
		}
		return op.again, nil
	}
	return n, nil
}

// applyAgain applies the copy op to after and n's operands, each as the
// backward pass reads it (kept).
func applyAgain(op G.Op, n, after *G.Node) (*G.Node, error) {
	args := G.Nodes{after}
	for _, c := range children(n.Graph(), n) {
		k, err := kept(c, after)
		if err != nil {
			return nil, err
		}
		args = append(args, k)
	}
	node, err := G.ApplyOp(op, args...)
	if err != nil {
		return nil, fmt.Errorf("Recompute %s: %w", n.Name(), err)
	}
	return node, nil
}

// againType is a forward op's type with a leading float32 gradient input,
// which the copy does not read: the dependence puts it after that gradient
// in the tape, so its output lives only in the backward pass.
func againType(fwd hm.Type) hm.Type {
	ts := fwd.(*hm.FunctionType).FlatTypes()
	after := G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	return hm.NewFnType(append([]hm.Type{after}, ts...)...)
}

// linearAgainOp is a Linear run again in the backward pass (Recompute): a
// copy of the Linear, with its own id and output buffer.
type linearAgainOp struct {
	linearOp
}

func (op *linearAgainOp) Arity() int    { return op.linearOp.Arity() + 1 }
func (op *linearAgainOp) Type() hm.Type { return againType(op.linearOp.Type()) }

func (op *linearAgainOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("Recompute(Linear): no inputs")
	}
	return op.linearOp.InferShape(in[1:]...)
}

func (op *linearAgainOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != op.Arity() {
		return nil, fmt.Errorf("Recompute(Linear): want %d inputs, got %d", op.Arity(), len(vs))
	}
	return op.linearOp.Do(vs[1:]...)
}

func (op *linearAgainOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "Recompute:")
	op.linearOp.WriteHash(h)
}

// DiffWRT: nothing; the op is built by a gradient and never differentiated.
func (op *linearAgainOp) DiffWRT(n int) []bool { return make([]bool, n) }

func (op *linearAgainOp) Hashcode() uint32 { return hashOf(op) }
func (op *linearAgainOp) String() string   { return "Recompute(Linear)" }

// layerNormAgainOp is a LayerNorm run again in the backward pass
// (Recompute): a copy with its own id, output buffer and row statistics
// (the forward's, which the gradient ops read, stay as they are).
type layerNormAgainOp struct {
	layerNormOp
}

func (op *layerNormAgainOp) Arity() int    { return op.layerNormOp.Arity() + 1 }
func (op *layerNormAgainOp) Type() hm.Type { return againType(op.layerNormOp.Type()) }

func (op *layerNormAgainOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("Recompute(LayerNorm): no inputs")
	}
	return op.layerNormOp.InferShape(in[1:]...)
}

func (op *layerNormAgainOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != op.Arity() {
		return nil, fmt.Errorf("Recompute(LayerNorm): want %d inputs, got %d", op.Arity(), len(vs))
	}
	return op.layerNormOp.Do(vs[1:]...)
}

func (op *layerNormAgainOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "Recompute:")
	op.layerNormOp.WriteHash(h)
}

// DiffWRT: nothing; the op is built by a gradient and never differentiated.
func (op *layerNormAgainOp) DiffWRT(n int) []bool { return make([]bool, n) }

func (op *layerNormAgainOp) Hashcode() uint32 { return hashOf(op) }
func (op *layerNormAgainOp) String() string   { return "Recompute(LayerNorm)" }
