package graph

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Stochastic is shared by a graph's stochastic ops; the training loop sets Step before every run.
//
// Training false (evaluation) makes Dropout and DropPath the identity. The
// masks are a pure function of (Seed, Step, stream, element or sample index),
// so a graph rebuilt in a new process, or a run resumed at a given step,
// draws exactly the same masks.
type Stochastic struct {
	Training bool
	Seed     uint64
	Step     uint64

	// Rows, when set, gives for each sample of the graph's batch its
	// position in the global batch of the step, and the masks are those of
	// that position: a data-parallel rank, or one micro-batch of gradient
	// accumulation, draws exactly what a one-process run over the whole
	// batch draws. Nil: sample i is position i.
	Rows []int
}

// position maps element i of a tensor of n elements over len(s.Rows)
// samples to its index in the global batch's tensor.
func (s *Stochastic) position(i, n int) uint64 {
	if s.Rows == nil {
		return uint64(i)
	}
	per := n / len(s.Rows)
	return uint64(s.Rows[i/per]*per + i%per)
}

// StreamID derives a stable stream id for a stochastic op from the path of
// the layer it belongs to (e.g. "blocks.3.drop_path1"): the 64-bit FNV-1a
// hash of the path. layers also keys each parameter's init stream by
// StreamID of its name.
func StreamID(path string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	return h.Sum64()
}

// golden is splitmix64's increment, 2⁶⁴/φ.
const golden = 0x9e3779b97f4a7c15

// mix64 is splitmix64's output function (Stafford's Mix13).
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// maskKey folds (seed, step, stream) into the seed of one mask's splitmix64 sequence.
func maskKey(seed, step, stream uint64) uint64 {
	k := mix64(seed + golden)
	k = mix64(k ^ (step + golden))
	return mix64(k ^ (stream + golden))
}

// keepDraw reports whether index i of the mask seeded by key is kept, with
// probability keep: the i-th splitmix64 output as a uniform in [0, 1).
func keepDraw(key, i uint64, keep float64) bool {
	u := float64(mix64(key+(i+1)*golden)>>11) * 0x1p-53
	return u < keep
}

// Dropout zeroes each element of x with probability p and scales the kept
// ones by 1/(1−p), as PyTorch's nn.Dropout does, when s.Training is set and
// p > 0; otherwise it is the identity (a copy) and so is its gradient. x may
// have any rank ≥ 1. p must be in [0, 1): p = 1 would zero everything and is
// rejected. The mask depends only on (s.Seed, s.Step, stream, element index);
// it is kept from the forward pass for the backward pass, dx = dy·mask/(1−p).
//
// Unlike Gorgonia's Dropout, whose backward divides by p (so p = 0 zeroes the
// gradient) and infers the mask from non-zero outputs.
func Dropout(x *G.Node, p float64, s *Stochastic, stream uint64) (*G.Node, error) {
	if err := checkDrop("Dropout", x, p, s); err != nil {
		return nil, err
	}
	return G.ApplyOp(&dropOp{opBase: newOpBase(), name: "Dropout", rank: x.Dims(), p: p, s: s, stream: stream}, x)
}

// DropPath is stochastic depth (timm's drop_path with scale_by_keep): x holds
// batch samples along its first axis, e.g. (batch·T, D) with each sample's T
// token rows together; each sample is kept whole with probability 1−p and
// scaled by 1/(1−p), or zeroed. It is the identity (a copy) in evaluation
// (s.Training false) or when p = 0. p must be in [0, 1). The per-sample mask
// depends only on (s.Seed, s.Step, stream, sample index) and is kept for the
// backward pass.
func DropPath(x *G.Node, p float64, batch int, s *Stochastic, stream uint64) (*G.Node, error) {
	if err := checkDrop("DropPath", x, p, s); err != nil {
		return nil, err
	}
	if batch <= 0 || x.Shape()[0]%batch != 0 {
		return nil, fmt.Errorf("DropPath: first axis of x %v is not a multiple of batch %d", x.Shape(), batch)
	}
	return G.ApplyOp(&dropOp{opBase: newOpBase(), name: "DropPath", rank: x.Dims(), p: p, batch: batch, s: s, stream: stream}, x)
}

func checkDrop(name string, x *G.Node, p float64, s *Stochastic) error {
	if s == nil {
		return fmt.Errorf("%s: nil *Stochastic", name)
	}
	if !(p >= 0 && p < 1) {
		return fmt.Errorf("%s: p must be in [0,1), got %v", name, p)
	}
	if x.Dims() < 1 {
		return fmt.Errorf("%s: want a tensor of rank ≥ 1, got shape %v", name, x.Shape())
	}
	return nil
}

// dropOp is Dropout (batch == 0: one draw per element) or DropPath (one draw
// per sample).
type dropOp struct {
	opBase
	name   string
	rank   int
	p      float64
	batch  int
	s      *Stochastic
	stream uint64
	out    buffer

	// Saved by the last forward run for the backward pass.
	active bool   // a mask was applied (training and p > 0)
	keep   []bool // per element (Dropout) or per sample (DropPath)
}

var _ G.SDOp = (*dropOp)(nil)

func (op *dropOp) Arity() int    { return 1 }
func (op *dropOp) Type() hm.Type { return fnType(op.rank, op.rank) }
func (op *dropOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeLike(op.name, in, 0)
}

func (op *dropOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses(op.name, vs, 1)
	if err != nil {
		return nil, err
	}
	x := in[0]
	y := op.out.get(x.Dtype(), x.Shape()...)
	op.active = op.s.Training && op.p > 0
	if !op.active {
		copy32or64(y, x)
		return y, nil
	}
	n := x.Shape().TotalSize()
	draws, group := n, 1 // Dropout: one draw per element
	if op.batch > 0 {
		if x.Shape()[0]%op.batch != 0 {
			return nil, fmt.Errorf("%s: first axis of x %v is not a multiple of batch %d", op.name, x.Shape(), op.batch)
		}
		draws, group = op.batch, n/op.batch
	}
	if len(op.keep) != draws {
		op.keep = make([]bool, draws)
	}
	if r := len(op.s.Rows); r > 0 && draws%r != 0 {
		return nil, fmt.Errorf("%s: %d mask draws do not split over the %d rows of Stochastic.Rows", op.name, draws, r)
	}
	keep := 1 - op.p
	key := maskKey(op.s.Seed, op.s.Step, op.stream)
	parallelForGrain(len(op.keep), 1<<12, func(lo, hi int) { // each draw a function of its position
		for i := lo; i < hi; i++ {
			op.keep[i] = keepDraw(key, op.s.position(i, draws), keep)
		}
	})
	switch x.Dtype() {
	case tensor.Float32:
		applyMask(data[float32](y), data[float32](x), op.keep, group, float32(1/keep))
	default:
		applyMask(data[float64](y), data[float64](x), op.keep, group, 1/keep)
	}
	return y, nil
}

// applyMask: dst[i] = src[i]·scale where keep[i/group], else 0.
func applyMask[T Float](dst, src []T, keep []bool, group int, scale T) {
	parallelForGrain(len(keep)*group, 1<<14, func(lo, hi int) { // elementwise, split by element
		for i := lo; i < hi; {
			g := i / group
			end := min(hi, (g+1)*group)
			d, s := dst[i:end], src[i:end]
			i = end
			if !keep[g] {
				clear(d)
				continue
			}
			for j, v := range s {
				d[j] = v * scale
			}
		}
	})
}

// copy32or64 copies src into dst, two dense tensors of one float dtype and size.
func copy32or64(dst, src *tensor.Dense) {
	switch src.Dtype() {
	case tensor.Float32:
		copy(data[float32](dst), data[float32](src))
	default:
		copy(data[float64](dst), data[float64](src))
	}
}

func (op *dropOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "%s(p=%v,batch=%d,stream=%d,s=%p,rank=%d)", op.name, op.p, op.batch, op.stream, op.s, op.rank)
	op.writeID(h)
}
func (op *dropOp) Hashcode() uint32     { return hashOf(op) }
func (op *dropOp) String() string       { return fmt.Sprintf("%s(%v)", op.name, op.p) }
func (op *dropOp) DiffWRT(n int) []bool { return []bool{true} }

func (op *dropOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	// The output is an input of the gradient op only to order it after the
	// forward op, whose saved mask it reads.
	dx, err := G.ApplyOp(&dropGradOp{opBase: newOpBase(), fwd: op}, output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

// dropGradOp maps (y, dy) to dx = dy·mask/(1−p), or dy when the forward run
// was the identity.
type dropGradOp struct {
	opBase
	fwd *dropOp
	out buffer
}

func (op *dropGradOp) Arity() int    { return 2 }
func (op *dropGradOp) Type() hm.Type { return fnType(op.fwd.rank, op.fwd.rank, op.fwd.rank) }
func (op *dropGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeLike(op.String(), in, 1)
}

func (op *dropGradOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses(op.String(), vs, 2)
	if err != nil {
		return nil, err
	}
	f, dy := op.fwd, in[1]
	dx := op.out.get(dy.Dtype(), dy.Shape()...)
	if !f.active {
		copy32or64(dx, dy)
		return dx, nil
	}
	n := dy.Shape().TotalSize()
	if len(f.keep) == 0 || n%len(f.keep) != 0 {
		return nil, fmt.Errorf("%s: gradient %v does not match the forward mask of %d draws", op, dy.Shape(), len(f.keep))
	}
	keep := 1 - f.p
	switch dy.Dtype() {
	case tensor.Float32:
		applyMask(data[float32](dx), data[float32](dy), f.keep, n/len(f.keep), float32(1/keep))
	default:
		applyMask(data[float64](dx), data[float64](dy), f.keep, n/len(f.keep), 1/keep)
	}
	return dx, nil
}

func (op *dropGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "%sGrad(fwd#%d)", op.fwd.name, op.fwd.id)
	op.writeID(h)
}
func (op *dropGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *dropGradOp) String() string   { return op.fwd.name + "Grad" }
