package graph

import (
	"fmt"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Add returns a + b for two tensors of the same shape: the residual
// connection. Its gradient passes the upstream gradient to both inputs.
func Add(a, b *G.Node) (*G.Node, error) {
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("Add: shapes %v and %v differ", a.Shape(), b.Shape())
	}
	return G.ApplyOp(&addOp{newElemOp("Add", "", 2, a.Dims())}, a, b)
}

type addOp struct{ elemOp }

var _ G.SDOp = (*addOp)(nil)

func (op *addOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := op.inputs(vs)
	if err != nil {
		return nil, err
	}
	return addInto(&op.out, in[0], in[1]), nil
}

// addInto returns a + b in the buffer out, split over the cores in
// elementwise chunks (the same bits at any core count).
func addInto(out *buffer, a, b *tensor.Dense) *tensor.Dense {
	y := out.get(a.Dtype(), a.Shape()...)
	switch a.Dtype() {
	case tensor.Float32:
		add(data[float32](y), data[float32](a), data[float32](b))
	default:
		add(data[float64](y), data[float64](a), data[float64](b))
	}
	return y
}

func add[T Float](dst, a, b []T) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	parallelForGrain(len(a), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = a[i] + b[i]
		}
	})
}

func (op *addOp) DiffWRT(n int) []bool { return []bool{true, true} }
func (op *addOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad, grad}, nil
}

// Residual returns x + h, the residual sum of a pre-norm block whose branch
// h starts at norm = LayerNorm(x): its value is [Add]'s, bit for bit. It
// differs in the backward pass only in where x's two gradients are summed.
// With Add, x feeds both the LayerNorm and the sum, so Gorgonia adds the two
// gradients with a node of its own, one serial pass at every fork. Residual
// instead hands the sum's gradient to the LayerNorm, whose dx kernel adds it
// row by row on every core, with the same single float32 addition per
// element: the gradients are bit-identical to Add's, and the backward tape
// holds no gradient adds. Each LayerNorm can close one Residual. With
// Recompute the backward pass computes the sum again where it reads it
// (the next LayerNorm's gradient), from x and h as it reads them (h again
// too when its op has Recompute).
func Residual(x, norm, h *G.Node, opts ...OpOption) (*G.Node, error) {
	if x == nil || norm == nil || h == nil {
		return nil, fmt.Errorf("Residual: x, norm and h must all be given")
	}
	ln, ok := norm.Op().(*layerNormOp)
	if !ok || ln.x != x {
		return nil, fmt.Errorf("Residual: norm must be a LayerNorm of x, got %v", norm.Op())
	}
	if ln.fork {
		return nil, fmt.Errorf("Residual: the LayerNorm %v already closes a residual", norm.Name())
	}
	if !x.Shape().Eq(h.Shape()) {
		return nil, fmt.Errorf("Residual: shapes %v and %v differ", x.Shape(), h.Shape())
	}
	op := &residualOp{addOp: addOp{newElemOp("Residual", "", 2, x.Dims())}, ln: ln}
	op.recompute = recomputes(opts)
	y, err := G.ApplyOp(op, x, h)
	if err != nil {
		return nil, err
	}
	ln.fork = true
	return y, nil
}

// residualOp is addOp whose gradient with respect to x goes through the
// LayerNorm ln (see Residual).
type residualOp struct {
	addOp
	ln *layerNormOp
	recomputeMark
}

// DiffWRT: Gorgonia sends no gradient to x through the sum; x gets it from
// the LayerNorm's dx op, which adds this sum's gradient.
func (op *residualOp) DiffWRT(n int) []bool { return []bool{false, true} }

func (op *residualOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	op.ln.next = grad
	return G.Nodes{nil, grad}, nil
}

// GorgoniaAdds counts Gorgonia's own elementwise additions in g. Our ops do
// their additions inside their kernels, so in a graph built from them these
// are the nodes with which Gorgonia's symbolic differentiation sums the
// gradients arriving at a fork, one single-threaded pass each; a ViT built
// with [Residual] has none.
func GorgoniaAdds(g *G.ExprGraph) int {
	n := 0
	for _, node := range g.AllNodes() {
		if op := node.Op(); op != nil && fmt.Sprintf("%T", op) == "gorgonia.elemBinOp" && strings.HasPrefix(op.String(), "+ ") {
			n++
		}
	}
	return n
}
