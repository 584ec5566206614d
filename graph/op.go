package graph

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync/atomic"

	"github.com/chewxy/hm"
	_ "go4.org/unsafe/assume-no-moving-gc" // Gorgonia panics at start on Go ≥ 1.21 without it.
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Float is the element type our kernels are written for: float32 for
// training, float64 for gradient checks.
type Float interface{ ~float32 | ~float64 }

// opIDs hands every op instance a unique id. It goes into WriteHash so that
// Gorgonia never merges two of our nodes (its hash-consing is what makes
// upstream SoftMax and LogSoftMax of the same input collide), and it ties a
// gradient op to the forward op whose saved state it reads.
var opIDs atomic.Int64

func nextOpID() int64 { return opIDs.Add(1) }

// opBase carries what every op here shares.
type opBase struct{ id int64 }

func newOpBase() opBase { return opBase{id: nextOpID()} }

func (opBase) ReturnsPtr() bool      { return false }
func (opBase) CallsExtern() bool     { return false }
func (opBase) OverwritesInput() int  { return -1 }
func (o opBase) writeID(h hash.Hash) { fmt.Fprintf(h, "#%d", o.id) }

// elemOp is the boilerplate of an op whose arity inputs are tensors of one
// rank and whose output, in its own buffer, has input 0's shape: GELU,
// LogSoftmax, Add and their kin. It supplies Arity, Type, InferShape,
// WriteHash, Hashcode, String and the output buffer; the op adds Do (and,
// to be differentiable, DiffWRT and SymDiff). name is what errors, String
// and the hash say; param, when not "", qualifies it ("GELU(tanh)").
type elemOp struct {
	opBase
	name, param string
	arity, rank int
	out         buffer
}

func newElemOp(name, param string, arity, rank int) elemOp {
	return elemOp{opBase: newOpBase(), name: name, param: param, arity: arity, rank: rank}
}

func (op *elemOp) Arity() int { return op.arity }

func (op *elemOp) Type() hm.Type {
	ranks := make([]int, op.arity+1)
	for i := range ranks {
		ranks[i] = op.rank
	}
	return fnType(ranks...)
}

func (op *elemOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeLike(op.name, in, 0)
}

func (op *elemOp) WriteHash(h hash.Hash) {
	if op.param != "" {
		fmt.Fprintf(h, "%s(%s,rank=%d)", op.name, op.param, op.rank)
	} else {
		fmt.Fprintf(h, "%s(rank=%d)", op.name, op.rank)
	}
	op.writeID(h)
}

func (op *elemOp) Hashcode() uint32 { return hashOf(op) }

func (op *elemOp) String() string {
	if op.param != "" {
		return op.name + "(" + op.param + ")"
	}
	return op.name
}

func (op *elemOp) outBuffer() *buffer { return &op.out }

// inputs checks the values Do receives: arity dense tensors of one float
// dtype and one shape.
func (op *elemOp) inputs(vs []G.Value) ([]*tensor.Dense, error) {
	in, err := denses(op.name, vs, op.arity)
	if err != nil {
		return nil, err
	}
	for i, d := range in[1:] {
		if !d.Shape().Eq(in[0].Shape()) {
			return nil, fmt.Errorf("%s: input %d %v and input 0 %v differ in shape", op.name, i+1, d.Shape(), in[0].Shape())
		}
	}
	return in, nil
}

// hashOf implements Hashcode from an op's WriteHash.
func hashOf(op interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// fnType builds an hm function type over tensors of the given ranks (0 means a
// scalar), all of the same element type.
func fnType(ranks ...int) hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, len(ranks))
	for i, r := range ranks {
		if r == 0 {
			ts[i] = a
		} else {
			ts[i] = G.TensorType{Dims: r, Of: a}
		}
	}
	return hm.NewFnType(ts...)
}

// fnTypeWords is fnType with operand i a tensor of bfloat16 words
// (tensor.Uint16, StoreBF16) instead of the shared element type.
func fnTypeWords(i int, ranks ...int) hm.Type { return wordsAt(ranks, i) }

// wordsAt is fnType(ranks...) with the operands (or result) at the
// indices words tensors of bfloat16 words.
func wordsAt(ranks []int, words ...int) hm.Type {
	ts := fnType(ranks...).(*hm.FunctionType).FlatTypes()
	for _, i := range words {
		ts[i] = G.TensorType{Dims: ranks[i], Of: tensor.Uint16}
	}
	return hm.NewFnType(ts...)
}

// shapeOf returns the i-th input shape given to InferShape.
func shapeOf(op string, in []G.DimSizer, i int) (tensor.Shape, error) {
	if i >= len(in) {
		return nil, fmt.Errorf("%s: want input %d, have %d inputs", op, i, len(in))
	}
	s, ok := in[i].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%s: input %d has no shape (%T)", op, i, in[i])
	}
	return s, nil
}

// shapeLike is InferShape for an op whose output has the shape of input i.
func shapeLike(op string, in []G.DimSizer, i int) (tensor.Shape, error) {
	s, err := shapeOf(op, in, i)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

// buffer is an op's output tensor reused across steps, so that a
// steady-state training step allocates almost nothing. By default the op
// owns it; PlanBuffers may place it in an arena slot shared with outputs
// whose lifetimes do not overlap.
type buffer struct {
	t    *tensor.Dense
	slot *slot // nil: the op owns t
	gen  int   // slot.gen that t was made over
}

// get returns a tensor of the given dtype and shape, reusing the previous one
// when it matches. Its contents are whatever the last step (or, in a slot,
// the last op using the slot) left.
func (b *buffer) get(dt tensor.Dtype, shape ...int) *tensor.Dense {
	if s := b.slot; s != nil && s.dt == dt {
		if n := tensor.Shape(shape).TotalSize(); n <= s.size {
			mem := s.backing(n)
			if b.t == nil || b.gen != s.gen || !b.t.Shape().Eq(tensor.Shape(shape)) {
				b.t, b.gen = tensor.New(tensor.WithBacking(mem), tensor.WithShape(shape...)), s.gen
			}
			return b.t
		}
		b.slot = nil // not what the plan saw: fall back to memory of its own
		b.t = nil
	}
	if b.t != nil && b.t.Dtype() == dt && b.t.Shape().Eq(tensor.Shape(shape)) {
		return b.t
	}
	b.t = tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
	return b.t
}

// dense asserts that v is a dense tensor of float32 or float64.
func dense(op string, v G.Value) (*tensor.Dense, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%s: want a dense tensor, got %T", op, v)
	}
	if dt := d.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("%s: unsupported dtype %v", op, dt)
	}
	return d, nil
}

// wordsOf asserts that v is a dense tensor of bfloat16 words (StoreBF16)
// and returns them.
func wordsOf(op string, v G.Value) (*tensor.Dense, []uint16, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, nil, fmt.Errorf("%s: want a dense tensor, got %T", op, v)
	}
	w, ok := d.Data().([]uint16)
	if !ok {
		return nil, nil, fmt.Errorf("%s: want bfloat16 words (uint16), got %v", op, d.Dtype())
	}
	return d, w, nil
}

// denses asserts all inputs are dense tensors of one float dtype.
func denses(op string, vs []G.Value, n int) ([]*tensor.Dense, error) {
	if len(vs) != n {
		return nil, fmt.Errorf("%s: want %d inputs, got %d", op, n, len(vs))
	}
	out := make([]*tensor.Dense, n)
	for i, v := range vs {
		d, err := dense(op, v)
		if err != nil {
			return nil, err
		}
		if i > 0 && d.Dtype() != out[0].Dtype() {
			return nil, fmt.Errorf("%s: input %d is %v, input 0 is %v", op, i, d.Dtype(), out[0].Dtype())
		}
		out[i] = d
	}
	return out, nil
}

// densesOrdering is denses for an op whose input order (−1: none) is there
// only to order it after the op that made it: that input may be any dense
// tensor, bfloat16 words included, and is returned unchecked.
func densesOrdering(op string, vs []G.Value, n, order int) ([]*tensor.Dense, error) {
	if order < 0 || order >= len(vs) {
		return denses(op, vs, n)
	}
	rest := append(append([]G.Value(nil), vs[:order]...), vs[order+1:]...)
	in, err := denses(op, rest, n-1)
	if err != nil {
		return nil, err
	}
	d, ok := vs[order].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%s: want a dense tensor as input %d, got %T", op, order, vs[order])
	}
	return append(in[:order:order], append([]*tensor.Dense{d}, in[order:]...)...), nil
}

// scalarValue reads a scalar Value (the upstream gradient of a loss).
func scalarValue(op string, v G.Value) (float64, error) {
	switch s := v.(type) {
	case *G.F32:
		return float64(*s), nil
	case *G.F64:
		return float64(*s), nil
	case *tensor.Dense:
		if s.Size() != 1 {
			return 0, fmt.Errorf("%s: want a scalar, got shape %v", op, s.Shape())
		}
		switch x := s.Data().(type) {
		case float32:
			return float64(x), nil
		case float64:
			return x, nil
		case []float32:
			return float64(x[0]), nil
		case []float64:
			return x[0], nil
		}
	}
	return 0, fmt.Errorf("%s: want a scalar, got %T", op, v)
}

// newScalar wraps v as a scalar Value of dtype dt.
func newScalar(dt tensor.Dtype, v float64) G.Value {
	if dt == tensor.Float32 {
		return G.NewF32(float32(v))
	}
	return G.NewF64(v)
}

// data returns the backing slice of a float tensor as []T.
func data[T Float](d *tensor.Dense) []T { return d.Data().([]T) }
