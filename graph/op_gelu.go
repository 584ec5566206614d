package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/bufpool"
)

// GELUApprox selects the form of GELU, like PyTorch's approximate argument.
type GELUApprox int

const (
	// GELUExact is 0.5·x·(1 + erf(x/√2)), PyTorch's nn.GELU() default and
	// what timm's ViTs use.
	GELUExact GELUApprox = iota
	// GELUTanh is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))),
	// nn.GELU(approximate="tanh").
	GELUTanh
)

// String returns PyTorch's name for the form: "none" or "tanh".
func (a GELUApprox) String() string {
	switch a {
	case GELUExact:
		return "none"
	case GELUTanh:
		return "tanh"
	}
	return fmt.Sprintf("GELUApprox(%d)", int(a))
}

// ParseGELUApprox reads PyTorch's approximate argument: "none" (or "exact",
// or "") for GELUExact, "tanh" for GELUTanh.
func ParseGELUApprox(s string) (GELUApprox, error) {
	switch s {
	case "", "none", "exact":
		return GELUExact, nil
	case "tanh":
		return GELUTanh, nil
	}
	return 0, fmt.Errorf("GELU approximation: want none or tanh, got %q", s)
}

// GELU applies the Gaussian error linear unit element-wise to x of any rank
// ≥ 1. Its gradient op reads (x, dy). StoreBF16 keeps the output as
// bfloat16 words, for a bfloat16 Linear that reads it (an MLP's fc2); the
// gradient is unchanged, since it reads x.
func GELU(x *G.Node, approx GELUApprox, opts ...OpOption) (*G.Node, error) {
	if approx != GELUExact && approx != GELUTanh {
		return nil, fmt.Errorf("GELU: unknown approximation %v", approx)
	}
	if x.Dims() < 1 {
		return nil, fmt.Errorf("GELU: want a tensor of rank ≥ 1, got shape %v", x.Shape())
	}
	words, err := storesBF16("GELU", x.Dtype(), opts)
	if err != nil {
		return nil, err
	}
	param := approx.String()
	if words {
		param += ",bf16 words"
	}
	return G.ApplyOp(&geluOp{elemOp: newElemOp("GELU", param, 1, x.Dims()), approx: approx, words: words}, x)
}

type geluOp struct {
	elemOp
	approx GELUApprox
	words  bool // the output is bfloat16 words (StoreBF16)
}

func (op *geluOp) Type() hm.Type {
	if !op.words {
		return op.elemOp.Type()
	}
	return fnTypeWords(1, op.rank, op.rank)
}

// geluWordsChunk is the float32 values a goroutine computes before it
// rounds them to words: small enough to stay in L1.
const geluWordsChunk = 2048

// geluBufs holds geluWords' float32 buffers.
var geluBufs bufpool.Pool[float32]

// geluToWords sets dst to the words of GELU(src) in the given form, over
// the cores.
func geluToWords(approx GELUApprox, dst []uint16, src []float32) {
	f := geluForward32
	if approx == GELUTanh {
		f = geluTanhForward32
	}
	geluParallel(len(src), func(lo, hi int) { geluWords(f, dst[lo:hi], src[lo:hi]) })
}

// geluWords sets dst to the words of f(src) (kernels.WordsBF16), geluWordsChunk
// values at a time through a float32 buffer.
func geluWords(f func(dst, src []float32), dst []uint16, src []float32) {
	p := geluBufs.Get(geluWordsChunk) // f is not known here, so a local array would be allocated per call
	defer geluBufs.Put(p)
	buf := *p
	for lo := 0; lo < len(src); lo += geluWordsChunk {
		hi := min(lo+geluWordsChunk, len(src))
		f(buf[:hi-lo], src[lo:hi])
		kernels.WordsBF16(dst[lo:hi], buf[:hi-lo])
	}
}

var _ G.SDOp = (*geluOp)(nil)

func (op *geluOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := op.inputs(vs)
	if err != nil {
		return nil, err
	}
	x := in[0]
	if op.words {
		if x.Dtype() != tensor.Float32 {
			return nil, fmt.Errorf("GELU: bfloat16 words need a float32 input, got %v", x.Dtype())
		}
		y := op.out.get(tensor.Uint16, x.Shape()...)
		geluToWords(op.approx, y.Data().([]uint16), data[float32](x))
		return y, nil
	}
	y := op.out.get(x.Dtype(), x.Shape()...)
	switch x.Dtype() {
	case tensor.Float32:
		src, dst := data[float32](x), data[float32](y)
		f := geluForward32
		if op.approx == GELUTanh {
			f = geluTanhForward32
		}
		geluParallel(len(src), func(lo, hi int) { f(dst[lo:hi], src[lo:hi]) })
	default:
		src, dst := data[float64](x), data[float64](y)
		f := geluExact[float64]
		if op.approx == GELUTanh {
			f = geluTanh[float64]
		}
		geluParallel(len(src), func(lo, hi int) { f(dst[lo:hi], src[lo:hi]) })
	}
	return y, nil
}

// geluChunk is the element count below which a GELU kernel runs inline.
const geluChunk = 1 << 14

// geluParallel runs f over [0, n) in parallel when n is large enough to
// pay for the goroutines.
func geluParallel(n int, f func(lo, hi int)) {
	if n < geluChunk {
		f(0, n)
		return
	}
	parallelFor(n, f)
}

func (op *geluOp) DiffWRT(n int) []bool { return []bool{true} }

func (op *geluOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&geluGradOp{elemOp: newElemOp("GELUGrad", op.approx.String(), 2, op.rank), approx: op.approx}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

// geluGradOp maps (x, dy) to dx = dy·GELU′(x).
type geluGradOp struct {
	elemOp
	approx GELUApprox
}

func (op *geluGradOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := op.inputs(vs) // (x, dy)
	if err != nil {
		return nil, err
	}
	x, dy := in[0], in[1]
	dx := op.out.get(x.Dtype(), x.Shape()...)
	switch x.Dtype() {
	case tensor.Float32:
		xs, gs, ds := data[float32](x), data[float32](dy), data[float32](dx)
		f := geluBackward32
		if op.approx == GELUTanh {
			f = geluTanhBackward32
		}
		geluParallel(len(xs), func(lo, hi int) { f(ds[lo:hi], xs[lo:hi], gs[lo:hi]) })
	default:
		xs, gs, ds := data[float64](x), data[float64](dy), data[float64](dx)
		f := geluExactGrad[float64]
		if op.approx == GELUTanh {
			f = geluTanhGrad[float64]
		}
		geluParallel(len(xs), func(lo, hi int) { f(ds[lo:hi], xs[lo:hi], gs[lo:hi]) })
	}
	return dx, nil
}

// The float32 entry points; vectorised kernels replace their bodies.

// geluForward32: dst = GELU(src), exact erf form.
func geluForward32(dst, src []float32) { kernels.GELU(dst, src) }

// geluBackward32: dx = dy·GELU′(x), exact erf form.
func geluBackward32(dx, x, dy []float32) { kernels.GELUBackward(dx, x, dy) }

// geluTanhForward32: dst = GELU(src), tanh form.
func geluTanhForward32(dst, src []float32) { geluTanh(dst, src) }

// geluTanhBackward32: dx = dy·GELU′(x), tanh form.
func geluTanhBackward32(dx, x, dy []float32) { geluTanhGrad(dx, x, dy) }

const (
	invSqrt2    = 1 / math.Sqrt2
	invSqrt2Pi  = 0.3989422804014327 // 1/√(2π)
	sqrt2OverPi = 0.7978845608028654 // √(2/π)
	geluCoef    = 0.044715
)

// geluExact: dst = 0.5·x·(1 + erf(x/√2)), computed in float64.
func geluExact[T Float](dst, src []T) {
	for i, v := range src {
		x := float64(v)
		dst[i] = T(0.5 * x * (1 + math.Erf(x*invSqrt2)))
	}
}

// geluExactGrad: dx = dy·(Φ(x) + x·φ(x)).
func geluExactGrad[T Float](dx, x, dy []T) {
	for i, v := range x {
		xf := float64(v)
		cdf := 0.5 * (1 + math.Erf(xf*invSqrt2))
		pdf := invSqrt2Pi * math.Exp(-0.5*xf*xf)
		dx[i] = T(float64(dy[i]) * (cdf + xf*pdf))
	}
}

// geluTanh: dst = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
func geluTanh[T Float](dst, src []T) {
	for i, v := range src {
		x := float64(v)
		dst[i] = T(0.5 * x * (1 + math.Tanh(sqrt2OverPi*(x+geluCoef*x*x*x))))
	}
}

// geluTanhGrad: dx = dy·(0.5·(1+t) + 0.5·x·(1−t²)·√(2/π)·(1 + 3·0.044715·x²)).
func geluTanhGrad[T Float](dx, x, dy []T) {
	for i, v := range x {
		xf := float64(v)
		t := math.Tanh(sqrt2OverPi * (xf + geluCoef*xf*xf*xf))
		d := 0.5*(1+t) + 0.5*xf*(1-t*t)*sqrt2OverPi*(1+3*geluCoef*xf*xf)
		dx[i] = T(float64(dy[i]) * d)
	}
}
