package graph

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LogSoftmax returns log(softmax(x)) over the last axis of x (M, C) (any rank
// ≥ 1 works: every run of C elements along the last axis is a row), computed
// stably as x − max − log Σ exp(x − max), with float64 row sums. Its backward
// pass, dx = dy − exp(y)·Σ_j dy_j, reads the output y through a graph edge.
//
// It does not use Gorgonia's LogSoftMax, whose op hashes like SoftMax's, so
// that SoftMax(x) and LogSoftMax(x) of one node are merged into one node.
func LogSoftmax(x *G.Node) (*G.Node, error) {
	if x.Dims() < 1 || x.Shape()[x.Dims()-1] == 0 {
		return nil, fmt.Errorf("LogSoftmax: want (M, C) with C > 0, got shape %v", x.Shape())
	}
	return G.ApplyOp(&logSoftmaxOp{newElemOp("LogSoftmax", "", 1, x.Dims())}, x)
}

type logSoftmaxOp struct{ elemOp }

var _ G.SDOp = (*logSoftmaxOp)(nil)

func (op *logSoftmaxOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := op.inputs(vs)
	if err != nil {
		return nil, err
	}
	x := in[0]
	c := x.Shape()[x.Dims()-1]
	y := op.out.get(x.Dtype(), x.Shape()...)
	switch x.Dtype() {
	case tensor.Float32:
		logSoftmaxRows(data[float32](y), data[float32](x), c)
	default:
		logSoftmaxRows(data[float64](y), data[float64](x), c)
	}
	return y, nil
}

// rowLSE returns max(row) and log Σ exp(row − max) + max.
func rowLSE[T Float](row []T) float64 {
	mx := row[0]
	for _, v := range row[1:] {
		if v > mx {
			mx = v
		}
	}
	m := float64(mx)
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}

// logSoftmaxRows: y = x − logsumexp(x) per row of c elements.
func logSoftmaxRows[T Float](y, x []T, c int) {
	parallelFor(len(x)/c, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, out := x[i*c:(i+1)*c], y[i*c:(i+1)*c]
			lse := rowLSE(row)
			for j, v := range row {
				out[j] = T(float64(v) - lse)
			}
		}
	})
}

func (op *logSoftmaxOp) DiffWRT(n int) []bool { return []bool{true} }

func (op *logSoftmaxOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&logSoftmaxGradOp{newElemOp("LogSoftmaxGrad", "", 2, op.rank)}, output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

// logSoftmaxGradOp maps (y, dy) to dx = dy − exp(y)·Σ_j dy_j per row.
type logSoftmaxGradOp struct{ elemOp }

func (op *logSoftmaxGradOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := op.inputs(vs) // (y, dy)
	if err != nil {
		return nil, err
	}
	y, dy := in[0], in[1]
	c := y.Shape()[y.Dims()-1]
	dx := op.out.get(y.Dtype(), y.Shape()...)
	switch y.Dtype() {
	case tensor.Float32:
		logSoftmaxBackward(data[float32](dx), data[float32](y), data[float32](dy), c)
	default:
		logSoftmaxBackward(data[float64](dx), data[float64](y), data[float64](dy), c)
	}
	return dx, nil
}

// logSoftmaxBackward: dx = dy − exp(y)·Σ dy per row of c elements.
func logSoftmaxBackward[T Float](dx, y, dy []T, c int) {
	parallelFor(len(y)/c, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			yr, gr, out := y[i*c:(i+1)*c], dy[i*c:(i+1)*c], dx[i*c:(i+1)*c]
			var s float64
			for _, g := range gr {
				s += float64(g)
			}
			for j, v := range yr {
				out[j] = T(float64(gr[j]) - math.Exp(float64(v))*s)
			}
		}
	})
}

// SoftmaxCrossEntropy is the soft-target cross entropy of logits z (B, C)
// against targets t (B, C), a probability matrix whose rows sum to 1 (one-hot
// labels, label smoothing, Mixup/CutMix mixtures):
//
//	loss = (1/B)·Σ_b −Σ_c t[b,c]·log_softmax(z[b])[c]
//
// returned as a scalar node. Only the logits are differentiated:
//
//	dz = (softmax(z)·Σ_c t[b,c] − t)·dloss/B,
//
// which is (softmax(z) − t)·dloss/B for rows that sum to 1; the
// probabilities are kept from the forward pass. It does not use Gorgonia's
// SoftMax/LogSoftMax.
func SoftmaxCrossEntropy(logits, targets *G.Node) (*G.Node, error) {
	return SoftmaxCrossEntropyT(logits, targets, 1)
}

// SoftmaxCrossEntropyT is [SoftmaxCrossEntropy] of the logits divided by a
// temperature τ > 0, CE(z/τ, t), as knowledge distillation softens both
// distributions (DeiT's soft distillation):
//
//	dz = (softmax(z/τ)·Σ_c t[b,c] − t)·dloss/(B·τ).
//
// The logits node itself keeps its values (no scaled copy is written into
// it).
func SoftmaxCrossEntropyT(logits, targets *G.Node, tau float64) (*G.Node, error) {
	if !(tau > 0) || math.IsInf(tau, 1) {
		return nil, fmt.Errorf("SoftmaxCrossEntropy: temperature must be positive and finite, got %v", tau)
	}
	if logits == nil || targets == nil {
		return nil, fmt.Errorf("SoftmaxCrossEntropy: logits and targets must both be given")
	}
	if logits.Dims() != 2 || logits.Shape()[0] == 0 || logits.Shape()[1] == 0 {
		return nil, fmt.Errorf("SoftmaxCrossEntropy: want logits (B, C) with B, C > 0, got %v", logits.Shape())
	}
	if !targets.Shape().Eq(logits.Shape()) {
		return nil, fmt.Errorf("SoftmaxCrossEntropy: targets %v do not match logits %v", targets.Shape(), logits.Shape())
	}
	return G.ApplyOp(&softmaxCEOp{opBase: newOpBase(), tau: tau}, logits, targets)
}

type softmaxCEOp struct {
	opBase
	tau float64 // temperature: the logits are divided by it (1: as they are)

	// Saved by the last forward run for the backward pass.
	prob    buffer    // softmax(z), (B, C)
	rowMass []float64 // Σ_c t[b,c]
	rowLoss []float64
}

var _ G.SDOp = (*softmaxCEOp)(nil)

func (op *softmaxCEOp) Arity() int    { return 2 }
func (op *softmaxCEOp) Type() hm.Type { return fnType(2, 2, 0) }
func (op *softmaxCEOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op *softmaxCEOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("SoftmaxCrossEntropy", vs, 2)
	if err != nil {
		return nil, err
	}
	z, t := in[0], in[1]
	if z.Dims() != 2 || !z.Shape().Eq(t.Shape()) {
		return nil, fmt.Errorf("SoftmaxCrossEntropy: want logits and targets of one (B, C) shape, got %v and %v", z.Shape(), t.Shape())
	}
	b, c := z.Shape()[0], z.Shape()[1]
	if len(op.rowLoss) != b {
		op.rowLoss, op.rowMass = make([]float64, b), make([]float64, b)
	}
	p := op.prob.get(z.Dtype(), b, c)
	switch z.Dtype() {
	case tensor.Float32:
		softmaxCE(data[float32](p), data[float32](z), data[float32](t), op.rowLoss, op.rowMass, c, op.tau)
	default:
		softmaxCE(data[float64](p), data[float64](z), data[float64](t), op.rowLoss, op.rowMass, c, op.tau)
	}
	var loss float64
	for _, l := range op.rowLoss {
		loss += l
	}
	return newScalar(z.Dtype(), loss/float64(b)), nil
}

// softmaxCE fills p = softmax(z/τ), loss[b] = Σ_c t·(lse − z/τ) and
// mass[b] = Σ_c t for every row. At τ = 1 the logits are read as they are;
// otherwise z/τ is written into p first and read from there.
func softmaxCE[T Float](p, z, t []T, loss, mass []float64, c int, tau float64) {
	parallelFor(len(loss), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			zr, tr, pr := z[i*c:(i+1)*c], t[i*c:(i+1)*c], p[i*c:(i+1)*c]
			if tau != 1 {
				for j, v := range zr {
					pr[j] = T(float64(v) / tau)
				}
				zr = pr
			}
			lse := rowLSE(zr)
			var l, m float64
			for j, v := range zr {
				ls := float64(v) - lse
				tj := float64(tr[j])
				if tj != 0 {
					l -= tj * ls
					m += tj
				}
				pr[j] = T(math.Exp(ls))
			}
			loss[i], mass[i] = l, m
		}
	})
}

func (op *softmaxCEOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "SoftmaxCrossEntropy(τ=%v)", op.tau)
	op.writeID(h)
}
func (op *softmaxCEOp) Hashcode() uint32     { return hashOf(op) }
func (op *softmaxCEOp) String() string       { return "SoftmaxCrossEntropy" }
func (op *softmaxCEOp) DiffWRT(n int) []bool { return []bool{true, false} }

func (op *softmaxCEOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	// The loss node is an input only to order the gradient op after the
	// forward op, whose probabilities it reads.
	dz, err := G.ApplyOp(&softmaxCEGradOp{opBase: newOpBase(), fwd: op}, inputs[1], output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, nil}, nil
}

// softmaxCEGradOp maps (t, loss, dloss) to dz = (p·Σt − t)·dloss/(B·τ).
type softmaxCEGradOp struct {
	opBase
	fwd *softmaxCEOp
	out buffer
}

func (op *softmaxCEGradOp) Arity() int    { return 3 }
func (op *softmaxCEGradOp) Type() hm.Type { return fnType(2, 0, 0, 2) }
func (op *softmaxCEGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeLike("SoftmaxCrossEntropyGrad", in, 0)
}

func (op *softmaxCEGradOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 3 {
		return nil, fmt.Errorf("SoftmaxCrossEntropyGrad: want 3 inputs, got %d", len(vs))
	}
	t, err := dense("SoftmaxCrossEntropyGrad", vs[0])
	if err != nil {
		return nil, err
	}
	g, err := scalarValue("SoftmaxCrossEntropyGrad", vs[2])
	if err != nil {
		return nil, err
	}
	p := op.fwd.prob.t
	if p == nil || !p.Shape().Eq(t.Shape()) || p.Dtype() != t.Dtype() {
		return nil, fmt.Errorf("SoftmaxCrossEntropyGrad: targets %v do not match the forward's probabilities", t.Shape())
	}
	b, c := t.Shape()[0], t.Shape()[1]
	dz := op.out.get(t.Dtype(), b, c)
	scale := g / (float64(b) * op.fwd.tau)
	switch t.Dtype() {
	case tensor.Float32:
		softmaxCEBackward(data[float32](dz), data[float32](p), data[float32](t), op.fwd.rowMass, scale, c)
	default:
		softmaxCEBackward(data[float64](dz), data[float64](p), data[float64](t), op.fwd.rowMass, scale, c)
	}
	return dz, nil
}

// softmaxCEBackward: dz = (p·mass − t)·scale per row.
func softmaxCEBackward[T Float](dz, p, t []T, mass []float64, scale float64, c int) {
	for i, m := range mass {
		pr, tr, out := p[i*c:(i+1)*c], t[i*c:(i+1)*c], dz[i*c:(i+1)*c]
		for j, v := range pr {
			out[j] = T((float64(v)*m - float64(tr[j])) * scale)
		}
	}
}

func (op *softmaxCEGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "SoftmaxCrossEntropyGrad(fwd#%d)", op.fwd.id)
	op.writeID(h)
}
func (op *softmaxCEGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *softmaxCEGradOp) String() string   { return "SoftmaxCrossEntropyGrad" }
